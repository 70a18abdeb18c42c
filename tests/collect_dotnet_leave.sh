#!/usr/bin/env bash
# The target left as found: a .NET app whose perf map and jitdump profcpu
# turned on writes them no more once `collect` ends (its duration, or
# SIGTERM; one pid, or a cgroup's with --enable-perfmaps), though it goes on compiling methods (tests/dotnet/DynReuse: a
# new dynamic method a phase); its files stay. One whose owner turned them
# on (DOTNET_PerfMapEnabled=1) is left writing.
source "$(dirname "$0")/lib.sh"

build_dotnet_app DynReuse

# start NAME ENV...: DynReuse, a new method every 1.2 s or so, for long.
start() {
	local name=$1
	shift
	env "$@" dotnet "$workdir/DynReuse/dynreuse.dll" 1000 0.2 >"$workdir/$name.out" 2>&1 &
	started_pid=$!
	background_pids+=("$started_pid")
	until grep -qs ready "$workdir/$name.out"; do sleep 0.05; done
}

# sizes PID: its perf map's and jitdump's sizes.
sizes() {
	echo "$(stat -c %s "/tmp/perf-$1.map") $(stat -c %s "/tmp/jit-$1.dump")"
}

# phases_later NAME PID COUNT: waits until the app has begun COUNT more
# phases (each a new dynamic method, compiled) than it had.
phases_later() {
	local goal=$(($(grep -c '^phase' "$workdir/$1.out") + $3))
	until (($(grep -c '^phase' "$workdir/$1.out") >= goal)); do
		kill -0 "$2" 2>/dev/null || fail "$1: DynReuse exited"
		sleep 0.1
	done
}

# Turned on by profcpu: off again after collect.
start own
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/own" 2>&1 | tee "$workdir/own.stderr"
grep -q 'turned on the perf map' "$workdir/own.stderr" || fail "collect did not turn the perf map on"
grep -q 'dynamicClass::Phase' "/tmp/perf-$pid.map" || fail "the perf map names no dynamic method"
before=$(sizes "$pid")
phases_later own "$pid" 3
after=$(sizes "$pid")
echo "perf map and jitdump after collect: $before, 3 methods later: $after"
[[ "$before" == "$after" ]] || fail "the perf map or jitdump profcpu turned on still grows after collect ($before -> $after bytes)"
grep -q 'turned off the perf map and jitdump' "$workdir/own.stderr" || fail "collect did not say it turned them off"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"

# Stopped by SIGTERM, not by its duration: the same.
start term
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -o "$workdir/term" 2>"$workdir/term.stderr" &
collect_pid=$!
until grep -q 'sampling pid' "$workdir/term.stderr"; do sleep 0.1; done
kill -TERM "$collect_pid"
wait "$collect_pid" || fail "collect stopped by SIGTERM exited with status $?"
cat "$workdir/term.stderr"
before=$(sizes "$pid")
phases_later term "$pid" 3
after=$(sizes "$pid")
echo "perf map and jitdump after collect stopped by SIGTERM: $before, 3 methods later: $after"
[[ "$before" == "$after" ]] || fail "the perf map or jitdump still grows after collect stopped by SIGTERM ($before -> $after bytes)"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"

# A cgroup's .NET processes, turned on with --enable-perfmaps: the same.
make_test_cgroup
start scope
pid=$started_pid
echo "$pid" >"$test_cgroup/cgroup.procs"
"$PROFCPU" collect --cgroup "$test_cgroup" --enable-perfmaps -duration 3 -o "$workdir/scope" 2>&1 |
	tee "$workdir/scope.stderr"
grep -q "turned on the perf map and jitdump of .NET pid $pid " "$workdir/scope.stderr" || fail "collect --enable-perfmaps did not turn the perf map on"
before=$(sizes "$pid")
phases_later scope "$pid" 3
after=$(sizes "$pid")
echo "perf map and jitdump after collect --cgroup --enable-perfmaps: $before, 3 methods later: $after"
[[ "$before" == "$after" ]] || fail "the perf map or jitdump --enable-perfmaps turned on still grows after collect ($before -> $after bytes)"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"

# Turned on by its owner: left writing.
start owner DOTNET_PerfMapEnabled=1
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/owner" 2>&1 | tee "$workdir/owner.stderr"
grep -q 'turned off' "$workdir/owner.stderr" && fail "collect turned off the perf map its owner turned on"
before=$(sizes "$pid")
phases_later owner "$pid" 3
after=$(sizes "$pid")
echo "perf map and jitdump after collect: $before, 3 methods later: $after"
((${after% *} > ${before% *})) || fail "the perf map its owner turned on stopped growing after collect"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"
