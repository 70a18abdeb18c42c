# Shared by the end-to-end tests: source it first. A test exits 0 when it
# passes, 1 when it fails, 77 when this machine cannot run it (it says why).
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workdir=$(mktemp -d /tmp/profcpu-test.XXXXXX)
background_pids=()
test_cgroups=()

# OpenSSL picks its hashing code by CPUID (FACTS.md §8): every test runs the
# same code on every machine, its SSSE3 bodies, with SHA-NI and AVX2 off
# (CPUID leaf 7 EBX bits 29 and 5). PROFCPU_TEST_OPENSSL_IA32CAP picks
# another path ("native": the CPU's own).
openssl_ia32cap=${PROFCPU_TEST_OPENSSL_IA32CAP:-:~0x20000020}
if [[ $openssl_ia32cap == native ]]; then
	unset OPENSSL_ia32cap
else
	export OPENSSL_ia32cap=$openssl_ia32cap
fi

cleanup() {
	for pid in "${background_pids[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
		# A killed .NET runtime leaves its perf map, jitdump and sockets in /tmp.
		rm -f "/tmp/perf-$pid.map" "/tmp/perf-$pid.map.times" "/tmp/jit-$pid.dump" \
			/tmp/dotnet-diagnostic-"$pid"-*-socket /tmp/clr-debug-pipe-"$pid"-*
	done
	remove_test_cgroups
	# A container's monitor may still be writing into the test's podman
	# storage for a moment after the container is removed.
	local attempt
	for attempt in 1 2 3 4 5; do
		rm -rf "$workdir" 2>/dev/null && return
		sleep 1
	done
	echo "warning: could not remove $workdir" >&2
}
trap cleanup EXIT

fail() {
	echo "FAIL: $*" >&2
	exit 1
}

skip() {
	echo "SKIP: $*" >&2
	exit 77
}

# Makes a cgroup in the hierarchy perf events follow (the v1 perf_event one
# when mounted, else cgroup v2) into $test_cgroup; skips the test when it
# cannot. It and the processes put in it go when the test ends.
make_test_cgroup() {
	local hierarchy
	if awk '$1 == "perf_event" && $2 != 0 { found = 1 } END { exit !found }' /proc/cgroups; then
		hierarchy=$(awk '$3 == "cgroup" && $4 ~ /(^|,)perf_event(,|$)/ { print $2; exit }' /proc/mounts)
	else
		hierarchy=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	fi
	[[ -n "$hierarchy" ]] || skip "no cgroup hierarchy for perf events is mounted"
	test_cgroup=$hierarchy/profcpu-test-$$-$RANDOM
	mkdir "$test_cgroup" 2>/dev/null || skip "cannot make a cgroup under $hierarchy (needs root)"
	test_cgroups+=("$test_cgroup")
}

remove_test_cgroups() {
	local cgroup pid
	for cgroup in "${test_cgroups[@]}"; do
		for pid in $(cat "$cgroup/cgroup.procs" 2>/dev/null); do
			kill -9 "$pid" 2>/dev/null || true # only processes the test put there
		done
		for _ in $(seq 50); do rmdir "$cgroup" 2>/dev/null && break; sleep 0.1; done
	done
}

# Starts a command in the background; its pid is in $started_pid.
start() {
	"$@" &
	started_pid=$!
	background_pids+=("$started_pid")
}

# find_process REGEX: the newest process whose command line matches REGEX
# (pgrep -f), waited for up to 5 s; its pid is in $found_pid.
find_process() {
	found_pid=
	for _ in $(seq 100); do
		found_pid=$(pgrep -f -n "$1" || true)
		[[ -n "$found_pid" ]] && return
		sleep 0.05
	done
	fail "no process matches /$1/"
}

folded() {
	python3 "$tests_dir/folded.py" "$@"
}

# assert_share FOLDED REGEX LOW HIGH: the share (in %) of samples whose stack
# matches REGEX lies within [LOW, HIGH].
assert_share() {
	local share
	share=$(folded share "$1" "$2")
	echo "share of /$2/: $share%"
	python3 -c "import sys; sys.exit(0 if $3 <= $share <= $4 else 1)" ||
		fail "share of /$2/ is $share%, expected $3..$4%"
}

# assert_share_about FOLDED REGEX PERCENT: the share of samples whose stack
# matches REGEX is PERCENT, within what chance allows on this many samples
# (four standard errors) plus 2 points. A loaded machine gives the target
# fewer samples, and the margin widens with them.
assert_share_about() {
	local share total margin
	share=$(folded share "$1" "$2")
	total=$(folded total "$1")
	margin=$(python3 -c "import math; p = $3 / 100; print(f'{400 * math.sqrt(p * (1 - p) / max($total, 1)) + 2:.1f}')")
	echo "share of /$2/: $share% (expected $3 ± $margin% on $total samples)"
	python3 -c "import sys; sys.exit(0 if abs($share - $3) <= $margin else 1)" ||
		fail "share of /$2/ is $share%, expected $3 ± $margin%"
}

# CPU time the process has used so far, in clock ticks (1/100 s): user and
# system time, the 12th and 13th fields after the comm (which may hold spaces).
cpu_ticks() {
	awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}

# start_calm_then_spike CALM SPIKE: tests/workloads/calm_then_spike.c (calm
# for CALM seconds, then a spike for SPIKE) in a session of its own, with a
# larger share where the test may give it one (as root): on a loaded
# machine the spike is then still a spike. Its pid in $started_pid.
start_calm_then_spike() {
	start setsid "$WORKLOAD_CALM_THEN_SPIKE" "$@"
	until [[ $(cat "/proc/$started_pid/comm") == workload_calm_t ]]; do sleep 0.01; done
	echo -10 >"/proc/$started_pid/autogroup" 2>/dev/null || true
}

# spike_threshold: into $threshold, a --cpu between the calm (20%) and what
# a busy process gets on this machine now: 60% of one core, lower where the
# machine is so loaded that the spike gets less; skips the test where a
# spike cannot be told from the calm.
spike_threshold() {
	local before busy
	start_calm_then_spike 0 3
	sleep 0.5
	before=$(cpu_ticks "$started_pid")
	sleep 1
	busy=$(($(cpu_ticks "$started_pid") - before))
	kill "$started_pid"
	threshold=$(((20 + busy) / 2 < 60 ? (20 + busy) / 2 : 60))
	echo "a busy process gets $busy% of a core here: --cpu $threshold"
	((threshold >= 30)) || skip "a busy process gets $busy% of a core here: a spike cannot be told from 20%"
}

# assert_samples_match_cpu FOLDED TICKS HZ: the samples kept match the CPU
# time sampled (TICKS, from cpu_ticks) at HZ, within 40%: cpu-clock counts
# CPU time, so a loaded machine that gives the target less CPU gives fewer
# samples in the same ratio.
assert_samples_match_cpu() {
	local kept expected
	kept=$(folded total "$1")
	expected=$(($2 * $3 / 100))
	echo "samples kept: $kept; CPU time sampled: $2 ticks, $expected samples at $3 Hz"
	((expected > 0 && kept * 10 >= expected * 6 && kept * 10 <= expected * 14)) ||
		fail "kept $kept samples for $expected samples' worth of CPU time"
}

assert_file() {
	[[ -s "$1" ]] || fail "missing or empty: $1"
}

# Builds the .NET workload tests/dotnet/HotLoop into $workdir/bin (skips the
# test when the SDK is missing). Run it with: dotnet "$workdir/bin/hotloop.dll" SECONDS
build_hotloop() {
	build_dotnet_app HotLoop "$workdir/bin"
}

# Starts the .NET workload with the environment given as arguments and waits
# until it runs managed code; its pid is in $started_pid.
start_hotloop() {
	local output=$workdir/hotloop-$RANDOM.out
	env "$@" dotnet "$workdir/bin/hotloop.dll" 60 >"$output" &
	started_pid=$!
	background_pids+=("$started_pid")
	until grep -q ready "$output"; do sleep 0.1; done
}

# wait_for_tier1 PID: waits until the hot loop's HotMethod is compiled at its
# final tier (its OptimizedTier1 line in the perf map). A fixed sleep is not
# enough on a loaded machine: tiering takes CPU time, and until it is done
# the time goes to earlier tiers and on-stack-replaced frames.
wait_for_tier1() {
	until grep -qF 'Demo.Program::HotMethod(int32)[OptimizedTier1]' "/proc/$1/root/tmp/perf-$1.map" 2>/dev/null; do
		kill -0 "$1" 2>/dev/null || fail "the hot loop exited before its method was tiered up"
		sleep 0.1
	done
}

reader() {
	python3 "$tests_dir/perf_script_reader.py" "$@"
}

# assert_trace_share TRACE REGEX LOW HIGH: the share (in %) of samples in the
# trace's perf.data.txt with a frame (module!symbol, as PerfView names it)
# matching REGEX lies within [LOW, HIGH].
assert_trace_share() {
	local share
	share=$(reader share "$1" "$2")
	echo "trace share of /$2/: $share%"
	python3 -c "import sys; sys.exit(0 if $3 <= $share <= $4 else 1)" ||
		fail "trace share of /$2/ is $share%, expected $3..$4%"
}

# dotnet_build FOLDER OUTPUT: builds the .NET project in FOLDER into OUTPUT.
# Each content of a folder is built once, in $TEST_CACHE (the build tree's),
# and copied from there: a build costs seconds of CPU and twenty-odd tests
# build the same few projects, some at the same time (the first builds under
# a lock, the others wait for it). Returns 2 when the NuGet restore fails, 1
# when the build does; the log is in $dotnet_build_log.
dotnet_build() {
	local folder=$1 output=$2 key cache status=0
	command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	key=$( (dotnet --version && cd "$folder" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum)
	cache=${TEST_CACHE:-$workdir/cache}/$(basename "$folder")-${key:0:16}
	dotnet_build_log=$cache/build.log
	mkdir -p "$(dirname "$cache")"
	(
		flock 9
		[[ -f $cache/built ]] && exit 0
		rm -rf "$cache" && mkdir "$cache" && cp -r "$folder" "$cache/src" || exit 1
		timeout 90 dotnet restore "$cache/src" >"$dotnet_build_log" 2>&1 || exit 2
		dotnet build --no-restore -c Release -o "$cache/bin" "$cache/src" >>"$dotnet_build_log" 2>&1 || exit 1
		touch "$cache/built"
	) 9>"$cache.lock" || status=$?
	((status == 0)) || return "$status"
	mkdir -p "$output" && cp -r "$cache/bin/." "$output/"
}

# dotnet_publish NAME DIR [ARGS...]: publishes tests/dotnet/NAME for this
# machine (linux-x64 or linux-arm64) into DIR, self-contained, with the
# `dotnet publish` ARGS (-p:PublishSingleFile=true, ...), cached as
# dotnet_build caches builds. Returns 2 when the NuGet restore fails (a
# runtime pack or compiler package not served), 1 when the publish does;
# the log is in $dotnet_build_log. The executable is DIR/<assembly>.
dotnet_publish() {
	local name=$1 output=$2 key cache status=0 rid
	shift 2
	command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	rid=linux-$(uname -m | sed 's/x86_64/x64/; s/aarch64/arm64/')
	key=$( (dotnet --version && echo "$rid $*" && cd "$tests_dir/dotnet/$name" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum)
	cache=${TEST_CACHE:-$workdir/cache}/$name-publish-${key:0:16}
	dotnet_build_log=$cache/build.log
	mkdir -p "$(dirname "$cache")"
	(
		flock 9
		[[ -f $cache/built ]] && exit 0
		rm -rf "$cache" && mkdir "$cache" && cp -r "$tests_dir/dotnet/$name" "$cache/src" || exit 1
		timeout 300 dotnet restore -r "$rid" "$@" "$cache/src" >"$dotnet_build_log" 2>&1 || exit 2
		dotnet publish --no-restore -c Release -r "$rid" --self-contained "$@" -o "$cache/bin" \
			"$cache/src" >>"$dotnet_build_log" 2>&1 || exit 1
		touch "$cache/built"
	) 9>"$cache.lock" || status=$?
	((status == 0)) || return "$status"
	mkdir -p "$output" && cp -r "$cache/bin/." "$output/"
}

# publish_dotnet_app NAME DIR [ARGS...]: dotnet_publish, skipping the test
# when the packages cannot be restored from this machine's NuGet sources.
publish_dotnet_app() {
	local status=0
	dotnet_publish "$@" || status=$?
	((status != 2)) ||
		skip "the packages to publish $1 (${*:3}) cannot be restored from this machine's NuGet sources: $(grep -m1 -E 'error|NU[0-9]+' "$dotnet_build_log" || tail -1 "$dotnet_build_log")"
	((status == 0)) || { tail -20 "$dotnet_build_log"; fail "dotnet publish of $1 (${*:3}) failed"; }
}

# dotnet_version_properties VERSION: the publish properties ($properties)
# that make a self-contained app of .NET VERSION (8, 9 or 10: 8 and 9 from
# NuGet's runtime packs; 10 is the SDK's own).
dotnet_version_properties() {
	case $1 in
	8) properties=(-p:TargetFramework=net8.0 -p:RuntimeFrameworkVersion=8.0.34) ;;
	9) properties=(-p:TargetFramework=net9.0 -p:RuntimeFrameworkVersion=9.0.23) ;;
	10) properties=() ;;
	*) fail "no such .NET version in this test: $1 (8, 9 or 10)" ;;
	esac
}

# start_receiver_and_agent OPTION...: the stand-in Pyroscope receiver
# (tests/pyroscope_receiver.py, its pushes in $workdir/received), then an
# agent pushing to it with OPTIONS, its spool $workdir/spool; its pid in
# $agent_pid, its stderr in $workdir/agent.err.
start_receiver_and_agent() {
	local port
	port=$(free_port)
	mkdir "$workdir/received"
	start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
	until [[ -e $workdir/received/ready ]]; do sleep 0.1; done
	start "$PROFCPU" agent --push "http://127.0.0.1:$port" --push-timeout 60 \
		--spool "$workdir/spool" "$@" 2>"$workdir/agent.err"
	agent_pid=$started_pid
}

# start_shapes_agent: the receiver and an agent pushing to it every 3 s at
# 999 Hz, as the tests of how .NET apps ship read it (agent_folded.py).
start_shapes_agent() {
	start_receiver_and_agent --push-interval 3 -F 999
}

# build_dotnet_app NAME [DIR]: builds the .NET app tests/dotnet/NAME into DIR
# (default $workdir/NAME; skips the test when the SDK is missing); its dll is
# DIR/<assembly>.dll.
build_dotnet_app() {
	dotnet_build "$tests_dir/dotnet/$1" "${2:-$workdir/$1}" ||
		{ tail -20 "$dotnet_build_log"; fail "dotnet build of $1 failed"; }
}

# start_dotnet_app DLL [ARGS...]: starts a built app (with the environment
# already exported) and waits until it prints "ready"; its pid is in
# $started_pid and its output in $started_output.
start_dotnet_app() {
	start_until_ready dotnet "$@"
}

# start_until_ready COMMAND...: starts a program that prints "ready" once it
# runs (the tests' .NET apps); its pid in $started_pid, its output in
# $started_output.
start_until_ready() {
	started_output=$workdir/app-$RANDOM.out
	"$@" >"$started_output" 2>&1 &
	started_pid=$!
	background_pids+=("$started_pid")
	until grep -q ready "$started_output"; do
		kill -0 "$started_pid" 2>/dev/null || { cat "$started_output"; fail "$* exited before it was ready"; }
		sleep 0.1
	done
}

# start_dynreuse NAME ENV...: tests/dotnet/DynReuse (built by
# build_dotnet_app DynReuse), a new dynamic method every 1.2 s or so, for
# long, run with ENV; its output in $workdir/NAME.out, its pid in
# $started_pid.
start_dynreuse() {
	local name=$1
	shift
	env "$@" dotnet "$workdir/DynReuse/dynreuse.dll" 1000 0.2 >"$workdir/$name.out" 2>&1 &
	started_pid=$!
	background_pids+=("$started_pid")
	until grep -qs ready "$workdir/$name.out"; do sleep 0.05; done
}

# perf_files_sizes PID: its perf map's and jitdump's sizes.
perf_files_sizes() {
	echo "$(stat -c %s "/tmp/perf-$1.map") $(stat -c %s "/tmp/jit-$1.dump")"
}

# dynreuse_phases_later NAME PID COUNT: waits until the DynReuse started as
# NAME has begun COUNT more phases (each a new dynamic method, compiled)
# than it had.
dynreuse_phases_later() {
	local goal=$(($(grep -c '^phase' "$workdir/$1.out") + $3))
	until (($(grep -c '^phase' "$workdir/$1.out") >= goal)); do
		kill -0 "$2" 2>/dev/null || fail "$1: DynReuse exited"
		sleep 0.1
	done
}

# A free TCP port on loopback, for a test's web app.
free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# build_traceevent_checker NAME: builds the checker project tests/NAME, which
# reads our outputs with TraceEvent (NuGet Microsoft.Diagnostics.Tracing.TraceEvent),
# into $workdir/NAME-bin; skips the test when the package cannot be restored
# from this machine's NuGet sources.
build_traceevent_checker() {
	local status=0
	dotnet_build "$tests_dir/$1" "$workdir/$1-bin" || status=$?
	((status != 2)) ||
		skip "Microsoft.Diagnostics.Tracing.TraceEvent cannot be restored from this machine's NuGet sources: $(grep -m1 -E 'error|NU[0-9]+' "$dotnet_build_log" || tail -1 "$dotnet_build_log")"
	((status == 0)) || { tail -20 "$dotnet_build_log"; fail "the checker $1 does not build"; }
}

# with_switch_route ROUTE COMMAND...: runs COMMAND where off-CPU time takes
# ROUTE, "software" (the event context-switches: tracefs unmounted, as on a
# fresh host and in every container) or "tracepoint" (sched:sched_switch:
# tracefs mounted), in a private mount namespace (unshare --mount), so that
# the host's mounts stay as they are; skips the test where that cannot be.
with_switch_route() {
	local route=$1 setup
	shift
	command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
	if [[ $route == tracepoint ]]; then
		setup='mountpoint -q /sys/kernel/tracing || mount -t tracefs nodev /sys/kernel/tracing || exit 97
[ -r /sys/kernel/tracing/events/sched/sched_switch/id ] || exit 98'
	else
		setup='for dir in /sys/kernel/tracing /sys/kernel/debug/tracing; do
	! mountpoint -q "$dir" || umount -l "$dir" || exit 97
done'
	fi
	local status=0
	unshare --mount --propagation private sh -c "$setup"'
exec "$@"' sh "$@" || status=$?
	((status != 97)) || skip "cannot mount or unmount tracefs in a private mount namespace (needs root)"
	((status != 98)) || skip "this kernel has no tracepoint sched:sched_switch"
	return "$status"
}

# twoloops_pprof_lines DIR: "LINE SAMPLES" for each line of a TwoLoops
# app's TwoLoops (tests/dotnet/TwoLoops, R2RTwoLoops) in go tool pprof
# -top -lines of DIR/profile.pb.gz ("flat flat% sum% cum cum% NAME
# FILE:LINE"), and "none SAMPLES" for its samples on no line.
twoloops_pprof_lines() {
	go tool pprof -top -lines -sample_index=samples "$1/profile.pb.gz" >"$workdir/top.txt" 2>&1 ||
		{ cat "$workdir/top.txt"; fail "go tool pprof cannot read profile.pb.gz"; }
	grep -E 'Program::(TwoLoops|Main)' "$workdir/top.txt" >&2
	awk '$6 ~ /Program::TwoLoops$/ && $1 > 0 {
		line = $7 ~ /\/Program\.cs:[0-9]+$/ ? $7 : "none"; sub(/.*:/, "", line); count[line] += $1 }
		END { for (line in count) print line, count[line] }' "$workdir/top.txt"
}

# assert_twoloops_split LINES: of TwoLoops' samples in LINES (what
# twoloops_pprof_lines wrote), 95% or more are on its loops' lines $first
# and $second, about two thirds and a third; their sum in $on_lines.
assert_twoloops_split() {
	local first_samples second_samples method_samples
	first_samples=$(awk -v line="$first" '$1 == line { print $2 }' "$1")
	second_samples=$(awk -v line="$second" '$1 == line { print $2 }' "$1")
	method_samples=$(awk '{ total += $2 } END { print total + 0 }' "$1")
	[[ -n $first_samples && -n $second_samples ]] ||
		fail "pprof shows no samples of TwoLoops on Program.cs:$first and :$second"
	on_lines=$((first_samples + second_samples))
	((on_lines * 100 >= method_samples * 95)) ||
		fail "only $on_lines of TwoLoops' $method_samples samples are on its two lines"
	about "pprof, line $first" "$(python3 -c "print(round(100 * $first_samples / $on_lines, 1))")" 66.7 "$on_lines"
	about "pprof, line $second" "$(python3 -c "print(round(100 * $second_samples / $on_lines, 1))")" 33.3 "$on_lines"
}

# assert_hot_function LISTING ASSEMBLY: the listing (hot_lines.txt, profcpu
# lines) names TwoLoops once, as the folded stacks name it
# ("ASSEMBLY!Demo.Program::TwoLoops": no return type, parameters or tier),
# every tier it ran in together, with its source file.
assert_hot_function() {
	local headers
	headers=$(grep -cE '^ *[0-9.]+% .*Program::TwoLoops' "$1" || true)
	[[ $headers == 1 ]] || fail "$1 lists TwoLoops $headers times (not once)"
	grep -qE "^ *[0-9.]+% $2!Demo\.Program::TwoLoops  \S*/Program\.cs( |\$)" "$1" ||
		fail "$1 does not name TwoLoops $2!Demo.Program::TwoLoops, with its file"
}

# assert_shares_agree NAME_A FOLDED_A NAME_B FOLDED_B POINTS REGEX...: each
# REGEX's share of the samples in FOLDED_A is within POINTS of its share in
# FOLDED_B (the second opinion), where it is not 0.
assert_shares_agree() {
	local name_a=$1 a=$2 name_b=$3 b=$4 points=$5 regex share_a share_b
	shift 5
	for regex in "$@"; do
		share_a=$(folded share "$a" "$regex")
		share_b=$(folded share "$b" "$regex")
		echo "/$regex/: $name_a $share_a%, $name_b $share_b%"
		python3 -c "import sys; sys.exit(0 if abs($share_a - $share_b) <= $points and $share_b > 0 else 1)" ||
			fail "/$regex/: $name_a $share_a% against $name_b $share_b%"
	done
}

# about NAME SHARE PERCENT SAMPLES: SHARE (in %) is PERCENT within what
# chance allows on SAMPLES samples (four standard errors) plus 3 points.
about() {
	python3 - "$@" <<'PY' || fail "$1 is $2%, expected about $3%"
import math, sys
name, share, expected, samples = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4])
p = expected / 100
margin = 400 * math.sqrt(p * (1 - p) / max(samples, 1)) + 3
print(f"{name}: {share}% (expected {expected} ± {margin:.1f}% on {samples} samples)")
sys.exit(0 if abs(share - expected) <= margin else 1)
PY
}
