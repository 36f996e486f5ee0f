#!/bin/bash
[ "$(tr -d "[:space:]" < version.txt)" = "1.4.2" ]
