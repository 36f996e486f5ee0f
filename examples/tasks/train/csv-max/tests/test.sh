#!/bin/bash
[ "$(tr -d "[:space:]" < max.txt)" = "12" ]
