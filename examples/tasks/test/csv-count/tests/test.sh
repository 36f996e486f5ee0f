#!/bin/bash
[ "$(tr -d "[:space:]" < shipped.txt)" = "3" ]
