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
Prints both sample counts; exits 1 when the counts or the stacks (below the
root, which is the thread's comm there and the process name in ours) differ.
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


def below_root(stacks, rename=lambda name: name):
    result = collections.Counter()
    for stack, count in stacks.items():
        result[tuple(rename(name) for name in stack[1:])] += count
    return result


theirs, unrecognized = collapse(sys.argv[1])
ours = folded(sys.argv[2])
print(f"stackcollapse-perf rules: {sum(theirs.values())} samples, {unrecognized} unrecognized lines")
print(f"folded_stacks.out: {sum(ours.values())} samples")
their_stacks, our_stacks = below_root(theirs), below_root(ours, tidy)
if unrecognized or sum(theirs.values()) != sum(ours.values()) or their_stacks != our_stacks:
    for stack in list((their_stacks - our_stacks).keys())[:3]:
        print("only in perf_script.out:", ";".join(stack))
    for stack in list((our_stacks - their_stacks).keys())[:3]:
        print("only in folded_stacks.out:", ";".join(stack))
    sys.exit(1)
print(f"same {len(our_stacks)} stacks")
