#!/usr/bin/env bash
# A .NET app started WITHOUT DOTNET_PerfMapEnabled, sampled with
# --no-perfmap-switch: it writes no perf map and no jitdump, and profcpu asks
# for none, so its JIT frames can only be named from the method rundown of
# its runtime events (the EventPipe session's MethodDCEndVerbose events).
# They are named as the perf map names them, and a second capture of the same
# process with the perf map switched on gives the hot method the same share.
source "$(dirname "$0")/lib.sh"

build_hotloop
hot_path='hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)'
unnamed='(^|;)\[(unknown|JIT)\](;|$)'

start_hotloop
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 4 -F 299 --no-perfmap-switch -o "$workdir/rundown" 2>"$workdir/rundown.err" ||
	{ cat "$workdir/rundown.err"; fail "collect --no-perfmap-switch failed"; }
cat "$workdir/rundown.err"
[[ ! -e "/tmp/perf-$pid.map" && ! -e "/tmp/jit-$pid.dump" ]] ||
	fail "--no-perfmap-switch still made the target write a perf map or jitdump"
grep -q 'turned on the perf map' "$workdir/rundown.err" && fail "--no-perfmap-switch turned the perf map on"
grep -qE 'code ranges of pid [0-9]+ named by its method events' "$workdir/rundown/profcpu.log" ||
	fail "the log does not say the rundown was read"
folded top "$workdir/rundown/folded_stacks.out" 3
assert_share "$workdir/rundown/folded_stacks.out" "$hot_path" 80 100
assert_share "$workdir/rundown/folded_stacks.out" "$unnamed" 0 5
# The full name, as the perf map writes it, in the perf script text.
grep -qE '^\s+[0-9a-f]+ float64 \[hotloop\] Demo\.Program::HotMethod\(int32\)\[[A-Za-z0-9]+\] \(/tmp/perf-[0-9]+\.map\)$' \
	"$workdir/rundown/perf_script.out" || fail "perf_script.out does not name HotMethod with its tier as the perf map does"
rundown_share=$(folded share "$workdir/rundown/folded_stacks.out" "$hot_path")

# The second opinion: the same process, its perf map switched on.
"$PROFCPU" collect -pid "$pid" -duration 4 -F 299 -o "$workdir/perfmap" 2>"$workdir/perfmap.err" ||
	{ cat "$workdir/perfmap.err"; fail "collect failed"; }
grep -q 'turned on the perf map' "$workdir/perfmap.err" || fail "the perf map was not turned on for the second opinion"
assert_share_about "$workdir/perfmap/folded_stacks.out" "$hot_path" "$rundown_share"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"
echo PASS
