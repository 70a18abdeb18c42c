#!/usr/bin/env bash
# perfcollect's form writes ./NAME.trace.zip in perfcollect's layout, and its
# perf.data.txt reads, by PerfView's rules, as the same profile: the C
# workload's 60/30/10 split, CPU numbers on every sample, a comm with a space
# and a digit, and JIT frames named from the perf map with the map as DSO.
source "$(dirname "$0")/lib.sh"

# A process whose comm is "job 2": PerfView must still find its pid. It runs
# 4 s under /usr/bin/time, which says how much CPU time it got in all; the
# capture ends with it.
ln -s "$WORKLOAD_SPLIT" "$workdir/job 2"
start /usr/bin/time -f '%U %S' -o "$workdir/cpu_time" "$workdir/job 2" 4
until target=$(pgrep -P "$started_pid"); do sleep 0.01; done
before=$(cpu_ticks "$target")
cd "$workdir"
"$PERFCOLLECT" collect split -pid "$target" -collectsec 30 -F 499
wait "$started_pid"
after=$(awk '{printf "%d", ($1 + $2) * 100}' "$workdir/cpu_time")

[[ -s split.trace.zip ]] || fail "perfcollect collect split did not write ./split.trace.zip"
unzip -Z1 split.trace.zip | sort >listing
cat listing
for entry in perf.data perf.data.txt perfcollect.log; do
	grep -qx "split.trace/$entry" listing || fail "split.trace.zip lacks split.trace/$entry"
done
grep -qv '^split\.trace/' listing && fail "an entry lies outside split.trace/"
[[ ! -e split.trace ]] || fail "perfcollect's form must leave only the zip behind"

reader summary split.trace.zip | tee summary
samples=$(awk '$1 == "samples" {print $2}' summary)
unzip -p split.trace.zip split.trace/folded_stacks.out >folded_stacks.out
assert_samples_match_cpu folded_stacks.out $((after - before)) 499
grep -qx 'without_cpu 0' summary || fail "samples without [cpu]: PerfView misweighs them"
grep -qE '^cpus [0-9]' summary || fail "no CPU numbers"
grep -qx 'comms job 2' summary || fail "PerfView reads another comm than 'job 2'"
logged=$(unzip -p split.trace.zip split.trace/perfcollect.log | awk '$1 == "samples:" {print $2}')
((logged == samples)) || fail "perfcollect.log says $logged samples, perf.data.txt holds $samples"
grep -q '^command: profcpu collect split' <(unzip -p split.trace.zip split.trace/perfcollect.log) ||
	fail "perfcollect.log does not say what was run"

assert_trace_share split.trace.zip '^workload_split!spin_sixty$' 54 66
assert_trace_share split.trace.zip '^workload_split!spin_thirty$' 25 35
assert_trace_share split.trace.zip '^workload_split!spin_ten$' 6 14
assert_trace_share split.trace.zip '^workload_split!worker$' 95 100

# Code named only by a perf map: the map's path stays the DSO.
start "$WORKLOAD_JIT_PERFMAP"
pid=$started_pid
until [[ -s /tmp/perf-$pid.map ]]; do sleep 0.05; done
"$PERFCOLLECT" collect jit -pid "$pid" -collectsec 2 -F 499
kill "$pid"
rm -f "/tmp/perf-$pid.map"
grep -qx "jit.trace/perf-$pid.map" <(unzip -Z1 jit.trace.zip) || fail "jit.trace.zip lacks perf-$pid.map"
grep -qP "^\t +[0-9a-f]+ jitted_busy_loop\[Generated\] \(/tmp/perf-$pid\.map\)$" \
	<(unzip -p jit.trace.zip jit.trace/perf.data.txt) ||
	fail "JIT frames must keep /tmp/perf-$pid.map as their DSO"
assert_trace_share jit.trace.zip '!jitted_busy_loop\[Generated\]$' 90 100

# The profcpu form puts prof.trace.zip into its folder.
start "$WORKLOAD_SPLIT" 5
"$PROFCPU" collect -pid "$started_pid" -duration 1 -F 499 -o "$workdir/folder"
grep -qx 'prof.trace/perf.data.txt' <(unzip -Z1 folder/prof.trace.zip) ||
	fail "the profcpu form lacks prof.trace.zip with prof.trace/perf.data.txt"
cmp <(unzip -p folder/prof.trace.zip prof.trace/perf.data.txt) folder/perf_script.out ||
	fail "perf.data.txt differs from perf_script.out"
# perf.data is zstd-compressed already: stored as it is, not deflated again,
# and the copy in the zip is the capture itself, which the real perf reads.
python3 -c 'import sys, zipfile
entry = zipfile.ZipFile(sys.argv[1]).getinfo("prof.trace/perf.data")
sys.exit(0 if entry.compress_type == zipfile.ZIP_STORED else 1)' folder/prof.trace.zip ||
	fail "prof.trace.zip deflates the compressed perf.data again"
cmp <(unzip -p folder/prof.trace.zip prof.trace/perf.data) folder/perf.data ||
	fail "the zip's perf.data differs from the capture"
mkdir unzipped && unzip -q folder/prof.trace.zip -d unzipped
perf script -i unzipped/prof.trace/perf.data >unzipped.txt 2>/dev/null
grep -q spin_sixty unzipped.txt || fail "perf script cannot read the zip's perf.data"
echo "ok: $samples samples"
