# What every scripts/bench-* does first, sourced by each of them:
#
#     source "$(dirname "$0")/bench-lib.sh"
#     bench_setup NAME [TARGET...]
#
# bench_setup installs the Debian packages, builds this checkout in
# build-release/ (release, no sanitizers; only TARGETs when named), and
# makes an empty work folder, $work, that is removed at exit with every
# process listed in bench_pids killed. It sets $root, $build and $profcpu.
# With PROFCPU_BENCH_BUNDLE=DIR (scripts/bench-bundle's folder, on a
# machine with no registry to install from) nothing is installed or built:
# $build is DIR, whose bin/ (perf and the tools the scripts run) goes first
# on PATH.
# The Python measurements of the scripts import bench_measure.py from here.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${PROFCPU_BENCH_BUNDLE:-$root/build-release}
profcpu="$build/src/profcpu"
export PYTHONPATH="$root/scripts${PYTHONPATH:+:$PYTHONPATH}"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
bench_pids=()
work=

bench_cleanup() {
	local pid
	for pid in "${bench_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
	[[ -z $work ]] || rm -rf "$work"
}

bench_setup() {
	local name=$1
	shift
	if [[ -n ${PROFCPU_BENCH_BUNDLE:-} ]]; then
		PATH=$build/bin:$PATH
	else
		"$root/scripts/install-deps"
		[[ -f "$build/build.ninja" ]] ||
			meson setup "$build" "$root" --buildtype=release -Db_sanitize=none >/dev/null
		meson compile -C "$build" "$@" >/dev/null
	fi
	work=$(mktemp -d "/tmp/profcpu-bench-$name.XXXXXX")
	trap bench_cleanup EXIT
}

# bench_build_dotnet PROJECT: builds tests/dotnet/PROJECT (Release) into
# $work/app from a copy of its folder (dotnet build writes obj/ beside the
# sources). False, with the log in $work/build.log, when it cannot.
bench_build_dotnet() {
	command -v dotnet >/dev/null &&
		cp -r "$root/tests/dotnet/$1" "$work/source" &&
		dotnet build -c Release -o "$work/app" "$work/source/$1.csproj" >"$work/build.log" 2>&1
}

# bench_start OUTPUT COMMAND...: starts COMMAND with its output into OUTPUT,
# killed with the script (its pid in $bench_started and bench_pids); with
# OUTPUT, waits until the program prints "ready" there.
bench_start() {
	local output=$1
	shift
	setpriv --pdeathsig KILL "$@" >"${output:-/dev/null}" 2>&1 &
	bench_started=$!
	bench_pids+=("$bench_started")
	[[ -z $output ]] && return
	until grep -qs ready "$output"; do
		kill -0 "$bench_started" 2>/dev/null || { cat "$output"; exit 1; }
		sleep 0.1
	done
}

# A free TCP port on loopback, for a web workload.
bench_free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}
