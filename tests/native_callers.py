"""Samples of perf script text whose frames pass through given native
libraries, and how many of them carry a managed caller:

    native_callers.py PERF_SCRIPT_TEXT LIBRARY_REGEX CALLER_REGEX

A sample counts when a frame's DSO matches LIBRARY_REGEX; it keeps its
caller when a frame above the library's frames matches CALLER_REGEX in its
symbol or its DSO (a ReadyToRun frame is named after its .dll until its
method is known). Prints "N of M (P%)" and exits 0.
"""
import re
import sys


def samples(path):
    with open(path, encoding="utf-8", errors="replace") as file:
        for block in file.read().split("\n\n"):
            frames = []
            for line in block.splitlines()[1:]:
                match = re.match(r"\t\s*[0-9a-f]+ (.*) \((.*)\)$", line)
                if match:
                    frames.append((match.group(1), match.group(2)))
            if frames:
                yield frames  # leaf first


def main():
    path, library, caller = sys.argv[1], re.compile(sys.argv[2]), re.compile(sys.argv[3])
    total = kept = 0
    for frames in samples(path):
        inside = [i for i, (_, dso) in enumerate(frames) if library.search(dso)]
        if not inside:
            continue
        total += 1
        above = frames[max(inside) + 1:]
        if any(caller.search(symbol) or caller.search(dso) for symbol, dso in above):
            kept += 1
    share = 100.0 * kept / total if total else 0.0
    print(f"{kept} of {total} ({share:.1f}%)")


main()
