#!/usr/bin/env bash
# .NET methods that keep no frame pointer, in the middle of the hot stack:
# FramelessCallers' Middle and Outer ("push rax; call; ...; ret", each
# making one call) between Main and Spin. A frame-pointer walk skips Outer
# and Main (Spin's saved rbp is Main's).
#  - ReadyToRun code (published ReadyToRun, kept there with
#    DOTNET_TC_CallCounting=0): hybrid mode unwinds it with the image's
#    unwind info, Main;Outer;Middle;Spin whole. fp mode, and hybrid mode
#    post-processed without the images, lose them.
#  - JIT code (DOTNET_ReadyToRun=0 DOTNET_TieredCompilation=0: optimized at
#    once): hybrid mode unwinds it with the unwind info its prolog gives,
#    read from the jitdump.
# Publishing needs crossgen2 from NuGet: where it cannot be had, the test is
# skipped.
source "$(dirname "$0")/lib.sh"

command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
cp -r "$tests_dir/dotnet/FramelessCallers" "$workdir/source"
dotnet publish "$workdir/source/FramelessCallers.csproj" -c Release -r linux-x64 \
	--self-contained false -p:PublishReadyToRun=true -o "$workdir/app" \
	>"$workdir/publish.log" 2>&1 ||
	{ tail -5 "$workdir/publish.log"; skip "no ReadyToRun publish here (crossgen2 from NuGet)"; }
chain='Program::Main;framelesscallers!Demo\.Program::Outer;framelesscallers!Demo\.Program::Middle;framelesscallers!Demo\.Program::Spin'

DOTNET_TC_CallCounting=0 start_dotnet_app "$workdir/app/framelesscallers.dll" 120
for mode in hybrid fp; do
	"$PROFCPU" collect -pid "$started_pid" -duration 3 --call-graph "$mode" \
		-o "$workdir/$mode" >/dev/null
	folded top "$workdir/$mode/folded_stacks.out" 1
done
PROFCPU_KEEP_STACK_COPIES=1 "$PROFCPU" collect -pid "$started_pid" -duration 3 \
	-o "$workdir/copies" >/dev/null
kill "$started_pid"
assert_share "$workdir/hybrid/folded_stacks.out" "$chain" 90 100
assert_share "$workdir/fp/folded_stacks.out" 'Demo\.Program::Spin' 90 100
assert_share "$workdir/fp/folded_stacks.out" "$chain" 0 10
# The images' unwind info is what found them: without the images (the
# jitdump still names the methods), a replay that walks the stack copies
# itself skips them too.
PROFCPU_NO_READYTORUN=1 "$PROFCPU" postprocess -dir "$workdir/copies" >/dev/null
assert_share "$workdir/copies/folded_stacks.out" 'Demo\.Program::Spin' 90 100
assert_share "$workdir/copies/folded_stacks.out" "$chain" 0 10
# The default capture holds the collector's walks, made with the images:
# its samples keep the chain without them.
PROFCPU_NO_READYTORUN=1 "$PROFCPU" postprocess -dir "$workdir/hybrid" >/dev/null
assert_share "$workdir/hybrid/folded_stacks.out" "$chain" 90 100

DOTNET_ReadyToRun=0 DOTNET_TieredCompilation=0 start_dotnet_app "$workdir/app/framelesscallers.dll" 120
"$PROFCPU" collect -pid "$started_pid" -duration 3 -o "$workdir/jit" >/dev/null
kill "$started_pid"
folded top "$workdir/jit/folded_stacks.out" 1
assert_share "$workdir/jit/folded_stacks.out" "$chain" 90 100
echo "PASS"
