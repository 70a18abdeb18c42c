#!/usr/bin/env bash
# Native code without frame pointers around generated code that keeps them
# (tests/workloads/jit_calls_native.c): run_generated -> jitted_caller (JIT)
# -> native_spin (native, no frame), and -> jitted_leaf (JIT, no frame).
# hybrid walks native_spin's CFI, jitted_caller's frame pointer and the
# native callers' CFI to the thread's start, and puts back jitted_caller
# under the frameless JIT leaf from the return address at the stack pointer;
# dwarf, with CFI alone, stops at the JIT frame.
source "$(dirname "$0")/lib.sh"

root='(start_thread|__libc_start_call_main;main);worker;run_generated;jitted_caller\[Generated\]'

capture() {
	start "$WORKLOAD_JIT_CALLS_NATIVE" 30
	"$PROFCPU" collect -pid "$started_pid" -duration 3 -F 499 --call-graph "$1" \
		-o "$workdir/$1" >/dev/null
	kill "$started_pid"
	folded top "$workdir/$1/folded_stacks.out" 4
}

# ratio PART WHOLE LOW: PART's share of WHOLE is at least LOW.
at_least() {
	python3 -c "import sys; r = $1 / max($2, 0.1); print(f'ratio {r:.2f}'); sys.exit(0 if r >= $3 else 1)"
}

capture hybrid
out=$workdir/hybrid/folded_stacks.out
native=$(folded share "$out" ';native_spin(;|$)')
leaf=$(folded share "$out" ';jitted_leaf\[Generated\](;|$)')
python3 -c "import sys; sys.exit(0 if $native >= 30 and $leaf >= 5 else 1)" ||
	fail "hybrid: native_spin has $native%, jitted_leaf $leaf%"
at_least "$(folded share "$out" "$root;native_spin(;|\$)")" "$native" 0.95 ||
	fail "hybrid: native_spin does not sit under jitted_caller, run_generated and the thread's start"
at_least "$(folded share "$out" "$root;jitted_leaf\\[Generated\\](;|\$)")" "$leaf" 0.90 ||
	fail "hybrid: the frameless JIT leaf lost its caller jitted_caller"
assert_share "$out" ';run_generated;jitted_leaf' 0 1

capture dwarf
out=$workdir/dwarf/folded_stacks.out
assert_share "$out" '^[^;]+;jitted_caller\[Generated\];native_spin(;|$)' 30 100
assert_share "$out" ';run_generated;' 0 1
echo "ok"
