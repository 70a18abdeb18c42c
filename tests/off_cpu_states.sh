#!/usr/bin/env bash
# Preempted or blocked: --off-cpu on threads whose every leave of the CPU is
# of one kind (tests/workloads/run_states.c, pinned to one CPU): two
# "spinner" threads that never block, each leaving only when preempted, and
# a "sleeper" that sleeps a millisecond at a time. The kernel's own counters
# (/proc/PID/task/TID/status) say so; the switch lines of perf_script.out
# and of the zip's perf.data.txt (what PerfView reads) must say the same:
# prev_state=R for the spinners, prev_state=S for the sleeper, on both
# routes: the software event context-switches (whose switch record's
# PREEMPT flag tells them apart) and the tracepoint sched:sched_switch
# (its prev_state field).
source "$(dirname "$0")/lib.sh"

start "$WORKLOAD_RUN_STATES" 120
workload=$started_pid
sleep 1

# switch_states TEXT: "THREAD STATE COUNT" for the switch lines of the
# threads leaving their CPU in TEXT (a thread's return, its prev_pid -1,
# left out).
switch_states() {
	grep -E ' sched:sched_switch: prev_comm=(spinner|sleeper) ' "$1" |
		sed -E 's/.* prev_comm=(\S+) .* prev_state=(\S+) ==>.*/\1 \2/' | sort | uniq -c |
		awk '{ print $2, $3, $1 }'
}

# assert_states TEXT: the spinners left preempted (R) and the sleeper
# blocked (S), 95% of their switches or more, each seen leaving 50 times or
# more.
assert_states() {
	local spinner_r spinner_all sleeper_s sleeper_all
	switch_states "$1" >"$workdir/states"
	sed "s|^|  $(basename "$1"): |" "$workdir/states"
	spinner_r=$(awk '$1 == "spinner" && $2 == "R" { n += $3 } END { print n + 0 }' "$workdir/states")
	spinner_all=$(awk '$1 == "spinner" { n += $3 } END { print n + 0 }' "$workdir/states")
	sleeper_s=$(awk '$1 == "sleeper" && $2 == "S" { n += $3 } END { print n + 0 }' "$workdir/states")
	sleeper_all=$(awk '$1 == "sleeper" { n += $3 } END { print n + 0 }' "$workdir/states")
	((spinner_all >= 50 && sleeper_all >= 50)) ||
		fail "$1: $spinner_all switches of the spinners and $sleeper_all of the sleeper (expected 50 or more each)"
	((spinner_r * 100 >= spinner_all * 95)) ||
		fail "$1: $spinner_r of the spinners' $spinner_all switches are preempted (prev_state=R); they never block"
	((sleeper_s * 100 >= sleeper_all * 95)) ||
		fail "$1: $sleeper_s of the sleeper's $sleeper_all switches are blocked (prev_state=S); it only sleeps"
}

# check_route ROUTE: a capture on ROUTE, its switch lines as the workload
# left its CPU.
check_route() {
	local out=$workdir/$1 expected
	echo "--- $1 route"
	with_switch_route "$1" "$PROFCPU" collect -pid "$workload" -duration 3 -F 99 --off-cpu \
		-o "$out" >"$workdir/$1.out" 2>&1 || { cat "$workdir/$1.out"; fail "collect failed on the $1 route"; }
	expected='off-CPU: context-switches '
	[[ $1 == software ]] || expected='off-CPU: sched:sched_switch '
	grep -q "^$expected" "$out/profcpu.log" ||
		fail "the switches did not take the $1 route: $(grep '^off-CPU' "$out/profcpu.log")"
	assert_states "$out/perf_script.out"
	unzip -p "$out/prof.trace.zip" prof.trace/perf.data.txt >"$workdir/perf.data.txt" ||
		fail "prof.trace.zip holds no prof.trace/perf.data.txt"
	assert_states "$workdir/perf.data.txt"
}

check_route software
check_route tracepoint

# The premise, as the kernel counts it: the spinners' switches were all
# involuntary, the sleeper's all voluntary.
for task in /proc/"$workload"/task/*; do
	name=$(cat "$task/comm")
	voluntary=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$task/status")
	involuntary=$(awk '/^nonvoluntary_ctxt_switches/ { print $2 }' "$task/status")
	echo "kernel: $name ${task##*/}: $voluntary voluntary, $involuntary involuntary switches"
	case $name in
	spinner) ((voluntary <= 1)) || fail "a spinner blocked $voluntary times: the test's premise does not hold" ;;
	sleeper) ((involuntary * 100 <= voluntary)) || fail "the sleeper was preempted $involuntary times: the test's premise does not hold" ;;
	esac
done
echo "ok: preempted and blocked switches told apart on both routes"
