#!/usr/bin/env bash
# profcpu collect on a C workload with a known 60/30/10 split over two
# threads: the shares, the full call paths, every output file.
source "$(dirname "$0")/lib.sh"

# The workload runs 4 s under /usr/bin/time, which says how much CPU time
# it got in all; the capture ends with it.
start /usr/bin/time -f '%U %S' -o "$workdir/cpu_time" "$WORKLOAD_SPLIT" 4
until target=$(pgrep -P "$started_pid"); do sleep 0.01; done
before=$(cpu_ticks "$target")
"$PROFCPU" collect -pid "$target" -duration 30 -F 499 -o "$workdir/out"
wait "$started_pid"
after=$(awk '{printf "%d", ($1 + $2) * 100}' "$workdir/cpu_time")

out=$workdir/out
for file in perf.data folded_stacks.out perf_script.out flamegraph.svg prof.tar.gz profcpu.log; do
	assert_file "$out/$file"
done
folded top "$out/folded_stacks.out" 5
samples=$(folded total "$out/folded_stacks.out")
# Every sample of the CPU time the target got while sampled (a loaded
# machine gives it less than 4 s of two threads, and fewer samples).
assert_samples_match_cpu "$out/folded_stacks.out" $((after - before)) 499

assert_share_about "$out/folded_stacks.out" ';spin_sixty$' 60
assert_share_about "$out/folded_stacks.out" ';spin_thirty$' 30
assert_share_about "$out/folded_stacks.out" ';spin_ten$' 10
# Complete paths, rooted at the process name, through both threads.
assert_share "$out/folded_stacks.out" '^workload_split;.*main;worker;path_a;spin_sixty$' 15 60
assert_share_about "$out/folded_stacks.out" '^workload_split;.*worker;path_b;spin_thirty$' 30
assert_share "$out/folded_stacks.out" '\[unknown\]' 0 5

# The perf script text holds the same samples, each with pid/tid and cpu.
headers=$(grep -cE '^ *workload_split +[0-9]+/[0-9]+ +\[[0-9]{3}\] +[0-9]+\.[0-9]{6}: +[0-9]+ cpu-clock: $' \
	"$out/perf_script.out" || true)
((headers == samples)) || fail "perf_script.out has $headers samples, folded has $samples"
grep -qP '^\t +[0-9a-f]+ spin_sixty \(.*workload_split\)$' "$out/perf_script.out" ||
	fail "perf_script.out lacks a spin_sixty frame line"

tar -tzf "$out/prof.tar.gz" | sort >"$workdir/listing"
for file in perf.data folded_stacks.out flamegraph.svg profile.pb.gz speedscope.json profcpu.log; do
	grep -q "/$file\$" "$workdir/listing" || fail "prof.tar.gz lacks $file"
done
# perf_script.out is in prof.trace.zip (perf.data.txt), deflated once.
! grep -q "/perf_script.out\$" "$workdir/listing" || fail "prof.tar.gz holds perf_script.out too"
echo "ok: $samples samples"
