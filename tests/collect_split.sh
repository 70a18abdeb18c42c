#!/usr/bin/env bash
# profcpu collect on a C workload with a known 60/30/10 split over two
# threads: the shares, the full call paths, every output file.
source "$(dirname "$0")/lib.sh"

start "$WORKLOAD_SPLIT" 30
"$PROFCPU" collect -pid "$started_pid" -duration 4 -F 499 -o "$workdir/out"

out=$workdir/out
for file in perf.data folded_stacks.out perf_script.out flamegraph.svg prof.tar.gz profcpu.log; do
	assert_file "$out/$file"
done
folded top "$out/folded_stacks.out" 5
samples=$(folded total "$out/folded_stacks.out")
((samples >= 400)) || fail "only $samples samples in 4 s of two busy threads at 499 Hz"

assert_share "$out/folded_stacks.out" ';spin_sixty$' 54 66
assert_share "$out/folded_stacks.out" ';spin_thirty$' 25 35
assert_share "$out/folded_stacks.out" ';spin_ten$' 6 14
# Complete paths, rooted at the process name, through both threads.
assert_share "$out/folded_stacks.out" '^workload_split;.*main;worker;path_a;spin_sixty$' 15 60
assert_share "$out/folded_stacks.out" '^workload_split;.*worker;path_b;spin_thirty$' 25 35
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
