#!/bin/bash
[ "$(tr -d "[:space:]" < total.txt)" = "60" ]
