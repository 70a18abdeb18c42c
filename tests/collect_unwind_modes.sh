#!/usr/bin/env bash
# Whole stacks through code without frame pointers: a call tree six deep,
# built -O2 -fomit-frame-pointer, on two threads (tests/workloads/
# omitted_frames.c). hybrid (the default) and dwarf unwind it with its call
# frame information to the thread's start in nearly every sample, with
# hot_a holding 3/4 of spin; fp, the kernel's frame-pointer walk, cannot.
source "$(dirname "$0")/lib.sh"

path='(start_thread|__libc_start_call_main;main);worker;stage_one;stage_two;stage_three;hot_[ab];spin(;|$)'

# capture MODE: samples the workload in MODE into $workdir/MODE.
capture() {
	start "$WORKLOAD_OMITTED_FRAMES" 30
	"$PROFCPU" collect -pid "$started_pid" -duration 3 -F 499 --call-graph "$1" \
		-o "$workdir/$1" >"$workdir/$1.stdout"
	kill "$started_pid"
	cat "$workdir/$1.stdout"
	folded top "$workdir/$1/folded_stacks.out" 4
}

# The share of samples that reach a thread root, as the log says it.
rooted_share() {
	sed -n 's/^stacks: .*(\([0-9.]*\)%) reach a thread root.*/\1/p' "$workdir/$1/profcpu.log"
}

for mode in hybrid dwarf; do
	capture "$mode"
	out=$workdir/$mode/folded_stacks.out
	grep -q "^call graph: $mode, 16384 bytes" "$workdir/$mode/profcpu.log" || fail "$mode: the log does not name the mode"
	assert_share "$out" "$path" 97 100
	spin=$(folded share "$out" ';spin(;|$)')
	hot_a=$(folded share "$out" ';stage_three;hot_a;spin(;|$)')
	python3 -c "import sys; r = $hot_a / max($spin, 0.1); print(f'$mode: hot_a holds {r:.2f} of spin'); sys.exit(0 if 0.65 <= r <= 0.85 else 1)" ||
		fail "$mode: hot_a does not hold 3/4 of spin"
	rooted=$(rooted_share "$mode")
	grep -q "reach a thread root" "$workdir/$mode.stdout" || fail "$mode: no share of whole stacks in the summary"
	python3 -c "import sys; sys.exit(0 if $rooted >= 97 else 1)" || fail "$mode: only $rooted% reach a thread root"
done

# The collector keeps of each 16 KiB copy only what the walk reads, the
# frames down to the thread's start: a few hundred bytes here.
if command -v perf >/dev/null; then
	perf report -D -i "$workdir/hybrid/perf.data" 2>/dev/null |
		sed -n 's/.*ustack: size \([0-9]*\),.*/\1/p' >"$workdir/copies.txt"
	python3 - "$workdir/copies.txt" <<'PY' || fail "hybrid: the stack copies are not cut to what the walk reads"
import sys
sizes = [int(line) for line in open(sys.argv[1])]
mean = sum(sizes) / max(len(sizes), 1)
print(f"hybrid: {len(sizes)} stack copies, {mean:.0f} bytes kept on average of 16384")
sys.exit(0 if sizes and mean <= 2048 else 1)
PY
fi

# The real perf unwinds the dwarf capture with its own DWARF unwinder and
# finds the same path.
if command -v perf >/dev/null; then
	perf script -i "$workdir/dwarf/perf.data" >"$workdir/perf.txt" 2>/dev/null
	python3 - "$workdir/perf.txt" <<'PY' || fail "perf script does not unwind the dwarf capture"
import sys
stacks = [s for s in open(sys.argv[1]).read().split("\n\n") if s.strip()]
whole = sum(1 for s in stacks if "stage_one+" in s and ("start_thread+" in s or "__libc_start_call_main+" in s))
print(f"perf script: {whole} of {len(stacks)} stacks reach the thread's start")
sys.exit(0 if whole >= 0.9 * len(stacks) else 1)
PY
fi

# Frame pointers alone lose the path: the -O2 code keeps none.
capture fp
assert_share "$workdir/fp/folded_stacks.out" "$path" 0 10
rooted=$(rooted_share fp)
python3 -c "import sys; sys.exit(0 if $rooted <= 10 else 1)" || fail "fp: $rooted% reach a thread root"
echo "ok"
