#!/usr/bin/env bash
# --off-cpu on an ASP.NET Core service (tests/dotnet/WebMix) loading itself
# on loopback with a CPU-bound route (/cpu) and two that block a thread in
# Task.Delay(100).Wait() (/block and /blockb): the two clients ask cpu,
# block, cpu, block, cpu, blockb in turn, so /block runs twice as often as
# /blockb and, each request waiting as long whatever the machine's load, is
# blocked twice as long. The requests cut by the capture's start and end
# weigh less in 16 s than in 8, where a loaded machine's slow /cpu left few
# enough cycles to push the ratio past 2.3. The on-CPU graph is the CPU
# route's, the off-CPU graph the blocking routes' waits, with their managed
# stacks down to the Wait; the real perf reads the switches in perf.data.
# The main run takes the route of a fresh host and of every container, the
# software event context-switches (tracefs unmounted); a shorter second one
# takes the tracepoint sched:sched_switch (tracefs mounted, in a private
# mount namespace) and must put the blocked time in the same place.
source "$(dirname "$0")/lib.sh"

build_dotnet_app WebMix
port=$(free_port)
export DOTNET_PerfMapEnabled=1
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 120 cpu,block,cpu,block,cpu,blockb
sleep 15 # past start-up and the JIT's tier-up, into the steady load
with_switch_route software "$PROFCPU" collect -pid "$started_pid" -duration 16 -F 299 --off-cpu -o "$workdir/off" 2>&1 | tee "$workdir/stderr"
grep -q '^off-CPU: context-switches ' "$workdir/off/profcpu.log" ||
	fail "without tracefs, the switches did not come from the software event: $(grep '^off-CPU' "$workdir/off/profcpu.log")"
on=$workdir/off/folded_stacks.out
off=$workdir/off/offcpu_folded_stacks.out
wall=$workdir/off/wall_folded_stacks.out
for file in "$off" "$wall" "$workdir/off/offcpu_flamegraph.svg" "$workdir/off/wall_flamegraph.svg"; do
	[[ -s $file ]] || fail "--off-cpu wrote no $(basename "$file")"
done
grep -q 'Off-CPU (wall time off CPU)' "$workdir/off/offcpu_flamegraph.svg" ||
	fail "the off-CPU flame graph's title does not say it is wall time off CPU"

# On CPU: the CPU route, nearly all the time spent in route handlers and
# the largest part of the whole (the JIT, Kestrel and the GC take the rest,
# more of it on a busy machine).
cpu=$(folded count "$on" 'Routes::Cpu')
in_routes=$(folded count "$on" 'Routes::')
cpu_share=$(folded share "$on" 'Routes::Cpu')
echo "on CPU: Routes::Cpu $cpu_share% of all, $cpu of the $in_routes samples in route handlers"
python3 -c "import sys; sys.exit(0 if $cpu >= 0.9 * $in_routes and $cpu_share >= 25 else 1)" ||
	fail "the on-CPU graph is not dominated by the CPU route ($cpu_share%, $cpu of $in_routes in routes)"

# Off CPU in the blocking routes: their Task.Wait, the stacks going from
# the route method down through the Wait into the kernel's schedule(),
# parked in a futex or, on a busy machine, yielding in the Wait's spin
# phase until the Delay ends. (At tier 1 the JIT inlines Task.Wait() into
# the route: InternalWait* comes next.) Idle threads (thread-pool workers,
# timers, the socket loop) are off CPU the whole capture, beside them.
folded top "$off" 5
task_wait='Routes::BlockB?;System\.Private\.CoreLib!System\.Threading\.Tasks\.Task::(Wait|InternalWait)'
blocking=$(folded count "$off" 'Routes::BlockB?;')
waiting=$(folded count "$off" "$task_wait.*;schedule")
block=$(folded count "$off" 'Routes::Block;')
blockb=$(folded count "$off" 'Routes::BlockB;')
echo "off CPU in the blocking routes: ${blocking} us, ${waiting} us of it in Task.Wait; /block ${block} us, /blockb ${blockb} us"
{ grep -E 'Routes::BlockB?;' "$off" | grep -vE "$task_wait" || true; } | sort -t' ' -k2 -n | tail -3 |
	sed 's/.*\(Routes::\)/off CPU elsewhere in a blocking route: \1/' | cut -c1-600
python3 -c "import sys; sys.exit(0 if $waiting >= 0.9 * $blocking and $blocking >= 1e6 else 1)" ||
	fail "of the $blocking us off CPU in the blocking routes, Task.Wait holds $waiting us (expected 90% of at least 1 s)"
# Whole, too: from the thread's start (the thread pool's dispatch loop,
# Kestrel's request loop) down to the Wait.
rooted=$(folded count "$off" '(^|;)start_thread;.*Routes::BlockB?;')
echo "off CPU in the blocking routes from the thread's start: ${rooted} us of ${blocking} us"
python3 -c "import sys; sys.exit(0 if $rooted >= 0.9 * $blocking else 1)" ||
	fail "only $rooted of the $blocking us off CPU in the blocking routes have a stack from start_thread"
ratio=$(python3 -c "print(f'{$block / max($blockb, 1):.2f}')")
echo "/block : /blockb blocked time = $ratio (the load implies 2.00)"
python3 -c "import sys; sys.exit(0 if 1.7 <= $ratio <= 2.3 else 1)" ||
	fail "/block was blocked $ratio times as long as /blockb, expected 2 +- 15%"

# Wall time: each route's on-CPU time (samples by their period) and
# off-CPU time, in microseconds on one scale.
wall_cpu=$(folded count "$wall" 'Routes::Cpu')
off_cpu_of_cpu=$(folded count "$off" 'Routes::Cpu')
wall_blocking=$(folded count "$wall" 'Routes::BlockB?;')
echo "wall: Routes::Cpu $wall_cpu us ($off_cpu_of_cpu us of it off CPU, $cpu samples on), the blocking routes $wall_blocking us ($blocking us off CPU)"
python3 -c "import sys; sys.exit(0 if $wall_cpu >= $off_cpu_of_cpu + $cpu * 0.5e6 / 299 and $blocking <= $wall_blocking <= 1.1 * $blocking else 1)" ||
	fail "the wall graph does not hold the routes' on- and off-CPU time on one scale"

# The real perf reads the software event's samples, one per switch we wrote.
command -v perf >/dev/null || skip "perf is not installed (the rest passed)"
# (A thread's return is a line of its own, its prev_pid -1: not a sample.)
ours=$(grep ' sched:sched_switch: prev_comm=' "$workdir/off/perf_script.out" | grep -vc ' prev_pid=-1 ')
returns=$(grep -c ' sched:sched_switch: prev_comm=? prev_pid=-1 ' "$workdir/off/perf_script.out")
theirs=$(perf script -i "$workdir/off/perf.data" -F comm,tid,time,event 2>/dev/null | grep -c ' context-switches:' || true)
preempted=$(grep ' sched:sched_switch: ' "$workdir/off/perf_script.out" | grep -v ' prev_pid=-1 ' | grep -c ' prev_state=R ' || true)
echo "context-switches samples: perf script reads $theirs, we wrote $ours switches ($preempted preempted) and $returns returns"
((returns >= ours * 9 / 10)) || fail "perf_script.out has $returns returns for $ours switches: PerfView's Thread Time needs them"
((ours > 100 && theirs >= ours * 95 / 100)) ||
	fail "perf script reads $theirs context-switches samples of our $ours switches"

# The tracepoint route: the same blocked time in the blocking routes' Wait,
# and the real perf reads the sched_switch samples, with their fields.
with_switch_route tracepoint "$PROFCPU" collect -pid "$started_pid" -duration 8 -F 299 --off-cpu -o "$workdir/tp" 2>&1 | tail -2
grep -q '^off-CPU: sched:sched_switch ' "$workdir/tp/profcpu.log" ||
	fail "with tracefs, the switches did not come from the tracepoint: $(grep '^off-CPU' "$workdir/tp/profcpu.log")"
tp_blocking=$(folded count "$workdir/tp/offcpu_folded_stacks.out" 'Routes::BlockB?;')
tp_waiting=$(folded count "$workdir/tp/offcpu_folded_stacks.out" "$task_wait.*;schedule")
echo "tracepoint: off CPU in the blocking routes: ${tp_blocking} us, ${tp_waiting} us of it in Task.Wait"
python3 -c "import sys; sys.exit(0 if $tp_waiting >= 0.9 * $tp_blocking and $tp_blocking >= 5e5 else 1)" ||
	fail "tracepoint: of the $tp_blocking us off CPU in the blocking routes, Task.Wait holds $tp_waiting us"
ours=$(grep ' sched:sched_switch: prev_comm=' "$workdir/tp/perf_script.out" | grep -vc ' prev_pid=-1 ')
theirs=$(perf script -i "$workdir/tp/perf.data" -F comm,tid,time,event,trace 2>/dev/null |
	grep -cE 'sched:sched_switch: +prev_comm=.* prev_state=.* ==> next_comm=' || true)
echo "sched_switch samples: perf script reads $theirs, we wrote $ours"
((ours > 100 && theirs >= ours * 95 / 100)) ||
	fail "perf script reads $theirs sched_switch samples of our $ours"
echo "ok: off-CPU time of the blocking routes, /block : /blockb = $ratio, on both routes"
