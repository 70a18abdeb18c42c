#!/usr/bin/env bash
# A compressed single-file .NET app (-p:EnableCompressionInSingleFile=true)
# without the diagnostics IPC (DOTNET_EnableDiagnostics=0: no perf map, no
# jitdump): the runtime inflates each assembly it stores into memory and
# copies it there as it would lay its file out, so the precompiled
# (ReadyToRun) code runs from anonymous memory. collect recognises those
# copies by their headers, as assemblies the executable's bundle manifest
# lists, and names their code from the assemblies inflated from the
# executable: the app's own methods (published ReadyToRun, call counting
# off so that they stay in that code) and the framework's. A postprocess
# after the app is gone names them again from the executable, and finds
# Heavy's source lines in the PDB beside it (with the IPC too, for the code
# the JIT compiles again); for .NET 10, in a PDB embedded
# in shapes.dll too (-p:DebugType=embedded; the SDK then stores shapes.dll
# uncompressed, mapped from the executable). The SDK refuses to store a
# PDB in the app for .NET 5 and later (NETSDK1142).
# tests/dotnet/Shapes spends its time in Heavy and Light (2:1) and a little
# in Array.Sort. For .NET VERSION (8, 9 or 10), the runtime pack and
# crossgen2 from NuGet; skipped when NuGet does not serve them here.
# The agent names the app the same way; it runs in a PID namespace of its
# own with the app, which it samples alone (the receiver is the tests'
# stand-in for Pyroscope, tests/pyroscope_receiver.py).
# Usage: collect_dotnet_compressed.sh VERSION
if [[ ${COMPRESSED_INSIDE:-} != 1 ]]; then
	COMPRESSED_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

version=${1:?usage: collect_dotnet_compressed.sh VERSION}
dotnet_version_properties "$version"

# Not composite: .NET 10's SDK otherwise compiles a self-contained
# single-file app and its framework into one composite image, which leaves
# the sort of ints to the JIT (unnamed without the IPC; the composite's own
# code is named as the separate images' is).
compressed=(-p:PublishSingleFile=true -p:EnableCompressionInSingleFile=true
	-p:PublishReadyToRun=true -p:PublishReadyToRunComposite=false)
publish_dotnet_app Shapes "$workdir/app" "${properties[@]}" "${compressed[@]}"
[[ -f $workdir/app/shapes.pdb ]] || fail "single-file publish left no shapes.pdb beside the app"

# start_app DIR: the app in DIR without the IPC; its pid in $pid.
start_app() {
	start_until_ready env DOTNET_EnableDiagnostics=0 DOTNET_TC_CallCounting=0 "$1/shapes" 60
	pid=$started_pid
}

# check_lines FOLDED: Heavy's frames carry their line.
check_lines() {
	assert_share "$1" 'shapes!Demo\.Program::Heavy Program\.cs:[0-9]+;' 30 100
}

start_app "$workdir/app"
! grep -q 'shapes\.dll' "/proc/$pid/maps" || fail "the app maps shapes.dll: not the shape under test"

# check_named FOLDED: the main thread's samples (those under Main) hold
# Heavy's and Light's, at least 99% name every frame from Main to the
# leaf, and Heavy has 2/3 of Heavy and Light within 5 points.
check_named() {
	local main unnamed heavy light
	folded top "$1" 3
	main=$(folded count "$1" 'shapes!Demo\.Program::Main\b')
	unnamed=$(folded count "$1" 'shapes!Demo\.Program::Main\b[^;]*;(.*;)?\[(JIT|shapes|[^];]*\.dll|unknown)\]')
	heavy=$(folded count "$1" 'shapes!Demo\.Program::Heavy\b')
	light=$(folded count "$1" 'shapes!Demo\.Program::Light\b')
	echo "$main samples under Main, $unnamed with an unnamed frame; Heavy $heavy, Light $light"
	((main > 0 && heavy + light > 0)) || fail "no samples of the app's methods"
	# Rooted: each sample of Heavy or Light has Main above it.
	((main >= heavy + light)) || fail "$((heavy + light - main)) samples of Heavy or Light lack Main above them"
	((unnamed * 100 <= main)) || fail "$unnamed of $main samples under Main have an unnamed frame"
	python3 -c "import sys; sys.exit(0 if abs(100 * $heavy / ($heavy + $light) - 66.7) <= 5 else 1)" ||
		fail "Heavy has $heavy of $((heavy + light)) samples of Heavy and Light, expected 2/3 within 5 points"
	assert_share "$1" 'shapes!Demo\.Program::Framework\b[^;]*;System\.Private\.CoreLib!System\.' 0.1 100
}

"$PROFCPU" collect -pid "$pid" -duration 5 -F 999 -o "$workdir/capture" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "collect failed"; }

# The agent: the app's CPU pushes after its second period (the first may
# have begun before the agent read the copies), as folded stacks.
start_shapes_agent
until python3 "$tests_dir/agent_folded.py" "$workdir/received" "$pid" "$workdir/agent.folded" \
	--skip 1; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent exited"; }
	sleep 0.5
done
kill "$pid"
echo "--- collect"
check_named "$workdir/capture/folded_stacks.out"
echo "--- the agent"
check_named "$workdir/agent.folded"
grep 'ReadyToRun: .* named from the images' "$workdir/capture/profcpu.log" ||
	fail "the log says nothing of the assemblies read from the executable"

# The app gone: the capture keeps which copy was which assembly, and the
# assemblies are inflated from the executable again; lines from shapes.pdb.
"$PROFCPU" postprocess -dir "$workdir/capture" --lines >/dev/null
check_named "$workdir/capture/folded_stacks.out"
check_lines "$workdir/capture/folded_stacks.out"
"$PROFCPU" lines -dir "$workdir/capture" --top 1 >"$workdir/lines.txt" || fail "profcpu lines failed"
cat "$workdir/lines.txt"
# Work's loop, with its share and its source text.
grep -qE '^ +[0-9.]+ \| +[0-9]+ \| .*for \(int i = 0; i < iterations; i\+\+\)' "$workdir/lines.txt" ||
	fail "profcpu lines does not show the line of Work's loop"

# With the IPC, and call counting on: the app's hot methods are jitted
# again, their lines found through the runtime's path for shapes.dll (in
# the app's folder, where no file is) in the PDB beside the app.
start_until_ready "$workdir/app/shapes" 60
pid=$started_pid
sleep 2 # Heavy and Light called often enough to be jitted again
"$PROFCPU" collect -pid "$pid" -duration 3 -F 999 --lines -o "$workdir/ipc-capture" \
	>/dev/null 2>"$workdir/stderr" || { cat "$workdir/stderr"; fail "collect failed"; }
kill "$pid"
echo "--- with the IPC"
# Lines only: the names are dotnet_shapes' (.NET 9's instrumented tier
# still calls the runtime's counters from Work, unnamed without its
# symbols, seconds after the start).
check_lines "$workdir/ipc-capture/folded_stacks.out"

[[ $version == 10 ]] || exit 0
# The PDB embedded in the assembly: none beside it.
publish_dotnet_app Shapes "$workdir/embedded" "${compressed[@]}" -p:DebugType=embedded
[[ ! -e $workdir/embedded/shapes.pdb ]] || fail "a shapes.pdb beside the app: not the shape under test"
start_app "$workdir/embedded"
"$PROFCPU" collect -pid "$pid" -duration 3 -F 999 --lines -o "$workdir/embedded-capture" \
	>/dev/null 2>"$workdir/stderr" || { cat "$workdir/stderr"; fail "collect failed"; }
kill "$pid"
echo "--- PDB embedded"
check_named "$workdir/embedded-capture/folded_stacks.out"
check_lines "$workdir/embedded-capture/folded_stacks.out"
