#!/usr/bin/env bash
# The outputs of a real .NET capture open in the tools people already have:
# FlameGraph's stackcollapse-perf rules and speedscope read perf_script.out,
# `go tool pprof` (Debian's golang-go) and the npm pprof-format decoder read
# profile.pb.gz, speedscope's own importer reads folded_stacks.out and
# speedscope.json; each finds the samples and the hot .NET method that
# folded_stacks.out has.
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || skip "go (golang-go) is not installed: scripts/install-deps installs it"
command -v node >/dev/null || skip "node is not installed"
if [[ ! -d $tests_dir/browser/node_modules/pprof-format ]]; then
	(cd "$tests_dir/browser" && npm ci --no-audit --no-fund >/dev/null) || skip "npm ci failed in tests/browser"
fi
build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
sleep 1 # let tiered compilation settle
"$PROFCPU" collect -pid "$started_pid" -duration 3 -F 499 -o "$workdir/capture" >/dev/null
capture=$workdir/capture
total=$(folded total "$capture/folded_stacks.out")
# The leaf function with the most samples, as a flame graph's widest top.
top_leaf=$(python3 - "$capture/folded_stacks.out" <<'PY'
import collections, sys
leaves = collections.Counter()
for line in open(sys.argv[1]):
    stack, _, count = line.rstrip("\n").rpartition(" ")
    leaves[stack.split(";")[-1]] += int(count)
print(leaves.most_common(1)[0][0])
PY
)
echo "folded_stacks.out: $total samples, top leaf: $top_leaf"
((total > 50)) || fail "only $total samples"
[[ $top_leaf == *HotMethod* ]] || fail "the hot method is not the top leaf: $top_leaf"

echo "--- perf script's own layout"
# The real perf script on our perf.data, with the fields perf_script.out has:
# every sample's header line is the same, byte for byte.
if command -v perf >/dev/null; then
	perf script -F comm,pid,tid,cpu,time,period,event,ip,sym,dso -i "$capture/perf.data" 2>/dev/null |
		grep -v $'^\t' >"$workdir/perf-headers.txt"
	grep -v $'^\t' "$capture/perf_script.out" >"$workdir/our-headers.txt"
	diff "$workdir/perf-headers.txt" "$workdir/our-headers.txt" | head -5
	cmp -s "$workdir/perf-headers.txt" "$workdir/our-headers.txt" ||
		fail "perf_script.out's header lines differ from perf script's"
	echo "same $(grep -c . "$workdir/our-headers.txt") header lines as perf script"
fi

echo "--- stackcollapse-perf's rules on perf_script.out"
python3 "$tests_dir/stackcollapse_perf.py" "$capture/perf_script.out" "$capture/folded_stacks.out" ||
	fail "stackcollapse-perf's rules read perf_script.out differently from folded_stacks.out"

echo "--- go tool pprof"
export HOME=$workdir GOCACHE=$workdir/gocache
go tool pprof -top -sample_index=samples "$capture/profile.pb.gz" >"$workdir/top.txt" 2>&1 ||
	{ cat "$workdir/top.txt"; fail "go tool pprof -top cannot read profile.pb.gz"; }
head -8 "$workdir/top.txt"
grep -qx 'File: dotnet' "$workdir/top.txt" || fail "pprof does not take dotnet for the profiled program"
grep -q "Total samples = $total\b" "$workdir/top.txt" ||
	fail "go tool pprof counts $(grep -o 'Total samples = [0-9]*' "$workdir/top.txt"), folded $total"
# pprof shows C++-style names without their argument lists.
short_leaf=$(sed -E 's/\([^()]*\)//g' <<<"$top_leaf")
first_row=$(grep -m1 -E '^ +[0-9]+ +[0-9.]+%' "$workdir/top.txt")
[[ $first_row == *"$short_leaf"* ]] || fail "go tool pprof's top function is not $top_leaf: $first_row"
go tool pprof -top -sample_index=cpu "$capture/profile.pb.gz" 2>&1 | grep -m1 'Type: cpu' ||
	fail "profile.pb.gz has no cpu sample type"
go tool pprof -traces -sample_index=samples "$capture/profile.pb.gz" >"$workdir/traces.txt" 2>&1 ||
	fail "go tool pprof -traces cannot read profile.pb.gz"
traced=$(awk '/^-+\+/ {block = 1; next} block && $1 ~ /^[0-9]+$/ {sum += $1; block = 0} END {print sum}' \
	"$workdir/traces.txt")
echo "go tool pprof -traces: $traced samples"
((traced == total)) || fail "go tool pprof -traces holds $traced samples, folded $total"
grep -q 'thread:' "$workdir/traces.txt" || fail "traces carry no thread label"
grep -q 'Demo.Program::HotMethod' "$workdir/traces.txt" || fail "no trace names Demo.Program::HotMethod"
go tool pprof -raw "$capture/profile.pb.gz" 2>/dev/null | sed -n '/^Mappings/,$p' >"$workdir/mappings.txt"
grep -E '/libcoreclr\.so [0-9a-f]{40} ' "$workdir/mappings.txt" ||
	fail "the mapping of libcoreclr.so has no build-id: $(head -5 "$workdir/mappings.txt")"

echo "--- npm pprof-format"
node "$tests_dir/browser/pprof_format_decode.mjs" "$capture/profile.pb.gz" | tee "$workdir/decoded.txt" ||
	fail "pprof-format cannot decode profile.pb.gz"
grep -qx "samples $total" "$workdir/decoded.txt" || fail "pprof-format counts other samples than $total"
grep -qxF "top $top_leaf" "$workdir/decoded.txt" || fail "pprof-format's top leaf is not $top_leaf"
grep -q '^label thread ' "$workdir/decoded.txt" || fail "pprof-format finds no thread label"

echo "--- speedscope's importer in Chromium"
node "$tests_dir/browser/speedscope_import.mjs" "$capture" 'Demo\.Program::HotMethod' ||
	fail "speedscope does not import every output of the capture"
echo "ok: every client reads $total samples"
