"""Reads folded stacks ("root;...;leaf COUNT") as a user reads a flame graph.

    folded.py total FILE          samples in FILE
    folded.py share FILE REGEX    % of samples whose stack text matches REGEX
    folded.py count FILE REGEX    samples whose stack text matches REGEX
    folded.py top FILE [N]        the N heaviest stacks with their share
"""
import re
import sys


def load(path):
    stacks = []
    with open(path, encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, 1):
            line = line.rstrip("\n")
            stack, _, count = line.rpartition(" ")
            if not stack or not count.isdigit():
                sys.exit(f"{path}:{number}: not a folded line: {line!r}")
            stacks.append((stack, int(count)))
    return stacks


def main():
    command, path = sys.argv[1], sys.argv[2]
    stacks = load(path)
    total = sum(count for _, count in stacks)
    if command == "total":
        print(total)
    elif command in ("share", "count"):
        pattern = re.compile(sys.argv[3])
        matched = sum(count for stack, count in stacks if pattern.search(stack))
        if command == "count":
            print(matched)
        else:
            print(f"{100.0 * matched / total:.1f}" if total else "0")
    elif command == "top":
        limit = int(sys.argv[3]) if len(sys.argv) > 3 else 10
        for stack, count in sorted(stacks, key=lambda item: -item[1])[:limit]:
            print(f"{100.0 * count / total:5.1f}% {stack}")
    else:
        sys.exit(__doc__)


main()
