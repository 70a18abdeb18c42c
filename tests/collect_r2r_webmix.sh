#!/usr/bin/env bash
# An ASP.NET Core service under its own load on loopback (tests/dotnet/WebMix)
# started with DOTNET_EnableDiagnostics=0: no IPC, so no jitdump profcpu can
# ask for, and the framework's precompiled code (CoreLib, Kestrel, JSON,
# regex, LINQ...) is named from its .dll files alone: nearly no sample keeps
# an [X.dll] frame, and every name is the one the runtime's own jitdump
# gives (written here to a folder profcpu does not read, only to check).
source "$(dirname "$0")/lib.sh"

build_dotnet_app WebMix
port=$(free_port)
jitdumps=$workdir/jitdumps
mkdir "$jitdumps"
# Call counting off: the framework's methods stay in their precompiled code,
# as a service's less busy paths do, instead of moving to tier-1 JIT code
# sooner or later depending on how busy the machine is.
export DOTNET_EnableDiagnostics=0 DOTNET_TC_CallCounting=0 DOTNET_PerfMapEnabled=2 \
	DOTNET_PerfMapStubGranularity=2 DOTNET_PerfMapJitDumpPath="$jitdumps"
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 40
# profcpu reads the jitdump where DOTNET_PerfMapJitDumpPath says: the folder
# is moved away once the runtime has it open (it writes on through its handle).
mv "$jitdumps" "$workdir/jitdumps-hidden"
sleep 3 # past start-up, into the steady load
"$PROFCPU" collect -pid "$started_pid" -duration 6 -F 199 -o "$workdir/web" >/dev/null
kill "$started_pid"
grep 'ReadyToRun' "$workdir/web/profcpu.log" || fail "the log says nothing of ReadyToRun images"
assert_share "$workdir/web/folded_stacks.out" '\[[A-Za-z0-9_.]+\.dll\]' 0 5
for method in 'System\.Text\.Json!' 'Microsoft\.AspNetCore[A-Za-z.]*!' 'System\.Linq!'; do
	assert_share "$workdir/web/folded_stacks.out" "$method" 0.1 100
done
python3 "$tests_dir/r2r_jitdump_check.py" "$workdir/web/perf_script.out" "$workdir/jitdumps-hidden"/jit-*.dump ||
	fail "frames named otherwise than the runtime names them"
echo "PASS"
