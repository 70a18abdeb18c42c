#!/usr/bin/env bash
# Bad days: a closed terminal (SIGHUP), a reader that went away (SIGPIPE,
# `collect ... 2>&1 | head -1`), a full disk. The capture keeps every sample
# of the time it sampled and writes every output; on a full disk, perf.data
# stays readable by the real perf and the message says how much it kept.
source "$(dirname "$0")/lib.sh"

# A signal in the middle of the sampling: it stops, and everything is written.
for signal in HUP PIPE; do
	start "$WORKLOAD_SPLIT" 60
	target=$started_pid
	"$PROFCPU" collect -pid "$target" -F 999 -o "$workdir/$signal" 2>"$workdir/stderr" &
	profcpu=$!
	until grep -q 'sampling pid' "$workdir/stderr"; do sleep 0.05; done
	before=$(cpu_ticks "$target")
	sleep 2
	kill -s "$signal" "$profcpu"
	after=$(cpu_ticks "$target")
	status=0
	wait "$profcpu" || status=$?
	cat "$workdir/stderr"
	((status == 0)) || fail "profcpu exited with $status after SIG$signal"
	grep -q "stopped: interrupted by SIG$signal" "$workdir/stderr" || fail "SIG$signal: no word of the stop"
	for output in folded_stacks.out perf_script.out flamegraph.svg prof.tar.gz prof.trace.zip; do
		assert_file "$workdir/$signal/$output"
	done
	assert_samples_match_cpu "$workdir/$signal/folded_stacks.out" $((after - before)) 999
done

# stderr and stdout into a pipe whose reader stops after one line: the
# writes after it fail (EPIPE), the capture goes on to its end and every
# sample it recorded is in the outputs.
start "$WORKLOAD_SPLIT" 60
set +o pipefail
"$PROFCPU" collect -pid "$started_pid" -duration 3 -F 999 -o "$workdir/piped" 2>&1 | head -1
status=${PIPESTATUS[0]}
set -o pipefail
((status == 0)) || fail "profcpu exited with $status writing into a closed pipe"
for output in folded_stacks.out perf_script.out flamegraph.svg prof.tar.gz prof.trace.zip; do
	assert_file "$workdir/piped/$output"
done
grep -q "stopped: the duration ended" "$workdir/piped/profcpu.log" ||
	fail "a closed pipe stopped the capture early"
recorded=$(awk '/^samples:/ {print $2}' "$workdir/piped/profcpu.log")
kept=$(folded total "$workdir/piped/folded_stacks.out")
echo "recorded $recorded samples, $kept in the outputs"
((recorded > 0 && kept == recorded)) || fail "recorded $recorded samples, kept $kept"

# A full disk, with compressed records (the default): perf.data is finished
# with its feature sections, so that the real perf reads it; the message
# says how much was kept; no output is left half-written under its name,
# the copy of the kernel symbols included.
(($(id -u) == 0)) || skip "needs root to mount a small tmpfs"
command -v perf >/dev/null || skip "perf is not installed"
mkdir "$workdir/small"
mount -t tmpfs -o size=32k tmpfs "$workdir/small" || skip "cannot mount a tmpfs"
# A lazy unmount: a process of the test may still hold a file there.
trap 'umount -l "$workdir/small" 2>/dev/null || true; cleanup' EXIT
start "$WORKLOAD_SPLIT" 60
status=0
"$PROFCPU" collect -pid "$started_pid" -duration 60 -F 999 -o "$workdir/small/out" \
	2>"$workdir/stderr" || status=$?
cat "$workdir/stderr"
((status < 128)) || fail "profcpu crashed on a full disk"
grep -q "No space left on device; it keeps the [0-9.]* MiB of records written until then" \
	"$workdir/stderr" || fail "no word of how much the full disk kept"
perf_samples=$(perf script -i "$workdir/small/out/perf.data" 2>"$workdir/perf.stderr" | grep -c cpu-clock || true)
cat "$workdir/perf.stderr"
((perf_samples > 10)) || fail "the real perf read $perf_samples samples of perf.data on a full disk"
echo "perf script read $perf_samples samples"
ls -la "$workdir/small/out"
for partial in "$workdir"/small/out/*.partial "$workdir"/small/out/*.reserve; do
	[[ ! -e $partial ]] || fail "left behind: $partial"
done
[[ ! -e "$workdir/small/out/flamegraph.svg" ]] || tail -c 7 "$workdir/small/out/flamegraph.svg" | grep -q '</svg>' ||
	fail "flamegraph.svg was left half-written"
# The copy of the kernel symbols is written as the replay names frames:
# under its name it must be whole, ending with its "# complete" line.
[[ ! -e "$workdir/small/out/kallsyms" ]] || tail -1 "$workdir/small/out/kallsyms" | grep -qx '# complete' ||
	fail "kallsyms was left half-written ($(wc -c <"$workdir/small/out/kallsyms") bytes)"
[[ ! -e "$workdir/small/out/prof.trace.zip" ]] || unzip -tq "$workdir/small/out/prof.trace.zip" ||
	fail "prof.trace.zip was left half-written"
echo ok
