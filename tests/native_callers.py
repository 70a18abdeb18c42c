"""Samples of perf script text whose frames pass through given native
libraries, and how many of them carry a managed caller:

    native_callers.py PERF_SCRIPT_TEXT LIBRARY_REGEX CALLER_REGEX

A sample counts when a frame's DSO matches LIBRARY_REGEX; it keeps its
caller when a managed frame above the library's frames (one named from the
perf map or jitdump, or a ReadyToRun frame named after its .dll until its
method is known) matches CALLER_REGEX in its symbol or its DSO. A native
frame never does: the runtime's shim between managed code and the library
(libSystem.Security.Cryptography.Native.OpenSsl.so) is not the caller
looked for. Prints "N of M (P%)" and exits 0.
"""
import re
import sys

MANAGED_DSO = re.compile(r"(/perf-\d+\.map|/jit-\d+\.dump|\.dll)$")


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
        if any(MANAGED_DSO.search(dso) and (caller.search(symbol) or caller.search(dso))
               for symbol, dso in above):
            kept += 1
    share = 100.0 * kept / total if total else 0.0
    print(f"{kept} of {total} ({share:.1f}%)")


main()
