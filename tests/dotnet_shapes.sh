#!/usr/bin/env bash
# Every way a .NET VERSION (8, 9 or 10) app ships, profiled by `collect` and
# by the agent: tests/dotnet/Shapes published framework-dependent (10 only:
# the one runtime installed here), self-contained, single-file, compressed
# single-file, trimmed and NativeAOT, the runtime packs and compilers from
# NuGet. The app spends its time in Heavy and Light (2:1) and a little in
# the framework's Array.Sort. For each shape: of the samples of its main
# thread (in its methods), at least 99% name every managed frame from the
# app's first to the leaf, and Heavy's share of Heavy and Light is 2/3
# within 5 points.
# A shape whose packages NuGet does not serve here is skipped, saying so.
#
# The agent runs in a PID namespace of its own with the apps: it samples
# them alone, not the machine's other processes. No Pyroscope server can be
# installed here: the receiver is the tests' stand-in
# (tests/pyroscope_receiver.py); each app's last push is read as a profile.
# Usage: dotnet_shapes.sh VERSION
if [[ ${DOTNET_SHAPES_INSIDE:-} != 1 ]]; then
	DOTNET_SHAPES_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

version=${1:?usage: dotnet_shapes.sh VERSION}
dotnet_version_properties "$version"

# shape_arguments SHAPE: the publish options of SHAPE, in $arguments.
shape_arguments() {
	case $1 in
	self-contained) arguments=() ;;
	single-file) arguments=(-p:PublishSingleFile=true) ;;
	compressed) arguments=(-p:PublishSingleFile=true -p:EnableCompressionInSingleFile=true) ;;
	trimmed) arguments=(-p:PublishTrimmed=true) ;;
	native-aot) arguments=(-p:PublishAot=true) ;;
	esac
}

# start_shape DIR FRAMEWORK_DEPENDENT: starts the app for 60 s; its pid in
# $started_pid.
start_shape() {
	local output=$workdir/app-$RANDOM.out
	if [[ $2 == yes ]]; then
		dotnet "$1/shapes.dll" 60 >"$output" 2>&1 &
	else
		"$1/shapes" 60 >"$output" 2>&1 &
	fi
	started_pid=$!
	background_pids+=("$started_pid")
	until grep -q ready "$output" 2>/dev/null; do
		kill -0 "$started_pid" 2>/dev/null || { cat "$output"; fail "the app exited before it was ready"; }
		sleep 0.1
	done
}

# check_shape NAME FOLDED: the assertions above; one line of the summary.
check_shape() {
	local main named heavy light heavy_share
	# The main thread's samples: in the app's methods. (Main itself may be
	# missing: NativeAOT's Heavy and Light keep no frame pointer, and the
	# agent's frame-pointer walk steps from Work over them to Main's caller.)
	main=$(folded count "$2" 'shapes!Demo\.Program::')
	# No managed frame from the app's on is unnamed: "[JIT]", "[shapes]"
	# (code in the executable), "[X.dll]". The runtime's own C++
	# ("[libcoreclr.so]": a call counter, a GC poll) is named only with its
	# debug symbols.
	named=$((main - $(folded count "$2" 'shapes!Demo\.Program::[^;]*;(.*;)?\[(JIT|shapes|[^];]*\.dll)\]')))
	heavy=$(folded count "$2" 'shapes!Demo\.Program::Heavy(;|$)')
	light=$(folded count "$2" 'shapes!Demo\.Program::Light(;|$)')
	((main > 0 && heavy + light > 0)) || { folded top "$2" 5; fail "$1: no samples of the app's methods"; }
	heavy_share=$(python3 -c "print(round(100 * $heavy / ($heavy + $light), 1))")
	summary+=("$(printf '%-28s %6d samples of the app, %5.1f%% named, Heavy %s%% of Heavy and Light' \
		"$1" "$main" "$(python3 -c "print(100 * $named / $main)")" "$heavy_share")")
	((named * 100 >= main * 99)) || { folded top "$2" 5; fail "$1: only $named of $main samples of the app are named"; }
	python3 -c "import sys; sys.exit(0 if abs($heavy_share - 66.7) <= 5 else 1)" ||
		fail "$1: Heavy has $heavy_share% of Heavy and Light, expected 66.7 ± 5"
}

# agent_profile PID FOLDED: waits for two pushes holding samples of PID
# (pprof sample labels: the series is the workload's) that came after the
# call, when the app has run for seconds and the agent has long turned on
# its perf map, and writes that pid's samples in them as folded stacks.
agent_profile() {
	local before
	before=$(ls "$workdir/received" | sed -n 's/\.pb\.gz$//p' | sort -n | tail -1)
	# The app's own samples (a fork of this shell before its exec has its pid).
	until python3 "$tests_dir/agent_folded.py" "$workdir/received" "$1" "$2" --after "${before:-0}" \
		--process shapes --process dotnet; do
		kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent exited"; }
		sleep 0.5
	done
}

start_shapes_agent

summary=()
shapes=(self-contained single-file compressed trimmed native-aot)
[[ $version == 10 ]] && shapes=(framework-dependent "${shapes[@]}")
for shape in "${shapes[@]}"; do
	dir=$workdir/$shape
	if [[ $shape == framework-dependent ]]; then
		build_dotnet_app Shapes "$dir"
	else
		if [[ $shape == native-aot ]] && ! command -v clang >/dev/null; then
			summary+=("$(printf '%-28s skipped: NativeAOT links with clang, not installed' "$shape")")
			continue
		fi
		shape_arguments "$shape"
		status=0
		dotnet_publish Shapes "$dir" "${properties[@]}" "${arguments[@]}" || status=$?
		if ((status == 2)); then
			summary+=("$(printf '%-28s skipped: its packages are not served here (%s)' "$shape" \
				"$(grep -m1 -oE 'NU[0-9]+[^.]*' "$dotnet_build_log" || echo 'restore failed')")")
			continue
		fi
		((status == 0)) || { tail -20 "$dotnet_build_log"; fail "dotnet publish of the $shape shape failed"; }
	fi
	start_shape "$dir" "$([[ $shape == framework-dependent ]] && echo yes || echo no)"
	# Thousands of samples: the split within a point or two of chance.
	"$PROFCPU" collect -pid "$started_pid" -duration 5 -F 999 -o "$workdir/$shape-capture" \
		>/dev/null 2>"$workdir/$shape.err" || { cat "$workdir/$shape.err"; fail "$shape: collect failed"; }
	agent_profile "$started_pid" "$workdir/$shape-agent.folded"
	kill "$started_pid"
	check_shape "$shape" "$workdir/$shape-capture/folded_stacks.out"
	check_shape "$shape (agent)" "$workdir/$shape-agent.folded"
done
echo ".NET $version:"
printf '  %s\n' "${summary[@]}"
