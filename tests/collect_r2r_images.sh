#!/usr/bin/env bash
# Precompiled (ReadyToRun) framework code named from the images alone: R2RLoop
# spends its time in CoreLib's ReadyToRun code (Array.Sort, Dictionary
# lookups). Started with DOTNET_EnableDiagnostics=0 and no perf map, the
# runtime tells nothing (no IPC, no perf map, no jitdump): the names must come
# from the .dll files themselves. They must cover the samples and give the
# hot methods the shares that a run with everything jitted (DOTNET_ReadyToRun=0)
# and named by the runtime's perf map gives.
source "$(dirname "$0")/lib.sh"

build_dotnet_app R2RLoop
app=$workdir/R2RLoop/r2rloop.dll
export DOTNET_TC_CallCounting=0

# Hundreds of samples even on a busy machine: shares within a few points.
collect() {
	"$PROFCPU" collect -pid "$started_pid" -duration 6 -F 499 -o "$@" >/dev/null
}

# The control: everything jitted, named by the runtime's own perf map.
DOTNET_ReadyToRun=0 DOTNET_PerfMapEnabled=1 start_dotnet_app "$app" 60
collect "$workdir/jitted"
kill "$started_pid"
rm -f "/tmp/perf-$started_pid.map" "/tmp/jit-$started_pid.dump" "/tmp/perfinfo-$started_pid.map"

# The images alone (--names perfmap: nothing named from the runtime's
# memory either).
DOTNET_EnableDiagnostics=0 start_dotnet_app "$app" 60
collect "$workdir/images" --names perfmap
kill "$started_pid"
[[ ! -e "$workdir/images/perf-$started_pid.map" ]] || fail "the runtime wrote a perf map: the images were not alone"
folded top "$workdir/images/folded_stacks.out" 3

# Every frame in precompiled code is named: no "[System.Private.CoreLib.dll]".
assert_share "$workdir/images/folded_stacks.out" '\[[^];]*\.dll\]' 0 5
assert_share "$workdir/images/folded_stacks.out" \
	'System\.Private\.CoreLib!System\.Collections\.Generic\.GenericArraySortHelper`1\[Int32\]::PickPivotAndPartition' 5 100
grep 'ReadyToRun' "$workdir/images/profcpu.log" || fail "the log says nothing of ReadyToRun images"
# The images name their frames: the log must not call them unnamed ELF files.
! grep '\.dll: not a readable ELF file' "$workdir/images/profcpu.log" ||
	fail "the log says the .NET images' frames stay unnamed"

# The hot framework methods weigh what they weigh when jitted, +-5 points.
# Precompiled and jitted code differ, and runs differ by 2 to 4 points. The
# lookups count TryGetValue too: when FindValue calls a leaf without a frame
# pointer (String.GetNonRandomizedHashCode), the frame-pointer walk skips
# FindValue and the sample shows TryGetValue.
for method in 'ArraySortHelper' 'Dictionary`2\[[^]]*\]::(FindValue|TryGetValue)'; do
	jitted=$(folded share "$workdir/jitted/folded_stacks.out" "$method")
	echo "jitted run: share of /$method/: $jitted%"
	low=$(python3 -c "print(max(0, $jitted - 5))")
	high=$(python3 -c "print(min(100, $jitted + 5))")
	assert_share "$workdir/images/folded_stacks.out" "$method" "$low" "$high"
done

# After the target is gone, a postprocess of the capture names them again.
"$PROFCPU" postprocess -dir "$workdir/images" >/dev/null
assert_share "$workdir/images/folded_stacks.out" '\[[^];]*\.dll\]' 0 5
assert_share "$workdir/images/folded_stacks.out" 'System\.Private\.CoreLib![A-Za-z.]*ArraySortHelper' 50 100
# Each name is the one the runtime itself gives that code: its jitdump,
# written whole (stubs one by one, see FACTS.md), lists every precompiled
# method that ran. profcpu does not read it here: it only checks our names.
jitdumps=$workdir/jitdumps
mkdir "$jitdumps"
DOTNET_EnableDiagnostics=0 DOTNET_PerfMapEnabled=2 DOTNET_PerfMapStubGranularity=2 \
	DOTNET_PerfMapJitDumpPath="$jitdumps" start_dotnet_app "$app" 60
# profcpu reads the jitdump where DOTNET_PerfMapJitDumpPath says: the folder
# is moved away once the runtime has it open (it writes on through its handle).
mv "$jitdumps" "$workdir/jitdumps-hidden"
"$PROFCPU" collect -pid "$started_pid" -duration 3 -o "$workdir/checked" >/dev/null
kill "$started_pid"
python3 "$tests_dir/r2r_jitdump_check.py" "$workdir/checked/perf_script.out" "$workdir/jitdumps-hidden"/jit-*.dump ||
	fail "frames named otherwise than the runtime names them"
# The names came from the images: without them, the frames are [X.dll].
PROFCPU_NO_READYTORUN=1 "$PROFCPU" postprocess -dir "$workdir/images" >/dev/null
assert_share "$workdir/images/folded_stacks.out" '\[[^];]*\.dll\]' 50 100
echo "PASS"
