#!/usr/bin/env python3
"""Folded stacks ("root;...;leaf COUNT" a line, as folded.py reads them) of
a pprof profile, through `go tool pprof -traces`: the profiles the agent
pushes are read as collect's folded_stacks.out is.

usage: pprof_folded.py PROFILE.pb.gz > FOLDED
"""
import collections
import re
import subprocess
import sys

text = subprocess.run(["go", "tool", "pprof", "-traces", "-sample_index=samples", sys.argv[1]],
                      capture_output=True, text=True, check=True).stdout
stacks = collections.Counter()
for block in text.split("-----------+-------------------------------------------------------")[1:]:
    count, frames = 0, []
    for line in block.splitlines():
        if not line.strip() or re.match(r"^\s*[A-Za-z_]+:\s{2}", line):
            continue  # a sample label (thread:, process:)
        counted = re.match(r"^\s*(\d+)\s+(.*\S)\s*$", line)
        if counted and not frames:
            count = int(counted.group(1))
            frames.append(counted.group(2))
        else:
            frames.append(line.strip())
    if count:
        stacks[";".join(reversed(frames))] += count
for stack, count in stacks.items():
    print(f"{stack} {count}")
