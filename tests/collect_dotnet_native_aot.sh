#!/usr/bin/env bash
# A .NET app compiled ahead of time (dotnet publish -p:PublishAot=true): no
# runtime, no JIT, an ELF whose symbols (in hotloop.dbg beside it) the
# NativeAOT compiler named hotloop_Demo_Program__HotMethod. Its frames read
# as the JIT's do, hotloop!Demo.Program::HotMethod, in every output; the
# runtime's own C and C++ functions keep their names. Publishing needs the
# ILCompiler package from NuGet and clang: the test skips without them.
source "$(dirname "$0")/lib.sh"

command -v clang >/dev/null || skip "NativeAOT links with clang, which is not installed"
publish_dotnet_app HotLoop "$workdir/aot" -p:PublishAot=true
[[ -f $workdir/aot/hotloop.dbg ]] || fail "the publish wrote no hotloop.dbg: the symbols under test"
output=$workdir/app.out
"$workdir/aot/hotloop" 60 >"$output" &
background_pids+=($!)
pid=$!
until grep -q ready "$output"; do sleep 0.1; done

"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/capture"
folded top "$workdir/capture/folded_stacks.out" 2
assert_share "$workdir/capture/folded_stacks.out" \
	'hotloop!Demo\.Program::Main;hotloop!Demo\.Program::Caller;hotloop!Demo\.Program::HotMethod(;|$)' 80 100
for output_file in folded_stacks.out perf_script.out speedscope.json; do
	! grep -q 'hotloop_Demo_Program__' "$workdir/capture/$output_file" ||
		fail "$output_file keeps the linker's names"
done
grep -q 'hotloop!Demo\.Program::HotMethod' "$workdir/capture/perf_script.out" ||
	fail "perf_script.out does not name HotMethod"
# pprof (gzip'd protobuf): its string table holds the names.
gzip -dc "$workdir/capture/profile.pb.gz" | grep -aq 'hotloop!Demo\.Program::HotMethod' ||
	fail "profile.pb.gz does not name HotMethod"
# The runtime's own functions keep their names: the entry point is C.
grep -q '__managed__Main' "$workdir/capture/folded_stacks.out" ||
	fail "the runtime's entry point lost its name"
