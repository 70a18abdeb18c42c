# Sourced by the tests of source lines in precompiled .NET code, after
# lib.sh: builds tests/dotnet/R2RTwoLoops published ReadyToRun with its
# portable PDB into $app ($dll; the lines of its two loops $first and
# $second), exports DOTNET_TC_CallCounting=0 so that the runtime never
# compiles TwoLoops again, and defines check_lines and
# check_lines_command.

# The app published ReadyToRun, once per SDK and source (as dotnet_build
# builds); skips when the SDK, or its ReadyToRun compiler, cannot be had.
app=$workdir/app
command -v dotnet >/dev/null || skip "the .NET SDK (dotnet) is not installed"
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
source_dir=$tests_dir/dotnet/R2RTwoLoops
key=$( (dotnet --version && cd "$source_dir" && find . -type f -print0 | sort -z | xargs -0 sha256sum) | sha256sum)
cache=${TEST_CACHE:-$workdir/cache}/R2RTwoLoops-published-${key:0:16}
mkdir -p "$(dirname "$cache")"
status=0
(
	flock 9
	[[ -f $cache/built ]] && exit 0
	rm -rf "$cache" && mkdir "$cache" && cp -r "$source_dir" "$cache/src" || exit 1
	timeout 120 dotnet restore --use-current-runtime "$cache/src" >"$cache/build.log" 2>&1 || exit 2
	dotnet publish --no-restore --use-current-runtime -c Release -o "$cache/bin" "$cache/src" >>"$cache/build.log" 2>&1 || exit 1
	touch "$cache/built"
) 9>"$cache.lock" || status=$?
((status != 2)) || skip "the ReadyToRun compiler cannot be restored from this machine's NuGet sources: $(grep -m1 -E 'error|NU[0-9]+' "$cache/build.log")"
((status == 0)) || { tail -20 "$cache/build.log"; fail "dotnet publish of R2RTwoLoops failed"; }
mkdir -p "$app" && cp -r "$cache/bin/." "$app/"
dll=$app/r2rtwoloops.dll
source_file=$source_dir/Program.cs
first=$(grep -n 'TWO THIRDS' "$source_file" | cut -d: -f1)
second=$(grep -n 'ONE THIRD' "$source_file" | cut -d: -f1)
export DOTNET_TC_CallCounting=0

# check_lines OUT: the checks of every output of the capture in OUT.
check_lines() {
	local out=$1
	echo "--- every sample of TwoLoops is in its precompiled code (perf_script.out)"
	python3 - "$out/perf_script.out" <<'PY' || fail "TwoLoops ran other code than its precompiled code"
import re, sys
leaves = [sample.split("\n")[1] for sample in open(sys.argv[1]).read().split("\n\n")
          if sample.count("\n") >= 1 and "Demo.Program::TwoLoops()" in sample.split("\n")[1]]
precompiled = sum("Demo.Program::TwoLoops()[PreJIT]" in leaf for leaf in leaves)
print(f"{precompiled} of {len(leaves)} samples of TwoLoops in its [PreJIT] code")
sys.exit(0 if leaves and precompiled == len(leaves) else 1)
PY

	echo "--- go tool pprof -top -lines"
	twoloops_pprof_lines "$out" >"$workdir/lines.txt"
	assert_twoloops_split "$workdir/lines.txt"

	echo "--- --lines: folded stacks, perf script text; the caller at its call"
	assert_share_about "$out/folded_stacks.out" "Demo\.Program::Main Program\.cs:[0-9]+;r2rtwoloops!Demo\.Program::TwoLoops Program\.cs:$first\$" 66.7
	assert_share_about "$out/folded_stacks.out" "Demo\.Program::TwoLoops Program\.cs:$second\$" 33.3
	grep -qE "^  Program\.cs:$second\$" "$out/perf_script.out" ||
		fail "perf_script.out has no srcline Program.cs:$second"

	echo "--- hot_lines.txt: TwoLoops named as the folded stacks name it; both lines with their shares"
	cat "$out/hot_lines.txt"
	assert_hot_function "$out/hot_lines.txt" r2rtwoloops
	grep -qE "^ +(6[0-9]|7[0-3])\.[0-9]+ \| +$first \| *$" "$out/hot_lines.txt" ||
		fail "hot_lines.txt does not show line $first with about two thirds"
	grep -qE "^ +(2[7-9]|3[0-9])\.[0-9]+ \| +$second \| *$" "$out/hot_lines.txt" ||
		fail "hot_lines.txt does not show line $second with about a third"
}

# check_lines_command OUT: profcpu lines on the capture in OUT shows both
# lines with their shares and source text (which is at hand here).
check_lines_command() {
	echo "--- profcpu lines"
	"$PROFCPU" lines -dir "$1" --top 2 >"$workdir/lines-command.txt" ||
		fail "profcpu lines failed"
	cat "$workdir/lines-command.txt"
	assert_hot_function "$workdir/lines-command.txt" r2rtwoloops
	grep -qE "^ +[0-9.]+ \| +$first \| .*TWO THIRDS" "$workdir/lines-command.txt" ||
		fail "profcpu lines does not show line $first with its share and source"
	grep -qE "^ +[0-9.]+ \| +$second \| .*ONE THIRD" "$workdir/lines-command.txt" ||
		fail "profcpu lines does not show line $second with its share and source"
}
