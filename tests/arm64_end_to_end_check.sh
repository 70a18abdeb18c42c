#!/usr/bin/env bash
# The checking half of the arm64 end-to-end check (see
# arm64_end_to_end_run.sh): whole, named stacks in their known shares, as
# the x86-64 tests check them. Exits 1 at the first check that fails.
# usage: arm64_end_to_end_check.sh RESULTS
set -euo pipefail
tests_dir=$(cd "$(dirname "$0")" && pwd)
results=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
folded() { python3 "$tests_dir/folded.py" "$@"; }
assert_share() {
	local share
	share=$(folded share "$1" "$2")
	echo "share of /$2/: $share%"
	python3 -c "import sys; sys.exit(0 if $3 <= $share <= $4 else 1)" ||
		fail "share of /$2/ is $share%, expected $3..$4%"
}
# ratio PART WHOLE EXPECTED FOLDED: PART's share of WHOLE (shares of
# FOLDED's samples, in %) is EXPECTED within 4 standard deviations of the
# samples WHOLE counts, and 0.1: a few samples under emulation, hundreds on
# an arm64 CPU.
ratio() {
	python3 - "$@" "$(folded total "$4")" <<'PY'
import math, sys
part, whole, expected, total = float(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), float(sys.argv[5])
n = max(whole * total / 100, 1)
margin = 4 * math.sqrt(expected * (1 - expected) / n) + 0.1
r = part / max(whole, 0.1)
print(f"ratio {r:.2f} (expected {expected} ± {margin:.2f}, {n:.0f} samples)")
sys.exit(0 if abs(r - expected) <= margin else 1)
PY
}
grep -q aarch64 "$results/uname" || fail "the machine was not arm64: $(cat "$results/uname")"

# The native program (tests/workloads/frameless.c): its known split, under
# the right callers, in whole stacks.
native=$results/native/folded_stacks.out
[[ -s $native ]] || { cat "$results/native.log"; fail "no folded stacks for the native program"; }
folded top "$native" 8
# (a sample taken in the kernel has its frames after the user leaf)
kernel='(;[^;\[]+)*'
leaf=$(folded share "$native" ";leaf_work$kernel\$")
caller_a=$(folded share "$native" ";worker;caller_a;leaf_work$kernel\$")
caller_b=$(folded share "$native" ";worker;caller_b;leaf_work$kernel\$")
echo "leaf_work $leaf%: under caller_a $caller_a%, under caller_b $caller_b%"
# Under emulation memset costs far more than on a CPU (tens of times the
# loop's time for the same units of work): leaf_work gets a few percent.
python3 -c "import sys; sys.exit(0 if $leaf >= 2 else 1)" || fail "leaf_work has only $leaf%"
ratio "$caller_a" "$leaf" 0.75 "$native" || fail "caller_a holds not 3/4 of leaf_work"
ratio "$caller_b" "$leaf" 0.25 "$native" || fail "caller_b holds not 1/4 of leaf_work"
libc=$(folded share "$native" ';worker;fill_[ab];[^;]+$')
fill_a=$(folded share "$native" ';worker;fill_a;[^;]+$')
echo "libc leaves under fill_a/fill_b $libc%, under fill_a $fill_a%"
ratio "$fill_a" "$libc" 0.667 "$native" || fail "fill_a holds not 2/3 of memset"
assert_share "$native" ';worker;(?!caller_a;|caller_b;|fill_a;|fill_b;)[^;]+$' 0 3
# Whole: every stack through worker starts at main's or at the thread's
# start in libc (unnamed where libc has no symbols for it).
assert_share "$native" '^frameless;(_start;__libc_start_main;(\[libc\.so\.6\]|__libc_start_call_main);main|\[libc\.so\.6\]|thread_start;start_thread|start_thread);worker;' 95 100

# The .NET app (tests/dotnet/HotLoop), in JIT code: the main thread's
# samples (the runtime's tiering thread may still be compiling other
# methods, for a while under emulation).
dotnet=$results/dotnet/folded_stacks.out
[[ -s $dotnet ]] || { cat "$results/dotnet.log"; fail "no folded stacks for the .NET app"; }
folded top "$dotnet" 5
grep '^hotloop;' "$dotnet" >"$scratch/main-thread.folded" || fail "no samples of the main thread"
assert_share "$scratch/main-thread.folded" ';hotloop!Demo\.Program::HotMethod(;|$)' 80 100
assert_share "$scratch/main-thread.folded" ';hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::Caller;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)' 80 100
# Whole: from the app host's _start through hostfxr and the runtime.
assert_share "$scratch/main-thread.folded" '^hotloop;.*__libc_start_main;.*;coreclr_execute_assembly;.*hotloop!Demo\.Program::Main;' 80 100

# perfcollect's zip, its perf.data.txt naming the JIT frames from the map.
zip=$results/hot.trace.zip
[[ -s $zip ]] || { cat "$results/perfcollect.log"; fail "perfcollect wrote no hot.trace.zip"; }
unzip -p "$zip" hot.trace/perf.data.txt >"$scratch/perf.data.txt"
frames=$(grep -c 'Demo\.Program::HotMethod(int32).*(/tmp/perf-[0-9]*\.map)$' "$scratch/perf.data.txt" || true)
echo "perfcollect zip: $(unzip -Z1 "$zip" | tr '\n' ' '); $frames HotMethod frames in perf.data.txt"
((frames > 0)) || fail "the perfcollect zip's perf.data.txt does not name HotMethod"
# The app started with DOTNET_EnableDiagnostics=0: named from the
# runtime's memory as with its perf map, no file written in it.
memory=$results/memory/folded_stacks.out
[[ -s $memory ]] || { cat "$results/memory.log"; fail "no folded stacks for the .NET app without diagnostics"; }
folded top "$memory" 5
grep -q "naming the JIT frames of .NET pid [0-9]* from its runtime's memory" "$results/memory.log" ||
	{ cat "$results/memory.log"; fail "collect did not name the app's JIT frames from its runtime's memory"; }
grep "names from the runtime's memory" "$results/memory/profcpu.log"
[[ ! -s $results/memory-files ]] || fail "files written in the app without diagnostics: $(cat "$results/memory-files")"
grep '^hotloop;' "$memory" >"$scratch/memory-main.folded" || fail "no samples of the main thread without diagnostics"
# (Caller may be missing: before tier 1, slow under emulation, HotMethod
# runs as on-stack-replaced code)
assert_share "$scratch/memory-main.folded" ';hotloop!Demo\.Program::HotMethod(;|$)' 80 100
assert_share "$scratch/memory-main.folded" '^hotloop;.*__libc_start_main;.*;coreclr_execute_assembly;.*hotloop!Demo\.Program::Main;' 80 100
assert_share "$memory" '\[JIT\]' 0 1

echo "arm64 end to end: passed ($(cat "$results/uname"))"
