#!/usr/bin/env bash
# The order in which profcpu collect -a reads what each CPU's ring buffer
# holds, and what its walks make of a process's records on several CPUs.
# Checked with perf's own dump of our perf.data.
# 1. A child that a shell forks on CPU 1 and that calls exec() on CPU 0:
#    its samples' stack copies must be cut to what the walk reads (a few
#    hundred bytes here), not kept whole (8 to 16 KiB each): its fork must
#    not put its parent's mappings back over the child's.
# 2. Short processes, each mapped on one CPU and sampled on another within
#    one drain: the rings are read in time order across CPUs, so a sample
#    comes after the mappings it ran in, and is written as its walk without
#    a stack copy. Read one ring after the other, 9% of their samples kept
#    whole copies; 1% more did, whose walk ended in the dynamic loader's
#    _start, which has no CFI.
source "$(dirname "$0")/lib.sh"

(($(nproc) >= 2)) || skip "needs two CPUs: the fork on one, the exec on the other"
command -v taskset >/dev/null || skip "taskset (util-linux) is not installed"
cd "$workdir"
# Their own names, apart from other workload_split processes on the machine.
cp "$WORKLOAD_SPLIT" late_fork_child
cp "$WORKLOAD_SPLIT" short_child

# stack_copies DUMP PIDS...: each process's stack copies' sizes, from perf's
# dump of a perf.data: "PID SIZE..." a line, 0 for a sample without one.
stack_copies() {
	python3 - "$@" <<'PY'
import re, sys
pids = set(sys.argv[2:])
sizes, pid = {}, None
for line in open(sys.argv[1], errors="replace"):
    sample = re.search(r"PERF_RECORD_SAMPLE\([^)]*\): (\d+)/\d+:", line)
    if sample:
        pid = sample.group(1) if sample.group(1) in pids else None
    elif pid and line.startswith("... ustack: size"):
        sizes.setdefault(pid, []).append(line.split()[3].rstrip(","))
        pid = None
for pid, found in sizes.items():
    print(pid, *found)
PY
}

# start_collect SECONDS FREQUENCY: collect -a into out/, in the background
# ($collect), once it samples.
start_collect() {
	"$PROFCPU" collect -a -duration "$1" -F "$2" -o out 2>stderr &
	collect=$!
	until grep -qs "sampling every CPU" stderr; do
		kill -0 "$collect" 2>/dev/null || { cat stderr; fail "profcpu collect -a failed"; }
		sleep 0.1
	done
}

# pids_of NAME: the pids of NAME's processes in out/folded_stacks.out.
pids_of() {
	grep -oE "^$1-[0-9]+;" out/folded_stacks.out | sort -u | grep -oE '[0-9]+' | tr '\n' ' '
}

start_collect 9 49
# The shell forks on CPU 1; taskset moves the child to CPU 0, where it
# calls exec(). Whether the two records meet in one drain is up to timing:
# at 49 Hz the collector drains every 100 ms, and twelve children make
# it all but certain that some do.
for _ in $(seq 12); do
	taskset -c 1 bash -c "taskset -c 0 ./late_fork_child 0.5; true"
done
wait "$collect" || { cat stderr; fail "profcpu collect -a failed"; }

perf script -D -i out/perf.data >dump 2>/dev/null || fail "perf script -D cannot read our perf.data"
pids=$(pids_of late_fork_child)
[[ -n $pids ]] || fail "no late_fork_child in the capture"
stack_copies dump $pids | python3 -c '
import statistics, sys
sizes = {line.split()[0]: list(map(int, line.split()[1:])) for line in sys.stdin}
whole = {p: statistics.median(s) for p, s in sizes.items() if len(s) >= 10 and statistics.median(s) > 2048}
print(f"{len(sizes)} late_fork_child processes; median stack copy kept: "
      + ", ".join(f"{statistics.median(s):.0f}" for s in sizes.values()))
if len(sizes) < 6:
    sys.exit(f"FAIL: only {len(sizes)} of the 12 processes sampled")
if whole:
    sys.exit(f"FAIL: whole stack copies kept for {len(whole)} processes (median bytes {whole})")
' || fail "late_fork_child's stack copies were kept whole"

echo "--- short processes, mapped on one CPU and sampled on another"
rm -rf out stderr dump
start_collect 30 999
# 20 ms each: exec, the loader's mappings and the samples fall in one drain.
for _ in $(seq 150); do ./short_child 0.02; done
kill -INT "$collect"
wait "$collect" || { cat stderr; fail "profcpu collect -a failed"; }
perf script -D -i out/perf.data >dump 2>/dev/null || fail "perf script -D cannot read our perf.data"
pids=$(pids_of short_child)
[[ -n $pids ]] || fail "no short_child in the capture"
stack_copies dump $pids | python3 -c '
import sys
sizes = [int(size) for line in sys.stdin for size in line.split()[1:]]
kept = sum(size > 1024 for size in sizes)
print(f"{len(sizes)} samples of short_child, {kept} with a stack copy kept")
if len(sizes) < 500:
    sys.exit(f"FAIL: only {len(sizes)} samples of short_child")
if kept > 0.02 * len(sizes):
    sys.exit(f"FAIL: {kept} of {len(sizes)} samples kept their stack copy")
' || fail "short processes kept their stack copies"
