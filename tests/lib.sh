# Shared by the end-to-end tests: source it first. A test exits 0 when it
# passes, 1 when it fails, 77 when this machine cannot run it (it says why).
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workdir=$(mktemp -d /tmp/profcpu-test.XXXXXX)
background_pids=()
test_cgroups=()

cleanup() {
	for pid in "${background_pids[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
	done
	remove_test_cgroups
	rm -rf "$workdir"
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

assert_file() {
	[[ -s "$1" ]] || fail "missing or empty: $1"
}

# Builds the .NET workload tests/dotnet/HotLoop into $workdir/bin (skips the
# test when the SDK is missing). Run it with: dotnet "$workdir/bin/hotloop.dll" SECONDS
build_hotloop() {
	command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
	cp -r "$tests_dir/dotnet/HotLoop" "$workdir/app"
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	dotnet build -c Release -o "$workdir/bin" "$workdir/app/HotLoop.csproj" >"$workdir/build.log" 2>&1 ||
		{ tail -20 "$workdir/build.log"; fail "dotnet build failed"; }
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

# Builds the .NET app tests/dotnet/NAME into $workdir/NAME (skips the test
# when the SDK is missing); its dll is $workdir/NAME/<assembly>.dll.
build_dotnet_app() {
	command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
	cp -r "$tests_dir/dotnet/$1" "$workdir/$1-src"
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	dotnet build -c Release -o "$workdir/$1" "$workdir/$1-src/$1.csproj" >"$workdir/$1-build.log" 2>&1 ||
		{ tail -20 "$workdir/$1-build.log"; fail "dotnet build of $1 failed"; }
}

# start_dotnet_app DLL [ARGS...]: starts a built app (with the environment
# already exported) and waits until it prints "ready"; its pid is in
# $started_pid and its output in $started_output.
start_dotnet_app() {
	started_output=$workdir/app-$RANDOM.out
	dotnet "$@" >"$started_output" 2>&1 &
	started_pid=$!
	background_pids+=("$started_pid")
	until grep -q ready "$started_output"; do
		kill -0 "$started_pid" 2>/dev/null || { cat "$started_output"; fail "$1 exited before it was ready"; }
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
	command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
	export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
	cp -r "$tests_dir/$1" "$workdir/$1-src"
	timeout 90 dotnet restore "$workdir/$1-src" >"$workdir/$1-restore.log" 2>&1 ||
		skip "Microsoft.Diagnostics.Tracing.TraceEvent cannot be restored from this machine's NuGet sources: $(grep -m1 -E 'error|NU[0-9]+' "$workdir/$1-restore.log" || tail -1 "$workdir/$1-restore.log")"
	dotnet build --no-restore -c Release -o "$workdir/$1-bin" "$workdir/$1-src" \
		>"$workdir/$1-build.log" 2>&1 || { tail -20 "$workdir/$1-build.log"; fail "the checker $1 does not build"; }
}
