#!/bin/bash
# Harbor style: the reward file decides, the exit status is always 0.
mkdir -p /logs/verifier
if [ "$(bash hello.sh)" = "hello" ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
