#!/usr/bin/env python3
"""The tree is the pipeline: each folder of src/ is one stage and each folder
of symbols/ one concern; a folder uses another only through the headers that
folder offers (its meson.build names them after "Public headers:"), only in
the direction the arrows below allow, and no two source files call each
other in a loop.

usage: layout.py SOURCE_ROOT BUILD_ROOT
"""
import pathlib
import re
import subprocess
import sys

DOTNET = {"symbols/dotnet/image", "symbols/dotnet/bundle", "symbols/dotnet/lines",
          "symbols/dotnet/readytorun", "symbols/dotnet/jit_unwind",
          "symbols/dotnet/runtime_files", "symbols/dotnet/names"}
SYMBOLS = {"symbols/common", "symbols/target", "symbols/kernel", "symbols/native",
           "symbols/unwind", "symbols/runtime_memory", "symbols/resolve"} | DOTNET
# Which folders each folder may read from: the arrows of src/meson.build,
# symbols/meson.build and symbols/dotnet/meson.build. Every stage of src/ may
# read from symbols/.
ALLOWED = {
    "symbols/common": set(),
    "symbols/target": {"symbols/common"},
    "symbols/kernel": {"symbols/target", "symbols/common"},
    "symbols/native": {"symbols/target", "symbols/common"},
    "symbols/unwind": {"symbols/native", "symbols/target", "symbols/common"},
    "symbols/dotnet/image": {"symbols/common"},
    "symbols/dotnet/bundle": {"symbols/target", "symbols/common"},
    "symbols/dotnet/lines": {"symbols/dotnet/image", "symbols/dotnet/bundle",
                             "symbols/target", "symbols/common"},
    "symbols/dotnet/readytorun": {"symbols/dotnet/lines", "symbols/dotnet/image",
                                  "symbols/dotnet/bundle", "symbols/unwind",
                                  "symbols/target", "symbols/common"},
    "symbols/dotnet/jit_unwind": {"symbols/common"},
    "symbols/dotnet/runtime_files": {"symbols/dotnet/jit_unwind", "symbols/unwind",
                                     "symbols/target", "symbols/common"},
    "symbols/dotnet/names": set(),
    "symbols/runtime_memory": DOTNET | {"symbols/unwind", "symbols/native", "symbols/target",
                                        "symbols/common"},
    "symbols/resolve": SYMBOLS - {"symbols/resolve"},
    "src/perf_data": SYMBOLS,
    "src/collect": {"src/perf_data"} | SYMBOLS,
    "src/profile": {"src/perf_data"} | SYMBOLS,
    "src/emit": {"src/profile", "src/perf_data"} | SYMBOLS,
    "src/agent": {"src/collect", "src/emit", "src/profile", "src/perf_data"} | SYMBOLS,
    "src/cli": {"src/agent", "src/collect", "src/emit", "src/profile", "src/perf_data"} | SYMBOLS,
}

source_root, build_root = map(pathlib.Path, sys.argv[1:3])
problems = []

folder_of_header = {}
public_headers = {}
for folder in ALLOWED:
    path = source_root / folder
    comment = " ".join(line.lstrip("# ").strip()
                       for line in (path / "meson.build").read_text().splitlines()
                       if line.startswith("#"))
    match = re.search(r"Public headers: ([^.]*(?:\.h[^.]*)*)\.", comment)
    public_headers[folder] = set(re.findall(r"[\w]+\.h", match.group(1))) if match else set()
    for header in path.glob("*.h"):
        if header.name in folder_of_header:
            problems.append(f"{header.name} is in both {folder_of_header[header.name]} "
                            f"and {folder}")
        folder_of_header[header.name] = folder
    for header in public_headers[folder]:
        if not (path / header).exists():
            problems.append(f"{folder}/meson.build calls {header} public; it is not there")

for tree, allowed_in_root in (("src", {"util"}), ("symbols", set()), ("symbols/dotnet", set())):
    loose = [p.name for p in (source_root / tree).glob("*.[ch]") if p.stem not in allowed_in_root]
    if loose:
        problems.append(f"files in the flat {tree}/ root: {loose}")
    for path in (source_root / tree).iterdir():
        if path.is_dir() and f"{tree}/{path.name}" not in ALLOWED and list(path.glob("*.c")):
            problems.append(f"{tree}/{path.name} is a folder this test does not know")

for folder in ALLOWED:
    for path in sorted((source_root / folder).glob("*.[ch]")):
        for header in re.findall(r'^#include "([^"]+)"', path.read_text(), re.M):
            other = folder_of_header.get(header)
            if other is None or other == folder:
                continue
            where = f"{folder}/{path.name} includes {header} of {other}"
            if other not in ALLOWED[folder]:
                problems.append(f"{where}: {folder} may not read from {other}")
            elif header not in public_headers[other]:
                problems.append(f"{where}: not one of {other}'s public headers")

# Call loops between the object files of all folders: file A uses a symbol
# that B defines and B one that A defines (directly or around a longer loop).
defined_in, uses = {}, {}
libraries = sorted(build_root.glob("src/**/lib*.a")) + sorted(build_root.glob("symbols/**/lib*.a"))
for library in libraries:
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

if not any(build_root.glob("symbols/*/lib*.a")) or not any(build_root.glob("src/*/lib*.a")):
    problems.append(f"no folder libraries found under {build_root}/src and symbols")
for problem in problems:
    print(problem)
print(f"layout: {len(ALLOWED)} folders, {len(edges)} object files, {len(problems)} problems")
sys.exit(1 if problems else 0)
