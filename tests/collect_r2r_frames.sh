#!/usr/bin/env bash
# Precompiled .NET methods that keep no frame pointer, in the middle of the
# hot stack: R2RFrames' Middle and Outer ("push rax; call; ...; ret", each
# making one call) between Main and Spin, published ReadyToRun and kept in
# that code (DOTNET_TC_CallCounting=0). Hybrid mode unwinds them with the
# image's unwind info: Main;Outer;Middle;Spin whole. Frame pointers alone
# skip Outer and Main (Spin's saved rbp is Main's), so fp mode, and hybrid
# mode without the images' unwind info, lose them. Publishing needs
# crossgen2 from NuGet: where it cannot be had, the test is skipped.
source "$(dirname "$0")/lib.sh"

command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
cp -r "$tests_dir/dotnet/R2RFrames" "$workdir/source"
dotnet publish "$workdir/source/R2RFrames.csproj" -c Release -r linux-x64 --self-contained false \
	-p:PublishReadyToRun=true -o "$workdir/app" >"$workdir/publish.log" 2>&1 ||
	{ tail -5 "$workdir/publish.log"; skip "no ReadyToRun publish here (crossgen2 from NuGet)"; }

DOTNET_TC_CallCounting=0 start_dotnet_app "$workdir/app/r2rframes.dll" 120
chain='r2rframes!Demo\.Program::Main;r2rframes!Demo\.Program::Outer;r2rframes!Demo\.Program::Middle;r2rframes!Demo\.Program::Spin'
for mode in hybrid fp; do
	"$PROFCPU" collect -pid "$started_pid" -duration 3 --call-graph "$mode" \
		-o "$workdir/$mode" >/dev/null
	folded top "$workdir/$mode/folded_stacks.out" 1
done
kill "$started_pid"
assert_share "$workdir/hybrid/folded_stacks.out" "$chain" 90 100
assert_share "$workdir/hybrid/folded_stacks.out" 'Demo\.Program::Spin' 90 100
assert_share "$workdir/fp/folded_stacks.out" "$chain" 0 10
# The images' unwind info is what found them: without the images (the
# jitdump still names the methods), hybrid mode skips them too.
PROFCPU_NO_READYTORUN=1 "$PROFCPU" postprocess -dir "$workdir/hybrid" >/dev/null
assert_share "$workdir/hybrid/folded_stacks.out" 'Demo\.Program::Spin' 90 100
assert_share "$workdir/hybrid/folded_stacks.out" "$chain" 0 10
echo "PASS"
