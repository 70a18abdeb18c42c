#!/usr/bin/env bash
# The route from the runtime's own memory, on a real .NET app started with
# DOTNET_EnableDiagnostics=0 (no IPC, no perf map): runtime_memory_tool
# finds libcoreclr.so's contract descriptor, the contracts, globals and
# fields that map a code address to its method, and reads the range
# section map through them; the app is left as it was (no file written).
# A process without a runtime is told so.
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

# Read, not asked: the app wrote no perf map or jitdump.
for file in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"; do
	[[ ! -e $file ]] || fail "$file appeared in an app the route only reads"
done

# A process without a .NET runtime.
start sleep 60
if "$tool" "$started_pid" >/dev/null 2>"$workdir/none"; then
	fail "the tool found a descriptor in sleep"
fi
grep -q "maps no libcoreclr.so" "$workdir/none" || fail "the error does not say why: $(cat "$workdir/none")"
echo "PASS"
