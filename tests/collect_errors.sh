#!/usr/bin/env bash
# Bad input gets one clear line and a non-zero exit, never a crash; a run cut
# short (target exits, Ctrl-C, SIGTERM, full disk) keeps what was collected.
source "$(dirname "$0")/lib.sh"

# expect_error EXPECTED_TEXT COMMAND...: fails unless the command exits
# non-zero and prints EXPECTED_TEXT on stderr.
expect_error() {
	local expected=$1 status=0
	shift
	"$@" >"$workdir/stdout" 2>"$workdir/stderr" || status=$?
	cat "$workdir/stderr"
	((status != 0)) || fail "'$*' succeeded"
	((status < 128)) || fail "'$*' crashed (status $status)"
	grep -q -- "$expected" "$workdir/stderr" || fail "'$*' did not say '$expected'"
}

expect_error "no process with pid 999999" "$PROFCPU" collect -pid 999999 -duration 1
expect_error "kernel thread" "$PROFCPU" collect -pid 2 -duration 1
expect_error "invalid value for -pid" "$PROFCPU" collect -pid abc
expect_error "collect needs the process" "$PROFCPU" collect -duration 1
# A bare number is a forgotten -pid, not perfcollect's trace name of the
# whole machine at 1000 Hz: refused in both forms, nothing written.
(cd "$workdir" && expect_error "give -pid 4711" "$PROFCPU" collect 4711 -duration 1)
(cd "$workdir" && expect_error "give -pid 4711" "$PERFCOLLECT" collect 4711 -collectsec 1)
[[ ! -e "$workdir/4711.trace.zip" ]] || fail "collect 4711 wrote 4711.trace.zip"
expect_error "unknown option '--bogus'" "$PROFCPU" collect -pid 1 --bogus
expect_error "invalid -frequency" "$PROFCPU" collect -pid 1 -F 0
expect_error "invalid value for -duration: 'nan' is not a number" "$PROFCPU" collect -pid 1 -duration nan
expect_error "invalid value for -duration: 'inf' is not a number" "$PROFCPU" collect -pid 1 -duration inf
expect_error "invalid -duration 1e+300" "$PROFCPU" collect -pid 1 -duration 1e300
expect_error "cannot write to the output folder" "$PROFCPU" collect -pid $$ -duration 1 -o /proc/x
expect_error "perf.data" "$PROFCPU" postprocess -dir "$workdir/nothing-here"
printf 'PERFILE2garbage' >"$workdir/bad.data" && mkdir "$workdir/bad" && mv "$workdir/bad.data" "$workdir/bad/perf.data"
expect_error "perf.data" "$PROFCPU" postprocess -dir "$workdir/bad"

# No permission: an unprivileged user sampling root's process.
if command -v setpriv >/dev/null && (($(id -u) == 0)); then
	start sleep 60
	mkdir -m 777 "$workdir/nobody"
	chmod 755 "$workdir"
	expect_error "CAP_PERFMON" setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$PROFCPU" collect -pid "$started_pid" -duration 1 -o "$workdir/nobody/out"
fi

# An idle target: an init process (sh here, tini in containers) gets its busy
# child named; one with no children (Kubernetes' pause), the busiest process.
start sh -c "\"$WORKLOAD_SPLIT\" 5; true"
sleep 0.3
"$PROFCPU" collect -pid "$started_pid" -duration 1 -o "$workdir/idle" 2>"$workdir/stderr"
grep -q "its child pid [0-9]* (workload_split) may be the one to profile" "$workdir/stderr" ||
	fail "no hint at the busy child of an idle target"
# In a PID namespace of its own, so that "in sight" is these processes and
# not the busier ones of a shared machine.
unshare --pid --fork --mount-proc --kill-child sh -c \
	'"$0" 5 & sleep 1; sleep 30 & exec "$1" collect -pid $! -duration 1 -o "$2"' \
	"$WORKLOAD_SPLIT" "$PROFCPU" "$workdir/pause" >"$workdir/stdout" 2>"$workdir/stderr"
grep -q "the busy process pid [0-9]* (workload_split) may be the one to profile" "$workdir/stderr" ||
	fail "no hint at the busiest process when the idle target has no children"
# No samples, no flame graph: and none is named either.
grep -q "no flame graph was drawn" "$workdir/stderr" || fail "no word that no flame graph was drawn"
! grep -q "flamegraph.svg" "$workdir/stdout" || fail "a flame graph that was not drawn is named: $(cat "$workdir/stdout")"
[[ ! -e "$workdir/pause/flamegraph.svg" ]] || fail "a flame graph was written without samples"

# The target exits during the run: outputs from what was collected.
start "$WORKLOAD_SPLIT" 1.5
"$PROFCPU" collect -pid "$started_pid" -duration 20 -F 999 -o "$workdir/exited" 2>"$workdir/stderr"
grep -q "stopped: the target exited" "$workdir/stderr" || fail "no word of the target's exit"
# (Shares are checked loosely here: these runs test how collection stops.)
assert_share "$workdir/exited/folded_stacks.out" 'spin_sixty$' 40 90
assert_file "$workdir/exited/flamegraph.svg"

# Ctrl-C and SIGTERM stop the recording; the outputs are written.
for signal in INT TERM; do
	start "$WORKLOAD_SPLIT" 30
	"$PROFCPU" collect -pid "$started_pid" -F 999 -o "$workdir/$signal" 2>"$workdir/stderr" &
	profcpu=$!
	until grep -q 'sampling pid' "$workdir/stderr"; do sleep 0.05; done
	sleep 1.5
	kill -s "$signal" "$profcpu"
	wait "$profcpu" || fail "profcpu exited with $? after SIG$signal"
	grep -q "stopped: interrupted" "$workdir/stderr" || fail "SIG$signal: no word of the stop"
	assert_share "$workdir/$signal/folded_stacks.out" 'spin_sixty$' 40 90
	assert_file "$workdir/$signal/flamegraph.svg"
done

# A full disk: one line naming the problem; perf.data keeps what fit (fp
# mode's small samples, so that many fit in 96 KiB: a hybrid sample carries
# 16 KiB of stack).
if (($(id -u) == 0)) && mkdir "$workdir/small" && mount -t tmpfs -o size=96k tmpfs "$workdir/small" 2>/dev/null; then
	trap 'umount "$workdir/small" 2>/dev/null; cleanup' EXIT
	start "$WORKLOAD_SPLIT" 30
	status=0
	"$PROFCPU" collect -pid "$started_pid" -duration 3 -F 999 -no-compress --call-graph fp \
		-o "$workdir/small/out" \
		2>"$workdir/stderr" || status=$?
	cat "$workdir/stderr"
	((status < 128)) || fail "profcpu crashed on a full disk"
	grep -q "No space left on device" "$workdir/stderr" || fail "no word of the full disk"
	perf_samples=$(perf script -i "$workdir/small/out/perf.data" 2>/dev/null | grep -c cpu-clock || true)
	((perf_samples > 10)) || fail "perf.data kept only $perf_samples samples on a full disk"
fi
echo ok
