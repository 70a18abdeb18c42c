# Shared by the end-to-end tests: source it first. A test exits 0 when it
# passes, 1 when it fails, 77 when this machine cannot run it (it says why).
set -euo pipefail

tests_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
workdir=$(mktemp -d /tmp/profcpu-test.XXXXXX)
background_pids=()

cleanup() {
	for pid in "${background_pids[@]}"; do
		kill -9 "$pid" 2>/dev/null || true
	done
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
