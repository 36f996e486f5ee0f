#!/bin/bash
printf "1\n9\n10\n100\n" | cmp -s - sorted.txt
