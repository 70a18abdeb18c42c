#!/usr/bin/env bash
# Source lines of precompiled (ReadyToRun) .NET code: a C# method with two
# loops on their own lines, the first doing twice the work
# (tests/dotnet/R2RTwoLoops), published ReadyToRun with its portable PDB
# beside it, and run without call counting (DOTNET_TC_CallCounting=0), so
# that the runtime never compiles it again: every sample is in its
# precompiled code, whose map of native to IL offsets only the image's
# debug info holds (the runtime's events map JIT code alone). go tool pprof
# -top -lines, the folded stacks and perf_script.out of --lines, and
# profcpu lines put two thirds of its time on the first line and a third
# on the second: with the diagnostics IPC (the runtime names the code),
# and without it (DOTNET_EnableDiagnostics=0: the image names it too); also
# where the runtime runs the code from its own copy of the image, made
# before the capture starts and while it runs.
source "$(dirname "$0")/lib.sh"

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
	local out=$1 top=$workdir/top.txt
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
	go tool pprof -top -lines -sample_index=samples "$out/profile.pb.gz" >"$top" 2>&1 ||
		{ cat "$top"; fail "go tool pprof cannot read profile.pb.gz"; }
	grep -E 'Program::(TwoLoops|Main)' "$top" >&2
	awk '$6 ~ /Program::TwoLoops$/ && $1 > 0 {
		line = $7 ~ /\/Program\.cs:[0-9]+$/ ? $7 : "none"; sub(/.*:/, "", line); count[line] += $1 }
		END { for (line in count) print line, count[line] }' "$top" >"$workdir/lines.txt"
	first_samples=$(awk -v line="$first" '$1 == line { print $2 }' "$workdir/lines.txt")
	second_samples=$(awk -v line="$second" '$1 == line { print $2 }' "$workdir/lines.txt")
	method_samples=$(awk '{ total += $2 } END { print total + 0 }' "$workdir/lines.txt")
	[[ -n $first_samples && -n $second_samples ]] ||
		fail "pprof shows no samples of TwoLoops on Program.cs:$first and :$second"
	on_lines=$((first_samples + second_samples))
	((on_lines * 100 >= method_samples * 95)) ||
		fail "only $on_lines of TwoLoops' $method_samples samples are on its two lines"
	about "pprof, line $first" "$(python3 -c "print(round(100 * $first_samples / $on_lines, 1))")" 66.7 "$on_lines"
	about "pprof, line $second" "$(python3 -c "print(round(100 * $second_samples / $on_lines, 1))")" 33.3 "$on_lines"

	echo "--- --lines: folded stacks, perf script text; the caller at its call"
	assert_share_about "$out/folded_stacks.out" "Demo\.Program::Main Program\.cs:[0-9]+;r2rtwoloops!Demo\.Program::TwoLoops Program\.cs:$first\$" 66.7
	assert_share_about "$out/folded_stacks.out" "Demo\.Program::TwoLoops Program\.cs:$second\$" 33.3
	grep -qE "^  Program\.cs:$second\$" "$out/perf_script.out" ||
		fail "perf_script.out has no srcline Program.cs:$second"

	echo "--- profcpu lines"
	"$PROFCPU" lines -dir "$out" --top 2 >"$workdir/lines-command.txt" ||
		fail "profcpu lines failed"
	cat "$workdir/lines-command.txt"
	grep -qE "^ +[0-9.]+ \| +$first \| .*TWO THIRDS" "$workdir/lines-command.txt" ||
		fail "profcpu lines does not show line $first with its share and source"
	grep -qE "^ +[0-9.]+ \| +$second \| .*ONE THIRD" "$workdir/lines-command.txt" ||
		fail "profcpu lines does not show line $second with its share and source"
}

echo "=== with the diagnostics IPC"
start_dotnet_app "$dll" 60
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 499 --lines -o "$workdir/ipc" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
grep -q 'EventPipe session' "$workdir/ipc/profcpu.log" || fail "collect did not talk to the runtime"
check_lines "$workdir/ipc"

echo "=== without it: the image names the code and maps it"
DOTNET_EnableDiagnostics=0 start_dotnet_app "$dll" 60
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 499 --lines -o "$workdir/images" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
! grep -q 'EventPipe session' "$workdir/images/profcpu.log" || fail "collect talked to the runtime"
check_lines "$workdir/images"

echo "=== the runtime's copy of the image (DOTNET_PELoader_DisableMapping=1)"
# Where the runtime cannot map an image as code, it copies it into
# anonymous memory and runs its precompiled code from there: the switch
# makes it do so here. The mappings of that code name no file.
# check_copied PID: PID runs TwoLoops from a copy, not from its file.
check_copied() {
	grep -q ' r-xp .*/r2rtwoloops\.dll$' "/proc/$1/maps" &&
		fail "the runtime mapped r2rtwoloops.dll as code: the switch did nothing"
	grep -q ' r--s .*/r2rtwoloops\.dll$' "/proc/$1/maps" ||
		fail "the runtime does not map r2rtwoloops.dll flat beside its copy"
}
echo "--- copied before the capture starts, with the diagnostics IPC"
DOTNET_PELoader_DisableMapping=1 start_dotnet_app "$dll" 60
check_copied "$started_pid"
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 499 --lines -o "$workdir/copied" >/dev/null 2>"$workdir/collect.err" ||
	{ cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
check_lines "$workdir/copied"

echo "--- copied while the capture runs (a process started in the captured cgroup), without the IPC"
make_test_cgroup
"$PROFCPU" collect --cgroup "$test_cgroup" -duration 8 -F 499 --lines -o "$workdir/copied-late" >/dev/null 2>"$workdir/collect.err" &
profcpu_pid=$!
until grep -q 'sampling' "$workdir/collect.err"; do
	kill -0 "$profcpu_pid" 2>/dev/null || { cat "$workdir/collect.err"; fail "collect --cgroup failed"; }
	sleep 0.1
done
start bash -c "echo \$\$ >'$test_cgroup/cgroup.procs' && DOTNET_PELoader_DisableMapping=1 DOTNET_EnableDiagnostics=0 exec dotnet '$dll' 60 >'$workdir/late.out'"
until grep -q ready "$workdir/late.out" 2>/dev/null; do sleep 0.1; done
check_copied "$started_pid"
wait "$profcpu_pid" || { cat "$workdir/collect.err"; fail "collect --cgroup failed"; }
kill "$started_pid"
check_lines "$workdir/copied-late"

echo "--- without the PDB: the name and share stay, no line, the log says why"
mv "$app/r2rtwoloops.pdb" "$workdir/"
"$PROFCPU" postprocess -dir "$workdir/images" --lines >/dev/null 2>"$workdir/postprocess.err" ||
	{ cat "$workdir/postprocess.err"; fail "postprocess failed"; }
assert_share "$workdir/images/folded_stacks.out" 'Demo\.Program::TwoLoops$' 80 100
grep -F "no source lines for the .NET code of $dll: no PDB embedded and none beside it" "$workdir/images/profcpu.log" ||
	fail "the log does not say why $dll has no lines"
echo "ok"
