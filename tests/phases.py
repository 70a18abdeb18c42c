"""Checks that samples in dynamic methods carry the name valid at their time.

    phases.py APP_OUTPUT PERF_SCRIPT

APP_OUTPUT holds DynReuse's "phase N START END" lines (CLOCK_MONOTONIC ns);
PERF_SCRIPT is perf script text whose sample times use the same clock. Of the
samples inside phase N (40 ms kept clear of its ends) with a frame
"dynamicClass::PhaseK", prints how many have K == N, per phase and in all
("correct TOTAL PERCENT" on the last line).
"""
import re
import sys

MARGIN = 0.040

phases = []
for line in open(sys.argv[1]):
    parts = line.split()
    if len(parts) == 4 and parts[0] == "phase":
        phases.append((int(parts[1]), int(parts[2]) / 1e9, int(parts[3]) / 1e9))

header = re.compile(r"^\s*\S.*?\s(\d+)/(\d+)\s+\[\d+\]\s+(\d+\.\d+):")
frame = re.compile(r"dynamicClass::Phase(\d+)")
counts = {number: [0, 0] for number, _, _ in phases}
time = None
named = None
for line in open(sys.argv[2], encoding="utf-8", errors="replace"):
    match = header.match(line)
    if match:
        time, named = float(match.group(3)), None
    elif line.startswith("\t") and named is None:
        found = frame.search(line)
        if found:
            named = int(found.group(1))
            for number, start, end in phases:
                if start + MARGIN <= time <= end - MARGIN:
                    counts[number][0] += named == number
                    counts[number][1] += 1
for number, (right, total) in sorted(counts.items()):
    print(f"phase {number}: {right} of {total} samples named Phase{number}")
right = sum(c[0] for c in counts.values())
total = sum(c[1] for c in counts.values())
print(f"correct {total} {100.0 * right / total if total else 0:.1f}")
