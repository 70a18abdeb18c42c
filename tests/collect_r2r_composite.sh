#!/usr/bin/env bash
# A composite ReadyToRun image: R2RLoop published with
# PublishReadyToRunComposite, its code compiled into r2rloop.r2r.dll beside an
# IL-only r2rloop.dll. Started with DOTNET_EnableDiagnostics=0, its methods
# are named from the composite image through its component's metadata, each
# as the runtime's own jitdump names it, and with --lines they get their
# lines from the component's PDB. Publishing needs crossgen2 from
# NuGet: where it cannot be had (offline, no cache), the test is skipped.
source "$(dirname "$0")/lib.sh"

command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
cp -r "$tests_dir/dotnet/R2RLoop" "$workdir/source"
dotnet publish "$workdir/source/R2RLoop.csproj" -c Release -r linux-x64 --self-contained false \
	-p:PublishReadyToRun=true -p:PublishReadyToRunComposite=true -o "$workdir/app" \
	>"$workdir/publish.log" 2>&1 ||
	{ tail -5 "$workdir/publish.log"; skip "no composite ReadyToRun publish here (crossgen2 from NuGet)"; }
[[ -f $workdir/app/r2rloop.r2r.dll ]] || fail "the publish made no composite image"

jitdumps=$workdir/jitdumps
mkdir "$jitdumps"
DOTNET_TC_CallCounting=0 DOTNET_EnableDiagnostics=0 DOTNET_PerfMapEnabled=2 \
	DOTNET_PerfMapStubGranularity=2 DOTNET_PerfMapJitDumpPath="$jitdumps" \
	start_dotnet_app "$workdir/app/r2rloop.dll" 60
# profcpu reads the jitdump where DOTNET_PerfMapJitDumpPath says: the folder
# is moved away once the runtime has it open (it writes on through its handle).
mv "$jitdumps" "$workdir/jitdumps-hidden"
"$PROFCPU" collect -pid "$started_pid" -duration 3 -o "$workdir/capture" >/dev/null
kill "$started_pid"
folded top "$workdir/capture/folded_stacks.out" 2
assert_share "$workdir/capture/folded_stacks.out" \
	'r2rloop!Demo\.Program::Main;r2rloop!Demo\.Program::SortRound' 50 100
assert_share "$workdir/capture/folded_stacks.out" '\[[^];]*\.dll\]' 0 5
grep 'ReadyToRun' "$workdir/capture/profcpu.log" || fail "the log says nothing of ReadyToRun images"
python3 "$tests_dir/r2r_jitdump_check.py" "$workdir/capture/perf_script.out" "$workdir/jitdumps-hidden"/jit-*.dump ||
	fail "frames named otherwise than the runtime names them"
# Lines: the composite image's debug info maps its code to IL offsets of
# the component's methods, whose PDB (r2rloop.pdb, beside r2rloop.dll)
# has their lines: SortRound at its calls, Main at a line of its own.
[[ -f $workdir/app/r2rloop.pdb ]] || fail "the publish wrote no r2rloop.pdb"
"$PROFCPU" postprocess -dir "$workdir/capture" --lines >/dev/null
source_file=$tests_dir/dotnet/R2RLoop/Program.cs
copy_line=$(grep -n 'Array.Copy(source' "$source_file" | cut -d: -f1)
sort_line=$(grep -n 'Array.Sort(scratch)' "$source_file" | cut -d: -f1)
folded top "$workdir/capture/folded_stacks.out" 2
assert_share "$workdir/capture/folded_stacks.out" \
	"Demo\.Program::Main Program\.cs:[0-9]+;r2rloop!Demo\.Program::SortRound Program\.cs:($copy_line|$sort_line)(;|\$)" 50 100
# The names came from the images: without them, the frames are [X.dll].
PROFCPU_NO_READYTORUN=1 "$PROFCPU" postprocess -dir "$workdir/capture" >/dev/null
assert_share "$workdir/capture/folded_stacks.out" '\[[^];]*\.dll\]' 50 100
echo "PASS"
