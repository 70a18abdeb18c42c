#!/usr/bin/env python3
"""Reads perf script text by the rules of FlameGraph's stackcollapse-perf.pl
and compares its stacks with profcpu's folded_stacks.out.

stackcollapse-perf.pl is not packaged by Debian or npm, so this applies the
rules it uses (written here from its documented behaviour, not copied):
  - a sample header matches  ^(\\S.+?)\\s+(\\d+)/*(\\d+)*\\s+  : the comm
    (spaces become '_') is the stack's root; a line it does not match is
    "Unrecognized" and the sample is lost to the stack before it;
  - a frame matches  ^\\s*(\\w+)\\s*(.+) \\((\\S*)\\)  : address, symbol, module;
    "+0x.." is stripped, "[unknown]" becomes "[module base name]", and its
    generic tidying cuts a name at its first '(' (except "(anonymous
    namespace)" and Go methods), turns ';' into ':' and drops quotes;
  - a blank line ends the sample.
usage: stackcollapse_perf.py PERF_SCRIPT FOLDED
       stackcollapse_perf.py --fold-only PERF_SCRIPT   (- for standard input)
The second form prints perf's stacks as folded lines. Prints both sample counts; exits 1 when the counts differ, a line is not
recognized, or the leaf functions differ. Leaves are compared by their
`Type::Method` (or native name): folded_stacks.out shows .NET frames in their
short form (`assembly!Type::Method`, tiers merged), perf script text keeps the
runtime's full names.
"""
import collections
import re
import sys

HEADER = re.compile(r"^(\S.+?)\s+(\d+)/*(\d+)*\s+")
FRAME = re.compile(r"^\s*(\w+)\s*(.+) \((\S*)\)")


def tidy(name):
    name = name.replace(";", ":")
    if not re.search(r"\.\(.*\)\.", name):
        name = re.sub(r"\((?!anonymous namespace\)).*", "", name)
    # A module with a space ("/memfd:doublemapper (deleted)", .NET's code
    # heap) makes its "(.+) \((\S*)\)" take "(deleted)" as the module and
    # leave "[unknown] (/memfd:doublemapper" as the name, cut here to
    # "[unknown] ": the same frame, with a space stackcollapse leaves in.
    return name.replace('"', "").replace("'", "").rstrip()


def collapse(path):
    stacks, unrecognized = collections.Counter(), 0
    stack, comm = [], None
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line.startswith("#"):
            continue
        if not line:
            if stack:
                stacks[(comm or "",) + tuple(stack)] += 1
            stack, comm = [], None
            continue
        header = HEADER.match(line)
        frame = None if header else FRAME.match(line)
        if header:
            comm = header.group(1).replace(" ", "_")
        elif frame:
            symbol, module = re.sub(r"\+0x[\da-f]+$", "", frame.group(2)), frame.group(3)
            if symbol.startswith("("):
                continue
            if symbol == "[unknown]" and module != "[unknown]":
                symbol = "[" + module.rsplit("/", 1)[-1] + "]"
            stack.insert(0, tidy(symbol))
        else:
            unrecognized += 1
    return stacks, unrecognized


def folded(path):
    stacks = collections.Counter()
    for line in open(path, encoding="utf-8", errors="replace"):
        frames, _, count = line.rstrip("\n").rpartition(" ")
        stacks[tuple(frames.split(";"))] += int(count)
    return stacks


def leaf_functions(stacks):
    """Samples by leaf function: the `Type::Method` of a .NET name without
    generic arguments (the short form shortens those), else the name."""
    leaves = collections.Counter()
    for stack, count in stacks.items():
        leaf = tidy(stack[-1])
        method = re.search(r"([\w.`+<>\[\],]+::[\w.`<>]+)", leaf)
        if method:
            leaf = method.group(1)
            while re.search(r"[\[<][^\[\]<>]*[\]>]", leaf):
                leaf = re.sub(r"[\[<][^\[\]<>]*[\]>]", "", leaf)
        leaves[leaf] += count
    return leaves


if sys.argv[1] == "--fold-only":
    stacks, _ = collapse("/dev/stdin" if sys.argv[2] == "-" else sys.argv[2])
    for stack, count in stacks.items():
        print(f"{';'.join(stack)} {count}")
    sys.exit(0)

theirs, unrecognized = collapse(sys.argv[1])
ours = folded(sys.argv[2])
print(f"stackcollapse-perf rules: {sum(theirs.values())} samples, {unrecognized} unrecognized lines")
print(f"folded_stacks.out: {sum(ours.values())} samples")
their_leaves = leaf_functions(theirs)
our_leaves = leaf_functions(ours)
if unrecognized or sum(theirs.values()) != sum(ours.values()) or their_leaves != our_leaves:
    for leaf, count in (their_leaves - our_leaves).most_common(3):
        print(f"more in perf_script.out: {leaf} ({count})")
    for leaf, count in (our_leaves - their_leaves).most_common(3):
        print(f"more in folded_stacks.out: {leaf} ({count})")
    sys.exit(1)
print(f"same samples by leaf function ({len(our_leaves)} functions)")
