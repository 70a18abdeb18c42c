#!/usr/bin/env bash
# The .NET runtime's own events beside the samples, through EventPipe: a real
# app (tests/dotnet/EventMix) allocates, throws a known number of exceptions
# and contends on a lock while profcpu samples it. The runtime.nettrace opens
# with TraceEvent's EventPipeEventSource (the reader PerfView uses), whose GC
# and exception counts match the app's own and whose GC analysis gives the
# same pauses; profcpu's summary, its view and the flame graph's subtitle say
# the same, and name where threads waited for the lock. Then -gccollectonly
# -noperf records GC events and no samples, and a profcpu killed with SIGKILL
# mid-session leaves the app running and the next collect working.
source "$(dirname "$0")/lib.sh"

build_traceevent_checker nettrace_check
build_dotnet_app EventMix
cd "$workdir"

check_nettrace() {
	dotnet "$workdir/nettrace_check-bin/NettraceCheck.dll" "$1"
}

# value FILE KEY: the number after KEY at the start of a line of FILE.
value() {
	awk -v key="$2" '$1 == key {print $2; exit}' "$1"
}

# wait_for_session LOG PID: until collect says its EventPipe session runs.
wait_for_session() {
	until grep -q 'EventPipe session' "$1" 2>/dev/null; do
		kill -0 "$2" 2>/dev/null || { cat "$workdir"/*.err; fail "collect exited before its event session started"; }
		sleep 0.1
	done
}

# Runs the app's workload while collect samples it with ARGS; the app's
# counts go to app.out, collect's summary to collect.out.
collect_workload() {
	local out=$1 exceptions=$2
	shift 2
	start_dotnet_app "$workdir/EventMix/eventmix.dll" "$workdir/go-$out" "$exceptions"
	app_pid=$started_pid app_output=$started_output
	"$PROFCPU" collect -pid "$app_pid" -o "$out" "$@" >"$out.out" 2>"$out.err" &
	collect_pid=$!
	background_pids+=("$collect_pid")
	wait_for_session "$out/profcpu.log" "$collect_pid"
	touch "$workdir/go-$out"
	until grep -q done "$app_output"; do
		kill -0 "$app_pid" 2>/dev/null || { cat "$app_output"; fail "the app exited"; }
		sleep 0.2
	done
	sleep 1
	kill -INT "$collect_pid"
	wait "$collect_pid" || { cat "$out.err"; fail "collect $* failed"; }
	cat "$app_output" "$out.out"
}

# 1. The default events beside the samples.
collect_workload run 123
app_gc0=$(value "$app_output" gc0) app_gc1=$(value "$app_output" gc1) app_gc2=$(value "$app_output" gc2)
((app_gc0 > 10 && app_gc2 >= 2)) || fail "the app made too few GCs to check: $app_gc0 ($app_gc2 of gen2)"
[[ -s run/runtime.nettrace ]] || fail "no run/runtime.nettrace"
check_nettrace run/runtime.nettrace | tee check.out
# GC.CollectionCount(N) counts collections of generation N or older.
[[ $(value check.out gc) == "$app_gc0" ]] || fail "TraceEvent sees $(value check.out gc) GCs, the app made $app_gc0"
[[ $(value check.out gc2) == "$app_gc2" ]] || fail "TraceEvent sees $(value check.out gc2) gen2 GCs, the app made $app_gc2"
(($(value check.out gc1) + $(value check.out gc2) == app_gc1)) || fail "TraceEvent's gen1+gen2 GCs differ from the app's $app_gc1"
grep -qx 'exception Demo.KnownException 123' check.out || fail "TraceEvent does not see the 123 Demo.KnownException"
(($(value check.out contentions) > 0)) || fail "TraceEvent sees no lock contention"
(($(value check.out rundown) > 0)) || fail "no rundown events at the end of the session"

# profcpu's summary at the end of collect, and its view of the zip, say the same.
expected_gc="GC: $app_gc0 collections (gen0 $(value check.out gc0), gen1 $(value check.out gc1), gen2 $app_gc2)"
for summary in run.out view.out; do
	[[ $summary == view.out ]] && "$PROFCPU" view run/prof.trace.zip >view.out
	grep -qF "$expected_gc" "$summary" || fail "$summary does not say '$expected_gc'"
	grep -qE '^ +123  Demo\.KnownException$' "$summary" || fail "$summary does not count 123 Demo.KnownException"
	grep -qE '^  lock contention: [1-9][0-9]* waits' "$summary" || fail "$summary shows no lock contention"
	# Where threads waited: the summary's top place, the view's heaviest stack.
	grep -qE '(waits  eventmix!|^ +[0-9.]+%  .*)Demo\.Program::ContendedSection(;|$)' "$summary" ||
		fail "$summary does not name the lock site Demo.Program::ContendedSection"
done
# Pause times as TraceEvent's GC analysis (PerfView's GCStats) computes them.
read -r our_total our_longest < <(sed -nE 's/.*pauses ([0-9.]+) ms in total \([0-9.]+% of the time\), longest ([0-9.]+) ms$/\1 \2/p' run.out)
[[ -n $our_total ]] || fail "no GC pause times in the summary"
python3 -c "import sys; sys.exit(0 if abs($our_total - $(value check.out pause-total)) <= 0.2 and abs($our_longest - $(value check.out pause-max)) <= 0.2 else 1)" ||
	fail "GC pauses $our_total ms (longest $our_longest ms) differ from TraceEvent's $(value check.out pause-total) ms ($(value check.out pause-max) ms)"
grep -qF "GC: $app_gc0 collections" run/flamegraph.svg || fail "the flame graph's subtitle does not carry the GC pauses"
python3 -c 'import sys, zipfile; names = zipfile.ZipFile(sys.argv[1]).namelist(); sys.exit(0 if "prof.trace/runtime.nettrace" in names else 1)' run/prof.trace.zip ||
	fail "prof.trace.zip holds no runtime.nettrace"
(($(folded total run/folded_stacks.out) > 0)) || fail "no samples beside the events"

# 2. -gccollectonly -noperf: GC events only, no samples.
collect_workload gconly 5 -gccollectonly -noperf
check_nettrace gconly/runtime.nettrace | tee gconly-check.out
[[ $(value gconly-check.out gc) == "$(value "$app_output" gc0)" ]] || fail "-gccollectonly: TraceEvent sees $(value gconly-check.out gc) GCs, the app made $(value "$app_output" gc0)"
[[ $(value gconly-check.out other-runtime) == 0 ]] || fail "-gccollectonly recorded $(value gconly-check.out other-runtime) runtime events outside GC"
[[ $(value gconly-check.out rundown) == 0 ]] || fail "-gccollectonly recorded the rundown"
! grep -q '^exception ' gconly-check.out || fail "-gccollectonly recorded exceptions"
[[ ! -e gconly/perf.data ]] || fail "-noperf wrote perf.data"
"$PROFCPU" view gconly/prof.trace.zip >gconly-view.out || fail "view of an events-only trace failed"
grep -q 'runtime events only, no samples' gconly-view.out || fail "view does not say the trace holds no samples"
grep -qF "GC: $(value "$app_output" gc0) collections" gconly-view.out || fail "view of -noperf does not count the GCs"

# 3. SIGKILL mid-session: the app keeps running, the next session works.
"$PROFCPU" collect -pid "$app_pid" -o killed >killed.out 2>killed.err &
collect_pid=$!
background_pids+=("$collect_pid")
wait_for_session killed/profcpu.log "$collect_pid"
sleep 1
kill -KILL "$collect_pid"
wait "$collect_pid" 2>/dev/null || true
sleep 1
kill -0 "$app_pid" 2>/dev/null || fail "the app died with the killed profcpu"
"$PROFCPU" collect -pid "$app_pid" -o after -duration 2 -noperf >after.out 2>after.err ||
	{ cat after.err; fail "collect after a killed session failed"; }
grep -q 'EventPipe session' after/profcpu.log || { cat after.err; fail "no event session after a killed one"; }
kill -0 "$app_pid" 2>/dev/null || fail "the app died"
grep -q '^runtime events: [1-9]' after.out || fail "the session after a killed one holds no events"
echo "ok so far: $app_gc0 GCs ($app_gc2 gen2), 123 exceptions, $(value check.out contentions) contentions seen by TraceEvent and profcpu"

# 4. A runtime without its diagnostics socket: one line says why, samples kept.
env DOTNET_EnableDiagnostics=0 dotnet "$workdir/EventMix/eventmix.dll" "$workdir/never" 1 >nodiag-app.out 2>&1 &
nodiag_pid=$!
background_pids+=("$nodiag_pid")
until grep -q ready nodiag-app.out; do sleep 0.1; done
"$PROFCPU" collect -pid "$nodiag_pid" -o nodiag -duration 1 >nodiag.out 2>nodiag.err ||
	{ cat nodiag.err; fail "collect of a .NET app without diagnostics failed"; }
cat nodiag.err
[[ $(grep -c 'no runtime events' nodiag.err) == 1 ]] || fail "no single line saying why there are no runtime events"
grep -q 'no usable diagnostics socket' nodiag.err || fail "the line does not name the missing diagnostics socket"
[[ -s nodiag/perf.data ]] || fail "the samples were not kept"
echo "ok: a runtime without diagnostics gives one line and the samples"
