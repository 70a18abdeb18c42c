#!/bin/sh
# The sampling half of the arm64 end-to-end check, in POSIX sh for busybox:
# run on an arm64 machine (scripts/check-arm64) or in the emulated one
# (scripts/test-arm64-vm). profcpu samples a native program built without
# frame pointers and a .NET console app with the kernel's perf events
# (the app with its perf map, then without diagnostics, named from the
# runtime's memory), and perfcollect writes a zip; tests/arm64_end_to_end_check.sh reads RESULTS.
# usage: arm64_end_to_end_run.sh RESULTS PROFCPU FRAMELESS HOTLOOP
results=$1 profcpu=$2 frameless=$3 hotloop=$4
mkdir -p "$results"
uname -srm >"$results/uname"

# The native program, in profcpu's default mode. A large ring buffer: an
# emulated machine reads it slowly.
"$frameless" 40 &
pid=$!
sleep 1
"$profcpu" collect -pid $pid -duration 15 -buffersize 64M -o "$results/native" >"$results/native.log" 2>&1
echo "native: $?"
kill $pid

# The .NET app, once its hot method is at its final tier.
DOTNET_PerfMapEnabled=1 "$hotloop" 600 >"$results/hotloop.out" 2>&1 &
pid=$!
waited=0
until grep -qF 'Demo.Program::HotMethod(int32)[OptimizedTier1]' /tmp/perf-$pid.map 2>/dev/null; do
	sleep 1
	waited=$((waited + 1))
	[ $waited -lt 300 ] || break
done
echo "dotnet: tier 1 after ${waited}s"
"$profcpu" collect -pid $pid -duration 8 -o "$results/dotnet" >"$results/dotnet.log" 2>&1
echo "dotnet: $?"
# perfcollect is profcpu by another name; it writes ./NAME.trace.zip.
ln -sf "$profcpu" /tmp/perfcollect
(cd "$results" && /tmp/perfcollect collect hot -pid $pid -collectsec 5 >"$results/perfcollect.log" 2>&1)
echo "perfcollect: $?"
kill $pid

# The same app started with DOTNET_EnableDiagnostics=0 (no IPC, no perf
# map): its JIT frames named from the runtime's memory, nothing written.
DOTNET_EnableDiagnostics=0 "$hotloop" 600 >"$results/memory.out" 2>&1 &
pid=$!
waited=0
until grep -q ready "$results/memory.out" 2>/dev/null; do
	sleep 1
	waited=$((waited + 1))
	[ $waited -lt 300 ] || break
done
echo "memory: ready after ${waited}s"
"$profcpu" collect -pid $pid -duration 5 -buffersize 64M -o "$results/memory" >"$results/memory.log" 2>&1
echo "memory: $?"
ls /tmp/perf-$pid.map /tmp/jit-$pid.dump >"$results/memory-files" 2>/dev/null
kill $pid
