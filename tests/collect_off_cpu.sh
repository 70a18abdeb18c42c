#!/usr/bin/env bash
# --off-cpu on an ASP.NET Core service (tests/dotnet/WebMix) loading itself
# on loopback with a CPU-bound route (/cpu) and two that block a thread in
# Task.Delay(100).Wait() (/block and /blockb): the two clients ask cpu,
# block, cpu, block, cpu, blockb in turn, so /block runs twice as often as
# /blockb and, each request waiting as long whatever the machine's load, is
# blocked twice as long. The on-CPU graph is the CPU route's, the off-CPU
# graph the blocking routes' waits, with their managed stacks down to the
# Wait; the real perf reads the switches in perf.data.
source "$(dirname "$0")/lib.sh"

need_tracefs
build_dotnet_app WebMix
port=$(free_port)
export DOTNET_PerfMapEnabled=1
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 120 cpu,block,cpu,block,cpu,blockb
sleep 15 # past start-up and the JIT's tier-up, into the steady load
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 299 --off-cpu -o "$workdir/off" 2>&1 | tee "$workdir/stderr"
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

# Off CPU, asleep in the request handlers (in futex: not preempted, which a
# loaded machine does to the CPU route): the blocking routes' waits, their
# stacks going from the route method down through Task.Wait into the kernel.
folded top "$off" 5
asleep_in_routes=$(folded count "$off" 'Routes::.*;futex')
# (At tier 1 the JIT inlines Task.Wait() into the route: InternalWait* is next.)
task_wait='Routes::BlockB?;System\.Private\.CoreLib!System\.Threading\.Tasks\.Task::(Wait|InternalWait)'
waiting=$(folded count "$off" "$task_wait;.*;futex.*;schedule")
block=$(folded count "$off" 'Routes::Block;')
blockb=$(folded count "$off" 'Routes::BlockB;')
echo "asleep in route handlers: ${asleep_in_routes} us, in the blocking routes' Wait ${waiting} us; off CPU in /block ${block} us, /blockb ${blockb} us"
{ grep 'Routes::.*;futex' "$off" | grep -vE "$task_wait" || true; } | sort -t' ' -k2 -n | tail -3 |
	sed 's/.*\(Routes::\)/asleep elsewhere in a route: \1/' | cut -c1-600
python3 -c "import sys; sys.exit(0 if $waiting >= 0.6 * $asleep_in_routes > 0 else 1)" ||
	fail "the blocking routes' Task.Wait holds $waiting of the $asleep_in_routes us asleep in route handlers"
ratio=$(python3 -c "print(f'{$block / max($blockb, 1):.2f}')")
echo "/block : /blockb blocked time = $ratio (the load implies 2.00)"
python3 -c "import sys; sys.exit(0 if 1.7 <= $ratio <= 2.3 else 1)" ||
	fail "/block was blocked $ratio times as long as /blockb, expected 2 +- 15%"
# Two clients spend 300 ms of each round of six requests blocked: a large
# part of their time even when the CPU route runs slowly on a busy machine.
python3 -c "import sys; sys.exit(0 if ($block + $blockb) / 1e6 >= 0.2 * 2 * 8 else 1)" ||
	fail "only $(((block + blockb) / 1000)) ms off CPU in the blocking routes in 8 s of two clients"

# Wall time: on- and off-CPU time of the routes on one scale.
wall_cpu=$(folded share "$wall" 'Routes::Cpu')
wall_block=$(folded share "$wall" 'Routes::Block')
echo "wall: Routes::Cpu $wall_cpu%, Routes::Block* $wall_block%"
python3 -c "import sys; sys.exit(0 if $wall_cpu > 0 and $wall_block > $wall_cpu else 1)" ||
	fail "the wall graph does not put the blocking routes above the CPU route"

# The real perf reads our sched_switch samples, with their fields.
command -v perf >/dev/null || skip "perf is not installed (the rest passed)"
ours=$(grep -c ' sched:sched_switch: prev_comm=' "$workdir/off/perf_script.out")
theirs=$(perf script -i "$workdir/off/perf.data" -F comm,tid,time,event,trace 2>/dev/null |
	grep -cE 'sched:sched_switch: +prev_comm=.* prev_state=.* ==> next_comm=' || true)
echo "sched_switch samples: perf script reads $theirs, we wrote $ours"
((ours > 100 && theirs >= ours * 95 / 100)) ||
	fail "perf script reads $theirs sched_switch samples of our $ours"
echo "ok: off-CPU time of the blocking routes, /block : /blockb = $ratio"
