#!/usr/bin/env bash
# A .NET app started with DOTNET_EnableDiagnostics=0 (no IPC, no perf map)
# in each way it ships and each runtime, named by collect from the
# runtime's memory (memory_perfmap.h): tests/dotnet/HotLoop .NET 10
# framework-dependent, self-contained, single-file (its runtime linked
# into the executable, which exports the contract descriptor) and
# compressed single-file (its assemblies inflated in memory): at most 1%
# of samples hold a [JIT] frame and HotMethod is named in most.
# .NET 9 (self-contained and single-file, from NuGet's runtime packs: no
# .NET 9 shared runtime is installed for a framework-dependent app) and
# .NET 8: their runtime's memory cannot name JIT code (.NET 9's contract
# descriptor lists no ExecutionManager, its single-file host exports no
# descriptor, .NET 8 has none), which collect says in one line; the
# capture is made all the same, its JIT frames [JIT], and nothing is
# written in the app.
source "$(dirname "$0")/lib.sh"

# run_shape NAME COMMAND...: starts the app with DOTNET_EnableDiagnostics=0
# and collects 3 s of it at 299 Hz into $workdir/NAME (stderr in
# $workdir/NAME.err); the app's pid in $pid, stopped after.
run_shape() {
	local name=$1
	shift
	DOTNET_EnableDiagnostics=0 start_until_ready "$@" 60
	pid=$started_pid
	compgen -G "/tmp/dotnet-diagnostic-$pid-*" >/dev/null &&
		fail "$name: the app opened its diagnostics IPC despite DOTNET_EnableDiagnostics=0"
	"$PROFCPU" collect -pid "$pid" -duration 3 -F 299 -o "$workdir/$name" 2>"$workdir/$name.err" ||
		{ cat "$workdir/$name.err"; fail "$name: collect failed"; }
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	for file in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"; do
		[[ ! -e $file ]] || fail "$name: $file appeared in an app started without diagnostics"
	done
	echo "== $name"
	cat "$workdir/$name.err"
	folded top "$workdir/$name/folded_stacks.out" 3
}

# named_from_memory NAME: collect said so, at most 1% of samples hold a
# [JIT] frame, HotMethod is named in most.
named_from_memory() {
	grep -q "naming the JIT frames of .NET pid [0-9]* from its runtime's memory" "$workdir/$1.err" ||
		fail "$1: collect did not name JIT frames from the runtime's memory"
	assert_share "$workdir/$1/folded_stacks.out" '\[JIT\]' 0 1
	assert_share "$workdir/$1/folded_stacks.out" ';hotloop!Demo\.Program::HotMethod(;|$)' 50 100
	summary+=("$(printf '%-26s %5s samples, %5s%% with a [JIT] frame, HotMethod %s%%' "$1" \
		"$(folded total "$workdir/$1/folded_stacks.out")" \
		"$(folded share "$workdir/$1/folded_stacks.out" '\[JIT\]')" \
		"$(folded share "$workdir/$1/folded_stacks.out" ';hotloop!Demo\.Program::HotMethod(;|$)')")")
}

# unnamed_with_reason NAME REASON: one warning line, giving REASON (a
# regex) for the runtime's memory; the JIT frames left [JIT].
unnamed_with_reason() {
	local lines
	lines=$(grep -cE "nor can its runtime's memory name them: $2" "$workdir/$1.err" || true)
	((lines == 1)) || fail "$1: collect did not say once why the runtime's memory cannot name the app: /$2/"
	grep -q "naming the JIT frames .* from its runtime's memory" "$workdir/$1.err" &&
		fail "$1: collect claims to name the app from its runtime's memory"
	assert_share "$workdir/$1/folded_stacks.out" '\[JIT\]' 50 100
	summary+=("$(printf '%-26s %5s samples, %5s%% with a [JIT] frame: %s' "$1" \
		"$(folded total "$workdir/$1/folded_stacks.out")" \
		"$(folded share "$workdir/$1/folded_stacks.out" '\[JIT\]')" \
		"$(grep -o "nor can its runtime's memory name them: .*" "$workdir/$1.err" | cut -d: -f2-)")")
}

summary=()
build_hotloop
run_shape 10-framework-dependent dotnet "$workdir/bin/hotloop.dll"
named_from_memory 10-framework-dependent

for version in 10 9 8; do
	dotnet_version_properties "$version"
	publish_dotnet_app HotLoop "$workdir/$version-self-contained-app" "${properties[@]}"
	run_shape "$version-self-contained" "$workdir/$version-self-contained-app/hotloop"
	[[ $version == 8 ]] && continue
	publish_dotnet_app HotLoop "$workdir/$version-single-file-app" "${properties[@]}" \
		-p:PublishSingleFile=true
	run_shape "$version-single-file" "$workdir/$version-single-file-app/hotloop"
done
publish_dotnet_app HotLoop "$workdir/10-compressed-app" -p:PublishSingleFile=true \
	-p:EnableCompressionInSingleFile=true
run_shape 10-compressed "$workdir/10-compressed-app/hotloop"

named_from_memory 10-self-contained
named_from_memory 10-single-file
named_from_memory 10-compressed
unnamed_with_reason 9-self-contained \
	"the runtime's contract descriptor lists no ExecutionManager \(a runtime older than \.NET 10\)"
unnamed_with_reason 9-single-file \
	".*/hotloop exports no DotNetRuntimeContractDescriptor \(a runtime older than \.NET 10\)"
unnamed_with_reason 8-self-contained \
	".*/libcoreclr\.so exports no DotNetRuntimeContractDescriptor \(a runtime older than \.NET 9\)"
printf '  %s\n' "${summary[@]}"
echo PASS
