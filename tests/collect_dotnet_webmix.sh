#!/usr/bin/env bash
# An ASP.NET Core service under its own load on loopback
# (tests/dotnet/WebMix: JSON, regex, LINQ, SHA256, gzip, async), started as
# users start it, with DOTNET_PerfMapEnabled=1: nearly every sample has all
# its frames named, the framework's precompiled code included (from the
# jitdump profcpu has the runtime write through its diagnostics IPC).
source "$(dirname "$0")/lib.sh"

build_dotnet_app WebMix
port=$(free_port)
export DOTNET_PerfMapEnabled=1
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 40
sleep 3 # past start-up, into the steady load
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 199 -o "$workdir/web" 2>&1 | tee "$workdir/stderr"
grep -q 'turned on the perf map and jitdump' "$workdir/stderr" || fail "the IPC was not used"
grep '^jitdump:' "$workdir/web/profcpu.log"
stacks=$workdir/web/folded_stacks.out

module_only=$(folded share "$stacks" '\[[A-Za-z0-9_.]+\.dll\]')
unknown=$(folded share "$stacks" '\[unknown\]')
unnamed_jit=$(folded share "$stacks" '\[JIT\]')
stubs=$(folded share "$stacks" '\[stub\]')
named=$(python3 -c "print(f'{100 - $(folded share "$stacks" '\[[A-Za-z0-9_.]+\.dll\]|\[unknown\]'):.1f}')")
echo "samples with a [X.dll] frame: $module_only%, [unknown]: $unknown%, [JIT]: $unnamed_jit%, [stub]: $stubs%"
echo "samples with no [unknown] and no [X.dll] frame: $named%"
python3 -c "import sys; sys.exit(0 if $named >= 95 else 1)" ||
	fail "only $named% of samples have no [unknown] and no [X.dll] frame, expected at least 95%"
# Before the jitdump, the framework's precompiled code was [X.dll] in about
# half of the samples: the routes' own framework methods are named now.
for method in 'System\.Text\.Json' 'System\.Text\.RegularExpressions|dynamicClass::Regex' 'System\.Linq'; do
	share=$(folded share "$stacks" "$method")
	echo "/$method/: $share%"
	python3 -c "import sys; sys.exit(0 if $share > 0 else 1)" || fail "no samples name /$method/"
done
# Generated code nothing names is the module [JIT], not the memfd path whose
# space and parentheses perf-script parsers split.
! grep -q 'doublemapper (deleted))$' "$workdir/web/perf_script.out" ||
	fail "perf_script.out names a module '/memfd:doublemapper (deleted)'"
