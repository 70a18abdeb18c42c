#!/usr/bin/env bash
# In fp mode, leaves without a frame pointer keep their callers: an -O2 leaf of the
# workload and libc's memset, each called from two functions with a known
# split (tests/workloads/frameless.c). Frame pointers alone skip the caller
# of such a leaf; profcpu finds it from the leaf's call frame information and
# the stack copied with each sample.
source "$(dirname "$0")/lib.sh"

start "$WORKLOAD_FRAMELESS" 30
"$PROFCPU" collect -pid "$started_pid" -duration 4 -F 499 --call-graph fp -o "$workdir/out"
out=$workdir/out/folded_stacks.out
folded top "$out" 8

# ratio PART WHOLE LOW HIGH: PART's share of WHOLE lies within [LOW, HIGH].
ratio() {
	python3 -c "import sys; r = $1 / max($2, 0.1); print(f'ratio {r:.2f}'); sys.exit(0 if $3 <= r <= $4 else 1)"
}

leaf=$(folded share "$out" ';leaf_work$')
caller_a=$(folded share "$out" '^workload_framel[^;]*;.*;worker;caller_a;leaf_work$')
caller_b=$(folded share "$out" ';worker;caller_b;leaf_work$')
echo "leaf_work $leaf%: under caller_a $caller_a%, under caller_b $caller_b%"
python3 -c "import sys; sys.exit(0 if $leaf >= 15 else 1)" || fail "leaf_work has only $leaf%"
ratio "$caller_a" "$leaf" 0.65 0.85 || fail "caller_a holds not 3/4 of leaf_work"
ratio "$caller_b" "$leaf" 0.15 0.35 || fail "caller_b holds not 1/4 of leaf_work"

# memset lives in libc: whatever names it (.symtab of libc6-dbg or .dynsym),
# it sits right under fill_a or fill_b, never right under worker.
libc=$(folded share "$out" ';worker;fill_[ab];[^;]+$')
fill_a=$(folded share "$out" ';worker;fill_a;[^;]+$')
echo "libc leaves under fill_a/fill_b $libc%, under fill_a $fill_a%"
python3 -c "import sys; sys.exit(0 if $libc >= 15 else 1)" || fail "libc leaves have only $libc%"
ratio "$fill_a" "$libc" 0.55 0.78 || fail "fill_a holds not 2/3 of memset"
assert_share "$out" ';worker;(?!caller_a;|caller_b;|fill_a;|fill_b;)[^;]+$' 0 3

# The perf script text shows the same caller lines.
under_leaf=$(grep -A1 -P '^\t +[0-9a-f]+ leaf_work \(' "$workdir/out/perf_script.out" |
	grep -cP '^\t +[0-9a-f]+ caller_a \(' || true)
((under_leaf > 0)) || fail "perf_script.out does not show caller_a under leaf_work"

# The real perf script reads the capture without complaint and, as before,
# shows the frame-pointer chain alone: no DWARF unwinding of its own.
if command -v perf >/dev/null; then
	perf script -i "$workdir/out/perf.data" >"$workdir/perf.txt" 2>"$workdir/perf.err"
	! grep -v '^$' "$workdir/perf.err" | grep -v 'Warning:.*kernel' || fail "perf script complained"
	samples=$(folded total "$out")
	theirs=$(grep -c ' cpu-clock: *$' "$workdir/perf.txt" || true)
	((theirs == samples)) || fail "perf script sees $theirs samples, profcpu $samples"
	python3 - "$workdir/perf.txt" <<'PY' || fail "perf script repeats the leaf under its stacks"
import sys
stacks = open(sys.argv[1]).read().split("\n\n")
frames = [[line.split()[1] for line in s.strip().splitlines()[1:]] for s in stacks if s.strip()]
repeated = sum(1 for f in frames if len(f) > 1 and f[-1] == f[0])
print(f"perf script: {len(frames)} stacks, {repeated} end with their own leaf again")
sys.exit(1 if repeated else 0)
PY
fi
echo "ok"
