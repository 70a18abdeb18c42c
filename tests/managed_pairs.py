"""Compares the managed frames of profcpu's stacks with the runtime's own.

Usage: managed_pairs.py RUNTIME_STACKS FOLDED

RUNTIME_STACKS is what tests/runtime_stacks prints: the stacks the .NET
runtime's sampler walked itself. Every caller -> callee pair of managed
frames in them really happened. For each sample of FOLDED (profcpu's folded
stacks) with two managed frames or more, the pairs of adjacent managed
frames (native frames between them left out, as the runtime's walk leaves
them out) are looked up among the runtime's. Prints the samples checked, the
share holding a pair the runtime never showed, the share holding such a
pair that profcpu shows REPEATED times or more, and the most common such
pairs. Interop frames are left out: the runtime's walk names P/Invoke stubs
otherwise, or not at all.
"""
import collections
import re
import sys

# A pair the runtime never showed in this many of profcpu's samples is no
# chance miss of the runtime's sampler but what the walk does.
REPEATED = 3


def method(frame):
    """A frame as Namespace.Type.Method, from either naming: profcpu's
    Assembly!Namespace.Type::Method or TraceEvent's Namespace.Type.Method(args),
    generic arguments left out."""
    frame = re.sub(r"\(.*$", "", frame)  # TraceEvent's arguments hold "!!0"
    frame = frame.split("!", 1)[1] if "!" in frame else frame
    frame = frame.replace("::", ".")
    while True:
        shorter = re.sub(r"\[[^\[\]]*\]", "", frame)
        if shorter == frame:
            return frame.strip()
        frame = shorter


def is_interop(frame):
    return "Interop+" in frame or "IL_STUB" in frame or "PInvoke" in frame


def pairs(frames):
    return list(zip(frames, frames[1:]))


def main(runtime_path, folded_path):
    seen = set()
    for line in open(runtime_path):
        stack, _ = line.rstrip("\n").rsplit("\t", 1)
        seen.update(pairs([method(f) for f in stack.split(";") if f and f != "?"]))
    checked = unseen = 0
    unseen_pairs = collections.Counter()
    for line in open(folded_path):
        stack, count = line.rsplit(" ", 1)
        frames = [method(f) for f in stack.split(";") if "!" in f and not is_interop(f)]
        if len(frames) < 2:
            continue
        checked += int(count)
        missing = [pair for pair in pairs(frames) if pair not in seen]
        if missing:
            unseen += int(count)
            unseen_pairs.update({pair: int(count) for pair in missing})
    repeated = collections.Counter()
    for line in open(folded_path):
        stack, count = line.rsplit(" ", 1)
        frames = [method(f) for f in stack.split(";") if "!" in f and not is_interop(f)]
        if any(unseen_pairs[pair] >= REPEATED for pair in pairs(frames)):
            repeated["samples"] += int(count)
    print(f"checked {checked}")
    print(f"unseen {100 * unseen / max(checked, 1):.1f}")
    print(f"unseen-repeated {100 * repeated['samples'] / max(checked, 1):.1f}")
    for (caller, callee), count in unseen_pairs.most_common(8):
        print(f"  {count} {caller} -> {callee}")


if __name__ == "__main__":
    main(*sys.argv[1:])
