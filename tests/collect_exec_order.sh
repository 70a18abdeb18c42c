#!/usr/bin/env bash
# profcpu collect -a drains the CPUs' ring buffers one after the other, so a
# child that a shell forks on CPU 1 and that calls exec() on CPU 0 has its
# exec and mappings read before its fork. Its samples' stack copies must
# still be cut to what the walk reads (a few hundred bytes here), not kept
# whole (8 to 16 KiB each): the late fork must not put its parent's
# mappings back over the child's. Checked with perf's own dump of our
# perf.data.
source "$(dirname "$0")/lib.sh"

(($(nproc) >= 2)) || skip "needs two CPUs: the fork on one, the exec on the other"
command -v taskset >/dev/null || skip "taskset (util-linux) is not installed"
cd "$workdir"
# Its own name, apart from other workload_split processes on the machine.
cp "$WORKLOAD_SPLIT" late_fork_child

"$PROFCPU" collect -a -duration 9 -F 49 -o out 2>stderr &
collect=$!
until grep -qs "sampling every CPU" stderr; do
	kill -0 "$collect" 2>/dev/null || { cat stderr; fail "profcpu collect -a failed"; }
	sleep 0.1
done
# The shell forks on CPU 1; taskset moves the child to CPU 0, where it
# calls exec(). Whether the two records meet in one drain is up to timing:
# at 49 Hz the collector drains every 100 ms, and twelve children make
# it all but certain that some do.
for _ in $(seq 12); do
	taskset -c 1 bash -c "taskset -c 0 ./late_fork_child 0.5; true"
done
wait "$collect" || { cat stderr; fail "profcpu collect -a failed"; }

perf script -D -i out/perf.data >dump 2>/dev/null || fail "perf script -D cannot read our perf.data"
pids=$(grep -oE '^late_fork_child-[0-9]+;' out/folded_stacks.out | sort -u | grep -oE '[0-9]+' | tr '\n' ' ')
[[ -n $pids ]] || fail "no late_fork_child in the capture"
python3 - "$pids" dump <<'PY'
import re, statistics, sys
pids = set(sys.argv[1].split())
sizes, pid = {}, None
for line in open(sys.argv[2], errors="replace"):
    sample = re.search(r"PERF_RECORD_SAMPLE\([^)]*\): (\d+)/\d+:", line)
    if sample:
        pid = sample.group(1) if sample.group(1) in pids else None
    elif pid and line.startswith("... ustack: size"):
        sizes.setdefault(pid, []).append(int(line.split()[3].rstrip(",")))
        pid = None
whole = {p: statistics.median(s) for p, s in sizes.items() if len(s) >= 10 and statistics.median(s) > 2048}
print(f"{len(sizes)} late_fork_child processes; median stack copy kept: "
      + ", ".join(f"{statistics.median(s):.0f}" for s in sizes.values()))
if len(sizes) < 6:
    sys.exit(f"FAIL: only {len(sizes)} of the 12 processes sampled")
if whole:
    sys.exit(f"FAIL: whole stack copies kept for {len(whole)} processes (median bytes {whole})")
PY
