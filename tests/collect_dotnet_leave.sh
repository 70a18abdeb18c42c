#!/usr/bin/env bash
# The target left as found: a .NET app whose perf map and jitdump profcpu
# turned on writes them no more once `collect` ends (its duration, or
# SIGTERM; one pid, or a cgroup's with --enable-perfmaps), though it goes on compiling methods (tests/dotnet/DynReuse: a
# new dynamic method a phase); its files stay. One whose owner turned them
# on (DOTNET_PerfMapEnabled=1) is left writing.
source "$(dirname "$0")/lib.sh"

build_dotnet_app DynReuse

# Turned on by profcpu: off again after collect.
start_dynreuse own
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/own" 2>&1 | tee "$workdir/own.stderr"
grep -q 'turned on the perf map' "$workdir/own.stderr" || fail "collect did not turn the perf map on"
grep -q 'dynamicClass::Phase' "/tmp/perf-$pid.map" || fail "the perf map names no dynamic method"
before=$(perf_files_sizes "$pid")
dynreuse_phases_later own "$pid" 3
after=$(perf_files_sizes "$pid")
echo "perf map and jitdump after collect: $before, 3 methods later: $after"
[[ "$before" == "$after" ]] || fail "the perf map or jitdump profcpu turned on still grows after collect ($before -> $after bytes)"
grep -q 'turned off the perf map and jitdump' "$workdir/own.stderr" || fail "collect did not say it turned them off"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"

# Stopped by SIGTERM, not by its duration: the same.
start_dynreuse term
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -o "$workdir/term" 2>"$workdir/term.stderr" &
collect_pid=$!
until grep -q 'sampling pid' "$workdir/term.stderr"; do sleep 0.1; done
kill -TERM "$collect_pid"
wait "$collect_pid" || fail "collect stopped by SIGTERM exited with status $?"
cat "$workdir/term.stderr"
before=$(perf_files_sizes "$pid")
dynreuse_phases_later term "$pid" 3
after=$(perf_files_sizes "$pid")
echo "perf map and jitdump after collect stopped by SIGTERM: $before, 3 methods later: $after"
[[ "$before" == "$after" ]] || fail "the perf map or jitdump still grows after collect stopped by SIGTERM ($before -> $after bytes)"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"

# A cgroup's .NET processes, turned on with --enable-perfmaps: the same.
make_test_cgroup
start_dynreuse scope
pid=$started_pid
echo "$pid" >"$test_cgroup/cgroup.procs"
"$PROFCPU" collect --cgroup "$test_cgroup" --enable-perfmaps -duration 3 -o "$workdir/scope" 2>&1 |
	tee "$workdir/scope.stderr"
grep -q "turned on the perf map and jitdump of .NET pid $pid " "$workdir/scope.stderr" || fail "collect --enable-perfmaps did not turn the perf map on"
before=$(perf_files_sizes "$pid")
dynreuse_phases_later scope "$pid" 3
after=$(perf_files_sizes "$pid")
echo "perf map and jitdump after collect --cgroup --enable-perfmaps: $before, 3 methods later: $after"
[[ "$before" == "$after" ]] || fail "the perf map or jitdump --enable-perfmaps turned on still grows after collect ($before -> $after bytes)"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"

# Turned on by its owner: left writing.
start_dynreuse owner DOTNET_PerfMapEnabled=1
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/owner" 2>&1 | tee "$workdir/owner.stderr"
grep -q 'turned off' "$workdir/owner.stderr" && fail "collect turned off the perf map its owner turned on"
before=$(perf_files_sizes "$pid")
dynreuse_phases_later owner "$pid" 3
after=$(perf_files_sizes "$pid")
echo "perf map and jitdump after collect: $before, 3 methods later: $after"
((${after% *} > ${before% *})) || fail "the perf map its owner turned on stopped growing after collect"
kill "$pid"
rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"
