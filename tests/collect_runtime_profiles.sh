#!/usr/bin/env bash
# The .NET runtime's events with stacks as profiles: a real app
# (tests/dotnet/EventStacks) allocates twice as many bytes in AllocateA as
# in AllocateB, waits twice as long on LockA (two threads in WaitOnA) as on
# LockB (one in WaitOnB) and for EventA (WaitForA) as for EventB, and throws
# twice as many exceptions from ThrowA as from ThrowB, while profcpu samples
# it with -events contention,exceptions,alloc,waits; one thread of its own
# holds the locks the others wait on, and the app prints its OS thread id:
# contention.pb.gz's lock_owner_tid label names it for at least 90% of each
# lock's wait (go tool pprof -tags), and the summary and profcpu view name
# it first among the threads that held the locks. Each profile
# (contention, waits, exceptions, alloc: folded stacks, flame graph, pprof)
# splits 2:1 within 10%, the exceptions counted are those the app caught
# and TraceEvent saw, at least 95% of each profile's weight lies under named
# frames, go tool pprof reads each file with its sample types, and
# TraceEvent's TraceLog (what PerfView's GC Heap Alloc and contention views
# are built on) finds a stack on 99% of such events of runtime.nettrace.
# postprocess -dir, offline, names the stacks the same. .NET 10's randomized
# allocation samples (-events allocsampled) estimate the bytes the app
# allocated. On .NET 10 (the SDK's) and .NET 8 (published self-contained
# with its runtime pack from NuGet: that part skips where NuGet cannot be
# reached; .NET 8 has no wait-handle events).
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || skip "go (Debian's golang-go) is not installed: no go tool pprof"
build_traceevent_checker nettrace_check
build_dotnet_app EventStacks
cd "$workdir"

# value FILE KEY: the field after KEY at the start of a line of FILE.
value() {
	awk -v key="$1" '$1 == key {print $2; exit}' "$2"
}

# assert_two_to_one WHAT A B: A is twice B, within 10%.
assert_two_to_one() {
	echo "$1: $2 against $3"
	python3 -c "import sys; a, b = $2, $3; sys.exit(0 if b > 0 and 1.8 <= a / b <= 2.2 else 1)" ||
		fail "$1: $2 against $3 is not 2:1 within 10%"
}

# check_pprof FILE INDEX METHOD: go tool pprof -top reads FILE with the sample
# type INDEX and shows METHOD.
check_pprof() {
	local file=$1 index=$2 method=$3
	go tool pprof -top -sample_index="$index" "$file" >"$file.top" 2>&1 || { cat "$file.top"; fail "go tool pprof cannot read $file"; }
	grep -q "^Type: $index$" "$file.top" || { cat "$file.top"; fail "$file has no sample type $index"; }
	grep -q "$method" "$file.top" || { cat "$file.top"; fail "go tool pprof -sample_index=$index shows no $method in $file"; }
}

# capture RUN ROUNDS EVENTS COMMAND...: starts the app as COMMAND TRIGGER
# ROUNDS, samples it into the folder RUN with -events EVENTS until the app is
# done, and leaves the app's pid in $app_pid, its output in $app_output.
capture() {
	local run=$1 rounds=$2 events=$3 collect_pid
	shift 3
	echo "--- $run: $*"
	app_output=$workdir/$run-app.out
	"$@" "$workdir/go-$run" "$rounds" >"$app_output" 2>&1 &
	app_pid=$!
	background_pids+=("$app_pid")
	until grep -q ready "$app_output" 2>/dev/null; do
		kill -0 "$app_pid" 2>/dev/null || { cat "$app_output"; fail "$* exited before it was ready"; }
		sleep 0.1
	done
	"$PROFCPU" collect -pid "$app_pid" -o "$run" -events "$events" >"$run.out" 2>"$run.err" &
	collect_pid=$!
	background_pids+=("$collect_pid")
	until grep -q 'EventPipe session' "$run/profcpu.log" 2>/dev/null; do
		kill -0 "$collect_pid" 2>/dev/null || { cat "$run.err"; fail "collect exited before its event session started"; }
		sleep 0.1
	done
	touch "go-$run"
	until grep -q done "$app_output"; do
		kill -0 "$app_pid" 2>/dev/null || { cat "$app_output"; fail "the app exited"; }
		sleep 0.2
	done
	kill -INT "$collect_pid"
	wait "$collect_pid" || { cat "$run.err"; fail "collect failed"; }
	cat "$app_output" "$run.out"
}

# owner_share FILE METHOD TID: the share (%) of the time waited in METHOD
# that contention.pb.gz FILE labels as held by the thread TID.
owner_share() {
	go tool pprof -tags -sample_index=delay -focus="$2" "$1" 2>/dev/null |
		awk -v tid="$3" '/^ *[^ ]+: Total/ {section = $1} section == "lock_owner_tid:" && $NF == tid {
			match($0, /\( *[0-9.]+%\)/); print substr($0, RSTART + 1, RLENGTH - 3) + 0; found = 1; exit }
			END {if (!found) print 0}'
}

# check_runtime RUN WAITS COMMAND...: 100 rounds of the app as COMMAND,
# sampled into the folder RUN with allocation ticks and wait-handle waits;
# checks the profiles, the waits' when WAITS is yes (.NET 9 and later).
check_runtime() {
	local run=$1 waits=$2 contention exceptions alloc waited caught holder share method
	shift 2
	capture "$run" 100 contention,exceptions,alloc,waits "$@"

	# 1. Each profile's split, named as the CPU samples are.
	contention=$run/contention_folded_stacks.out exceptions=$run/exceptions_folded_stacks.out
	alloc=$run/alloc_folded_stacks.out
	for file in "$contention" "$exceptions" "$alloc" "$run/contention_flamegraph.svg" "$run/exceptions_flamegraph.svg" \
		"$run/alloc_flamegraph.svg" "$run/contention.pb.gz" "$run/exceptions.pb.gz" "$run/alloc.pb.gz"; do
		[[ -s $file ]] || fail "no $file"
	done
	assert_two_to_one "time waited in WaitOnA and WaitOnB (ns)" \
		"$(folded count "$contention" 'Demo\.Program::WaitOnA(;|$)')" "$(folded count "$contention" 'Demo\.Program::WaitOnB(;|$)')"
	assert_two_to_one "exceptions from ThrowA and ThrowB" \
		"$(folded count "$exceptions" 'Demo\.Program::ThrowA;.*Demo\.KnownException$')" \
		"$(folded count "$exceptions" 'Demo\.Program::ThrowB;.*Demo\.KnownException$')"
	assert_two_to_one "bytes allocated in AllocateA and AllocateB" \
		"$(folded count "$alloc" 'Demo\.Program::AllocateA;System\.Byte\[\]$')" \
		"$(folded count "$alloc" 'Demo\.Program::AllocateB;System\.Byte\[\]$')"
	# Waits on wait handles: WaitForA (two threads) against WaitForB (one).
	if [[ $waits == yes ]]; then
		assert_two_to_one "time waited for EventA and EventB (ns)" \
			"$(folded count "$run/waits_folded_stacks.out" 'Demo\.Program::WaitForA(;|$)')" \
			"$(folded count "$run/waits_folded_stacks.out" 'Demo\.Program::WaitForB(;|$)')"
		check_pprof "$run/waits.pb.gz" delay Demo.Program::WaitForA
	else
		[[ ! -e $run/waits_folded_stacks.out ]] || fail "a runtime before .NET 9 gave waits on wait handles"
	fi
	# The app waited about 20 ms a round in each of three threads. (.NET 8's
	# lock waits in native code: WaitOnA is the leaf there.)
	waited=$(folded count "$contention" 'Demo\.Program::WaitOn[AB](;|$)')
	((waited > 100 * 3 * 15 * 1000000)) || fail "only $waited ns waited in WaitOnA and WaitOnB over 100 rounds of 20 ms"
	# The thread that held the locks, named on the waits for each.
	holder=$(value holder-tid "$app_output")
	for method in Demo.Program::WaitOnA Demo.Program::WaitOnB; do
		share=$(owner_share "$run/contention.pb.gz" "$method" "$holder")
		echo "time waited in $method labelled as held by the holder thread $holder: $share%"
		python3 -c "import sys; sys.exit(0 if $share >= 90 else 1)" ||
			{ go tool pprof -tags -sample_index=delay "$run/contention.pb.gz"; fail "contention.pb.gz names the holder thread $holder for only $share% of the wait in $method"; }
	done
	grep -A1 '^    by the thread that held the lock:$' "$run.out" | tail -1 | grep -qE " waits  tid $holder$" ||
		fail "the summary does not name the holder thread $holder first among the threads that held the locks"
	# Every exception the app caught, counted once.
	caught=$(value exceptions "$app_output")
	[[ $(folded count "$exceptions" 'Demo\.KnownException$') == "$caught" ]] ||
		fail "exceptions_folded_stacks.out counts $(folded count "$exceptions" 'Demo\.KnownException$') Demo.KnownException, the app caught $caught"
	grep -qE "^ +$((caught * 2 / 3))  Demo\.KnownException  in eventstacks!Demo\.Program::ThrowA$" "$run.out" ||
		fail "the summary does not count $((caught * 2 / 3)) exceptions thrown in ThrowA"
	grep -qE '^ +[0-9.]+ ms +[0-9]+ waits  eventstacks!Demo\.Program::WaitOnA$' "$run.out" ||
		fail "the summary does not name WaitOnA as where threads waited"
	grep -qE '^ +[0-9.]+ MB  System\.Byte\[\]  in eventstacks!Demo\.Program::AllocateA$' "$run.out" ||
		fail "the summary does not name AllocateA as where System.Byte[] was allocated"
	# At least 95% of each profile's weight under named frames.
	while read -r share; do
		python3 -c "import sys; sys.exit(0 if $share <= 5 else 1)" || fail "$share% of a profile's weight is under no named frame"
	done < <(sed -nE 's/^profcpu: .*: [0-9]+ events, ([0-9.]+)% under no named frame$/\1/p' "$run.out")
	[[ $(grep -c 'under no named frame' "$run.out") == $([[ $waits == yes ]] && echo 4 || echo 3) ]] ||
		fail "the summary does not give each profile"

	# 2. go tool pprof reads each with its sample types.
	check_pprof "$run/contention.pb.gz" delay Demo.Program::WaitOnA
	check_pprof "$run/contention.pb.gz" contentions Demo.Program::WaitOnB
	check_pprof "$run/exceptions.pb.gz" exceptions Demo.Program::ThrowA
	check_pprof "$run/alloc.pb.gz" alloc_space Demo.Program::AllocateA
	check_pprof "$run/alloc.pb.gz" alloc_objects Demo.Program::AllocateB
	# pprof's total of exceptions is the folded stacks' total.
	grep -qE "of $(folded total "$exceptions") total" "$run/exceptions.pb.gz.top" ||
		{ cat "$run/exceptions.pb.gz.top"; fail "go tool pprof's total of exceptions is not $(folded total "$exceptions")"; }

	# 3. TraceEvent: the same exceptions, and a stack on the events PerfView's views use.
	dotnet "$workdir/nettrace_check-bin/NettraceCheck.dll" "$run/runtime.nettrace" | tee check.out
	grep -qx "exception Demo.KnownException $caught" check.out || fail "TraceEvent does not count the $caught exceptions"
	for kind in alloc contention exception; do
		read -r with_stack all < <(awk -v kind="$kind" '$1 == "stacked" && $2 == kind {print $3, $4}' check.out)
		# (One allocation tick in some runs comes without one.)
		((all > 0 && with_stack * 100 >= all * 99)) ||
			fail "TraceEvent finds a stack on ${with_stack:-0} of ${all:-0} $kind events"
	done
	assert_two_to_one "TraceEvent's waits in WaitOnA and WaitOnB" \
		"$(awk '$1 == "site" && $3 == "Demo.Program.WaitOnA" {print $4}' check.out)" \
		"$(awk '$1 == "site" && $3 == "Demo.Program.WaitOnB" {print $4}' check.out)"

	# 4. The archives hold them, profcpu view shows them; postprocess, offline,
	# names them the same.
	python3 - "$run/prof.trace.zip" <<'PY' || fail "prof.trace.zip does not hold the runtime profiles"
import sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
wanted = [f"prof.trace/{kind}_{suffix}" for kind in ("contention", "exceptions", "alloc")
          for suffix in ("folded_stacks.out", "flamegraph.svg")]
sys.exit(0 if all(name in names for name in wanted) else 1)
PY
	tar -tzf "$run/prof.tar.gz" >listing
	grep -qx "$run/alloc.pb.gz" listing || fail "prof.tar.gz does not hold alloc.pb.gz"
	"$PROFCPU" view "$run/prof.trace.zip" >view.out || fail "profcpu view failed"
	grep -qE '^ +66\.7%  .*Demo\.Program::ThrowA;.*Demo\.KnownException$' view.out ||
		{ cat view.out; fail "profcpu view does not show two thirds of the exceptions thrown in ThrowA"; }
	grep -qE "^exceptions: $caught thrown in all" view.out || fail "profcpu view does not count $caught exceptions"
	grep -A1 '^    by the thread that held the lock:$' view.out | tail -1 | grep -qE " waits  tid $holder$" ||
		{ cat view.out; fail "profcpu view does not name the holder thread $holder first among the threads that held the locks"; }
	cp "$contention" contention-live.out
	"$PROFCPU" postprocess -dir "$run" >postprocess.out 2>postprocess.err || { cat postprocess.err; fail "postprocess failed"; }
	cmp -s contention-live.out "$contention" || fail "postprocess -dir names the waits otherwise than collect did"
	grep -qE 'waits  eventstacks!Demo\.Program::WaitOnA$' postprocess.out || fail "postprocess does not name WaitOnA"
	kill "$app_pid"
	echo "ok: $run: contention, exceptions and allocations split 2:1 and named; $caught exceptions"
}

check_runtime net10 yes dotnet "$workdir/EventStacks/eventstacks.dll"

# .NET 10's randomized allocation samples (-events allocsampled): each
# object weighed by its chance to be sampled, the estimate is the bytes the
# app allocated (GC.GetAllocatedBytesForCurrentThread) within 10%, split 2:1.
# 300 rounds: about 9,000 samples, so 2:1 holds within 10% at 4.5 standard
# errors.
capture sampled 300 contention,exceptions,allocsampled dotnet "$workdir/EventStacks/eventstacks.dll"
estimated_a=$(folded count sampled/alloc_folded_stacks.out 'Demo\.Program::AllocateA;System\.Byte\[\]$')
estimated_b=$(folded count sampled/alloc_folded_stacks.out 'Demo\.Program::AllocateB;System\.Byte\[\]$')
assert_two_to_one "estimated bytes allocated in AllocateA and AllocateB" "$estimated_a" "$estimated_b"
allocated=$(($(value allocated-a "$app_output") + $(value allocated-b "$app_output")))
echo "estimated $((estimated_a + estimated_b)) bytes, the app allocated $allocated"
python3 -c "import sys; sys.exit(0 if abs($estimated_a + $estimated_b - $allocated) <= 0.1 * $allocated else 1)" ||
	fail "the samples estimate $((estimated_a + estimated_b)) bytes allocated in AllocateA and AllocateB, the app allocated $allocated"
go tool pprof -top -sample_index=alloc_space sampled/alloc.pb.gz | grep -q 'Demo.Program::AllocateA' ||
	fail "go tool pprof does not read the sampled allocations"
kill "$app_pid"
publish_dotnet_app EventStacks "$workdir/net8" -p:Net8=true
check_runtime net8 no "$workdir/net8/eventstacks"
