#!/usr/bin/env bash
# The flight recorder's promise: a process calm at a fifth of a core in
# calm_work for 12 s, then busy in spike_work; `watch --cpu --before 10
# --after 2 --once` writes one capture, and it holds the calm function over
# at least the 8 s before the spike's first sample (by the samples' own
# times) and the spike itself, with every output collect writes.
source "$(dirname "$0")/lib.sh"

spike_threshold
start_calm_then_spike 12 60
status=0
timeout 300 "$PROFCPU" watch -pid "$started_pid" --cpu "$threshold" --before 10 --after 2 --once \
	-o "$workdir/out" 2>"$workdir/stderr" || status=$?
cat "$workdir/stderr"
((status == 0)) || fail "watch exited with $status"
captures=("$workdir"/out/*_cpu)
((${#captures[@]} == 1)) || fail "expected one capture, found: ${captures[*]}"
[[ -z $(find "$workdir/out" -mindepth 1 -maxdepth 1 -name '.ring*') ]] || fail "the ring was left in $workdir/out"
capture=${captures[0]}
grep -q "rule cpu fired: [0-9]*% of one core over the last second (--cpu $threshold)" "$workdir/stderr" ||
	fail "no line says the rule fired"
grep -q "^rule: cpu: " "$capture/profcpu.log" || fail "the capture's log does not name its rule"
for output in perf.data folded_stacks.out perf_script.out flamegraph.svg profile.pb.gz \
	speedscope.json prof.tar.gz prof.trace.zip; do
	assert_file "$capture/$output"
done

read -r calm_seconds calm_bins < <(python3 "$tests_dir/watch_samples.py" calm-before-spike \
	"$capture/perf_script.out" calm_work spike_work)
echo "calm_work from $calm_seconds s before spike_work's first sample, in each of its last $calm_bins seconds"
python3 -c "import sys; sys.exit(0 if $calm_seconds >= 8 else 1)" ||
	fail "calm_work only $calm_seconds s before the spike's first sample"
((calm_bins >= 8)) || fail "calm_work missing in a second of the 8 before the spike ($calm_bins whole)"
grep -q ';spike_work [0-9]*$' "$capture/folded_stacks.out" || fail "no spike_work in the folded stacks"
grep -q ';calm_work [0-9]*$' "$capture/folded_stacks.out" || fail "no calm_work in the folded stacks"
repeats=$(python3 "$tests_dir/watch_samples.py" repeated "$capture/perf_script.out")
((repeats == 0)) || fail "$repeats samples are in the capture twice"
# Nothing older than --before: the samples span at most the window.
span=$(python3 "$tests_dir/watch_samples.py" span "$capture/perf_script.out")
echo "the samples span $span s of the 12 s window"
python3 -c "import sys; sys.exit(0 if $span <= 12.05 else 1)" || fail "the samples span $span s, past the window"
