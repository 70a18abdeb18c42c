#!/usr/bin/env python3
"""The tree is the pipeline: each folder of src/ is one stage, a stage uses
another only through the headers that stage offers (its meson.build names
them after "Public headers:"), only in the pipeline's direction, and no two
source files call each other in a loop.

usage: layout.py SOURCE_ROOT BUILD_ROOT
"""
import pathlib
import re
import subprocess
import sys

# Which stages each stage may read from: the arrows of src/meson.build.
ALLOWED = {
    "perf_data": set(),
    "collect": {"perf_data"},
    "profile": {"perf_data"},
    "emit": {"profile", "perf_data"},
    "cli": {"collect", "emit", "profile", "perf_data"},
}

source_root, build_root = map(pathlib.Path, sys.argv[1:3])
src = source_root / "src"
problems = []

stage_of_header = {}
public_headers = {}
for stage in ALLOWED:
    folder = src / stage
    comment = " ".join(line.lstrip("# ").strip()
                       for line in (folder / "meson.build").read_text().splitlines()
                       if line.startswith("#"))
    match = re.search(r"Public headers: ([^.]*(?:\.h[^.]*)*)\.", comment)
    public_headers[stage] = set(re.findall(r"[\w]+\.h", match.group(1))) if match else set()
    for header in folder.glob("*.h"):
        stage_of_header[header.name] = stage

unstaged = [p.name for p in src.glob("*.[ch]") if p.stem != "util"]
if unstaged:
    problems.append(f"files in the flat src/ root: {unstaged}")

for stage in ALLOWED:
    for path in sorted((src / stage).glob("*.[ch]")):
        for header in re.findall(r'^#include "([^"]+)"', path.read_text(), re.M):
            other = stage_of_header.get(header)
            if other is None or other == stage:
                continue
            where = f"src/{stage}/{path.name} includes {header} of {other}"
            if other not in ALLOWED[stage]:
                problems.append(f"{where}: {stage} may not read from {other}")
            elif header not in public_headers[other]:
                problems.append(f"{where}: not one of {other}'s public headers")

# Call loops between the object files of all stages: file A uses a symbol
# that B defines and B one that A defines (directly or around a longer loop).
defined_in, uses = {}, {}
for library in sorted(build_root.glob("src/**/lib*.a")):
    output = subprocess.run(["nm", "-A", "--defined-only", "-g", str(library)],
                            capture_output=True, text=True, check=True).stdout
    for line in output.splitlines():
        name, _, symbol = line.rsplit(" ", 2)
        defined_in[symbol] = pathlib.Path(name.split(":")[-2]).name
    output = subprocess.run(["nm", "-A", "-u", str(library)],
                            capture_output=True, text=True, check=True).stdout
    for line in output.splitlines():
        name, _, symbol = line.rsplit(" ", 2)
        uses.setdefault(pathlib.Path(name.split(":")[-2]).name, set()).add(symbol)
edges = {obj: {defined_in[s] for s in symbols if s in defined_in} - {obj}
         for obj, symbols in uses.items()}

state = {}


def visit(node, path):
    state[node] = "open"
    for next_node in sorted(edges.get(node, ())):
        if state.get(next_node) == "open":
            loop = path[path.index(next_node):] + [next_node]
            problems.append("call loop: " + " -> ".join(loop))
        elif next_node not in state:
            visit(next_node, path + [next_node])
    state[node] = "done"


for node in sorted(edges):
    if node not in state:
        visit(node, [node])

if not defined_in:
    problems.append(f"no stage libraries found under {build_root}/src")
for problem in problems:
    print(problem)
print(f"layout: {len(ALLOWED)} stages, {len(edges)} object files, {len(problems)} problems")
sys.exit(1 if problems else 0)
