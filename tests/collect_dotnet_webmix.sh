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
echo "samples with a [X.dll] frame: $module_only%, [unknown]: $unknown%, [JIT]: $unnamed_jit%, [stub]: $stubs%"
# Whole and named: at least 99% of samples reach a thread root (the hashing
# route's OpenSSL code included, on whichever path lib.sh forces) and at most
# 1% hold a frame nothing names.
rooted=$(sed -n 's/^stacks: .*(\([0-9.]*\)%) reach a thread root.*/\1/p' "$workdir/web/profcpu.log")
unnamed=$(folded share "$stacks" '\[unknown\]|\[JIT\]|\[[A-Za-z0-9_.]+\.dll\]')
echo "reach a thread root: $rooted%; with an unnamed frame: $unnamed% (OPENSSL_ia32cap=${OPENSSL_ia32cap:-native})"
python3 -c "import sys; sys.exit(0 if $rooted >= 99 and $unnamed <= 1 else 1)" ||
	fail "$rooted% of samples reach a thread root and $unnamed% have an unnamed frame"
# Frames of ReadyToRun images, named ([PreJIT]) or not ([X.dll]). Counted
# per frame: whole stacks (the default hybrid mode) reach frames that
# frame-pointer stacks rarely did, such as the P/Invoke stub under
# System.Net.Sockets' event loop, which the jitdump does not name and which
# then sits in every sample of that thread.
script=$workdir/web/perf_script.out
prejit=$(grep -c 'PreJIT\] (' "$script" || true)
unnamed_images=$(grep -cP '^\t\s*[0-9a-f]+ \[[A-Za-z0-9_.]+\.dll\] ' "$script" || true)
named=$(python3 -c "print(f'{100 * $prejit / max($prejit + $unnamed_images, 1):.1f}')")
echo "ReadyToRun frames named: $named% ($prejit named, $unnamed_images [X.dll])"
python3 -c "import sys; sys.exit(0 if $named >= 95 else 1)" ||
	fail "only $named% of the ReadyToRun frames are named, expected at least 95%"
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
