#!/usr/bin/env bash
# The route from the runtime's own memory, on a real .NET app started with
# DOTNET_EnableDiagnostics=0 (no IPC, no perf map): runtime_memory_tool
# finds libcoreclr.so's contract descriptor, the contracts, globals and
# fields that map a code address to its method, and reads the range
# section map through them; the [JIT] frames collect samples in it are
# named from its memory; the app is left as it was (no file written).
# A process without a runtime is told so. Then, on the same app and on
# WebMix with their perf maps on as the ground truth, each JIT method's
# first, middle and last byte is looked up in the runtime's memory: at
# least 99% give the perf map's start and its name
# (Assembly!Namespace.Type::Method), and at least 99% of those not of
# dynamic methods its name exactly, generic arguments and all
# (System.Private.CoreLib!System.Collections.Generic.Dictionary`2[__Canon,Int32]::TryGetValue);
# no address outside JIT code names a method.
source "$(dirname "$0")/lib.sh"

tool=${RUNTIME_MEMORY_TOOL:?set RUNTIME_MEMORY_TOOL to the runtime_memory_tool program}

build_hotloop
start_hotloop DOTNET_EnableDiagnostics=0
pid=$started_pid
compgen -G "/tmp/dotnet-diagnostic-$pid-*" >/dev/null &&
	fail "the app opened its diagnostics IPC despite DOTNET_EnableDiagnostics=0"

"$tool" "$pid" >"$workdir/found" 2>"$workdir/errors" || {
	cat "$workdir/found" "$workdir/errors"
	fail "runtime_memory_tool found no whole descriptor in the app"
}
cat "$workdir/found"

# The library, the descriptor and the range section map (a static of the
# runtime, in its .bss: the anonymous mapping right after the file's) are
# where the process maps libcoreclr.so.
mapped=$(awk '$6 ~ /\/libcoreclr\.so$/ { print $6; exit }' "/proc/$pid/maps")
[[ $(awk '$1 == "coreclr" { print $2 }' "$workdir/found") == "$mapped" ]] ||
	fail "the tool's libcoreclr.so is not the one the app maps ($mapped)"
in_coreclr() {
	python3 - "$1" "/proc/$pid/maps" <<'PY'
import sys
address = int(sys.argv[1], 16)
image = []  # libcoreclr.so's mappings, and the anonymous one that ends its .bss
for line in open(sys.argv[2]):
    fields = line.split()
    start, end = (int(x, 16) for x in fields[0].split("-"))
    path = fields[5] if len(fields) > 5 else ""
    if path.endswith("/libcoreclr.so") or (not path and image and image[-1][1] == start
                                           and image[-1][2]):
        image.append((start, end, bool(path)))
sys.exit(0 if any(start <= address < end for start, end, _ in image) else 1)
PY
}
descriptor=$(awk '$1 == "descriptor" { print $2 }' "$workdir/found")
range_map=$(awk '$2 == "ExecutionManagerCodeRangeMapAddress" { print $3 }' "$workdir/found")
in_coreclr "$descriptor" || fail "the descriptor ($descriptor) is not in libcoreclr.so's mappings"
in_coreclr "$range_map" || fail "the range section map ($range_map) is not in libcoreclr.so's mappings"
grep -qE '^contract ExecutionManager [12]$' "$workdir/found" ||
	fail "no ExecutionManager contract of a version this route knows (1 or 2)"
# The app runs JIT code, so the map has a top level.
grep -qE '^range_map_top 0x[0-9a-f]*[1-9a-f]' "$workdir/found" ||
	fail "the range section map's top level is empty in an app running JIT code"

# What collect samples there on the perf map route alone, its [JIT] frames
# (the IPC is off: nothing names them there), named from the memory by the
# tool: at least 99% of them, and the hot method the leaf of most samples.
# (collect's own use of the memory: collect_dotnet_no_diagnostics.sh.)
"$PROFCPU" collect -pid "$pid" -duration 3 -F 199 --names perfmap -o "$workdir/capture" >/dev/null 2>&1 ||
	fail "collect failed on the app"
python3 - "$workdir/capture/perf_script.out" >"$workdir/jit-frames" <<'PY'
import sys
leaf = True
for line in open(sys.argv[1]):
    if not line.startswith("\t"):
        leaf = True
        continue
    fields = line.split()
    if len(fields) >= 2 and fields[1] == "[JIT]":
        print(fields[0], "leaf" if leaf else "caller")
    leaf = False
PY
cut -d' ' -f1 "$workdir/jit-frames" | "$tool" "$pid" --lookup 2>/dev/null | grep '^0x' >"$workdir/jit-named"
python3 - "$workdir/jit-frames" "$workdir/jit-named" <<'PY' || fail "the app's [JIT] frames are not named from its memory"
import collections, sys
frames = [line.split() for line in open(sys.argv[1])]
named = [line.rstrip("\n").split("\t") for line in open(sys.argv[2])]
assert len(frames) == len(named), (len(frames), len(named))
count = sum(len(answer) == 5 for answer in named)
leaves = collections.Counter(answer[4] if len(answer) == 5 else "??"
                             for (_, kind), answer in zip(frames, named) if kind == "leaf")
print(f"{count} of {len(frames)} [JIT] frames named; leaves: {dict(leaves)}")
sys.exit(0 if frames and count >= 0.99 * len(frames) and
         leaves.most_common(1)[0][0] == "hotloop!Demo.Program::HotMethod" else 1)
PY

# Read, not asked: the app wrote no perf map or jitdump, collect's sampling
# included.
for file in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"; do
	[[ ! -e $file ]] || fail "$file appeared in an app the route only reads"
done

# A process without a .NET runtime.
start sleep 60
if "$tool" "$started_pid" >/dev/null 2>"$workdir/none"; then
	fail "the tool found a descriptor in sleep"
fi
grep -q "maps no libcoreclr.so" "$workdir/none" || fail "the error does not say why: $(cat "$workdir/none")"

# compare_with_perf_map PID MIN_METHODS: looks up the first, middle and
# last byte of each JIT method of the app's perf map in its memory. The
# generic arguments of a method's type are read from the runtime's memory
# (generic_arguments.h): names that differ from the perf map's by them
# alone ("List`1" for "List`1[__Canon]") are counted apart, and count
# against the 99% of exact names. A dynamic method's code may be freed and
# reused after the perf map listed it: those left unnamed are counted apart
# too (and count against the 99% named).
compare_with_perf_map() {
	python3 - "/proc/$1/root/tmp/perf-$1.map" >"$workdir/addresses" <<'PY'
import sys
for line in open(sys.argv[1]):
    start, size, name = line.rstrip("\n").split(" ", 2)
    if name.startswith("stub") or "[" not in name:
        continue
    start, size = int(start, 16), int(size, 16)
    for address in (start, start + size // 2, start + size - 1):
        print(f"{address:x} {start:x} {name}")
PY
	cut -d' ' -f1,3- "$workdir/addresses" | "$tool" "$1" --lookup >"$workdir/looked-up" 2>"$workdir/errors" ||
		{ cat "$workdir/errors"; fail "runtime_memory_tool --lookup failed"; }
	grep -F "reads of the target's memory" "$workdir/errors"
	python3 - "$workdir/addresses" "$workdir/looked-up" "$2" <<'PY' ||
import re, sys
truth = [line.split(" ", 2) for line in open(sys.argv[1]).read().splitlines()]
# after what the descriptor gave, one line an address
found = [line.split("\t") for line in open(sys.argv[2]).read().splitlines()
         if line.startswith("0x")]
assert len(found) == len(truth), (len(found), len(truth))

def without_arguments(name):
    shorter = re.sub(r"\[[^\[\]]*\]", "", name)
    return name if shorter == name else without_arguments(shorter)

exact = generic = dynamic = non_dynamic = exact_non_dynamic = 0
for (address, start, name), answer in zip(truth, found):
    expected = answer[-1]
    is_dynamic = "dynamicClass::" in expected
    non_dynamic += not is_dynamic
    if len(answer) == 3 and is_dynamic:
        dynamic += 1
        continue
    # a MethodDef token, or none for a dynamic method
    same_code = len(answer) == 6 and int(answer[1], 16) == int(start, 16) and (
        answer[2].startswith("0x06") or "dynamicClass::" in answer[4])
    if same_code and answer[4] == expected:
        exact += 1
        exact_non_dynamic += not is_dynamic
    elif same_code and answer[4] == without_arguments(expected):
        generic += 1
        if generic <= 5:
            print("generic arguments differ:", address, expected, "->", answer[4])
    else:
        print("disagree:", address, expected, "->", " ".join(answer[1:-1]))
total, methods = len(truth), len({start for _, start, _ in truth})
print(f"{methods} methods, {total} addresses: {exact} named as the perf map names them, "
      f"{generic} but for their generic arguments, {dynamic} of dynamic methods unnamed; "
      f"{exact_non_dynamic} of {non_dynamic} not of dynamic methods exact "
      f"({100 * exact_non_dynamic / max(non_dynamic, 1):.1f}%)")
sys.exit(0 if methods >= int(sys.argv[3]) and exact + generic >= 0.99 * total and
         exact_non_dynamic >= 0.99 * non_dynamic else 1)
PY
		fail "the runtime's memory and its perf map disagree"
}

start_hotloop DOTNET_PerfMapEnabled=1
pid=$started_pid
wait_for_tier1 "$pid"
compare_with_perf_map "$pid" 10

# Addresses of no JIT code: the first page, libcoreclr.so's own code, the
# stack.
coreclr_code=$(awk '$2 ~ /x/ && $6 ~ /libcoreclr\.so$/ { print $1; exit }' "/proc/$pid/maps" | cut -d- -f1)
stack=$(awk '$6 == "[stack]" { print $1 }' "/proc/$pid/maps" | cut -d- -f1)
printf '1000\n%x\n%x\n' "$((0x$coreclr_code + 0x100))" "$((0x$stack + 0x100))" |
	"$tool" "$pid" --lookup 2>/dev/null >"$workdir/none-found"
[[ $(grep -cP '^0x[0-9a-f]*\t\?\?$' "$workdir/none-found") == 3 ]] ||
	fail "an address outside JIT code was named: $(cat "$workdir/none-found")"

# A framework-heavy app (ASP.NET Core under load): thousands of methods,
# generic ones among them.
build_dotnet_app WebMix
export DOTNET_PerfMapEnabled=1
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$(free_port)" 60
sleep 3 # past start-up, into the steady load
compare_with_perf_map "$started_pid" 1000
echo "PASS"
