#!/usr/bin/env bash
# perfcollect's -threadtime on an ASP.NET Core service whose route blocks in
# Task.Delay(100).Wait(): the zip's perf.data.txt holds the scheduler's
# switches with their stacks, and TraceEvent's Linux importer (PerfView's
# Thread Time view, LinuxPerfScriptStackSource with threadTime) reports
# blocked time on the blocking route's stack. Recorded as on a fresh host or
# in a container, without tracefs (the software event context-switches):
# TraceEvent ends a thread's blocked time only at a switch line naming it
# as the next thread, so the lines of the threads' returns must be there,
# or all of a thread's blocked time lands on its first wait.
source "$(dirname "$0")/lib.sh"

build_traceevent_checker traceevent
build_dotnet_app WebMix
port=$(free_port)
export DOTNET_PerfMapEnabled=1
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 120 cpu,block
sleep 10 # past start-up, into the steady load
cd "$workdir"
with_switch_route software "$PERFCOLLECT" collect waits -pid "$started_pid" -collectsec 5 -threadtime
unzip -p waits.trace.zip waits.trace/perf.data.txt >perf.data.txt
switches=$(grep -c ' sched:sched_switch: prev_comm=' perf.data.txt || true)
echo "perf.data.txt: $switches sched_switch events"
((switches > 100)) || fail "-threadtime recorded $switches sched_switch events"

dotnet "$workdir/traceevent-bin/TraceEventCheck.dll" --threadtime waits.trace.zip 'Routes::Block' | tee result
blocked=$(awk '$1 == "blocked_samples" {print $2}' result)
matching=$(awk '$1 == "blocked_matching" {print $2}' result)
total_ms=$(awk '$1 == "total_blocked_ms" {print $2}' result)
share=$(awk '$1 == "blocked_matching_share" {print $2}' result)
((blocked > 0)) || fail "TraceEvent found no blocked time (no BLOCKED_TIME frame)"
((matching > 0)) || fail "TraceEvent puts no blocked time on the stack of Routes::Block"
python3 -c "import sys; sys.exit(0 if $total_ms > 0 else 1)" || fail "TraceEvent's total blocked time is $total_ms ms"
python3 -c "import sys; sys.exit(0 if $share >= 5 else 1)" ||
	fail "TraceEvent puts $share% of the thread time blocked in Routes::Block (expected 5% or more: half the requests block 100 ms)"
grep -qE '^frame webmix!.*Routes::Block\(\)' result || fail "TraceEvent does not name the frame webmix!Routes::Block()"
echo "ok: TraceEvent reads $switches switches, $matching blocked events on Routes::Block ($share% of the thread time), $total_ms ms blocked in all"
