#!/bin/bash
grep -qx ok report.txt
