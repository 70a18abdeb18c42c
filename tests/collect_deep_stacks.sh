#!/usr/bin/env bash
# Stacks deeper than the kernel's callchain limit are cut there in fp mode:
# profcpu keeps the frames it got, says how many stacks lost their roots, and
# how to raise the limit. The hybrid walk, not bound by that limit, reaches
# the root through the stack copy.
source "$(dirname "$0")/lib.sh"

limit=$(cat /proc/sys/kernel/perf_event_max_stack)
start "$WORKLOAD_DEEP_RECURSION" $((limit + 50))
"$PROFCPU" collect -pid "$started_pid" -duration 2 --call-graph fp -o "$workdir/out" 2>"$workdir/stderr"
cat "$workdir/stderr"
grep -q "reached the kernel's limit of $limit frames" "$workdir/stderr" ||
	fail "no word of stacks cut at $limit frames"
grep -q 'kernel.perf_event_max_stack' "$workdir/stderr" || fail "no advice on raising the limit"
# The frames the kernel gave are all there: the leaf and limit-1 callers.
# (On a busy machine a tenth or more of the samples land in the kernel's
# scheduling work on the spinner's behalf: kernel frames above the leaf,
# and fewer of the user frames in the kernel's limit.)
assert_share "$workdir/out/folded_stacks.out" "^workload_deep_r;(recurse;){$((limit - 1))}spin_at_the_bottom\$" 75 100

# hybrid: the whole recursion, limit + 51 calls of recurse under main, and
# no word of cut stacks.
"$PROFCPU" collect -pid "$started_pid" -duration 2 -o "$workdir/hybrid" 2>"$workdir/stderr"
grep -q "kernel's limit" "$workdir/stderr" && fail "hybrid: a warning about cut stacks that reach their root"
assert_share "$workdir/hybrid/folded_stacks.out" "__libc_start_call_main;main;(recurse;){$((limit + 51))}spin_at_the_bottom(;.*)?\$" 90 100

# Shallow stacks: no warning.
start "$WORKLOAD_SPLIT" 10
"$PROFCPU" collect -pid "$started_pid" -duration 1 -o "$workdir/shallow" 2>"$workdir/stderr"
grep -q "kernel's limit" "$workdir/stderr" && fail "a warning about cut stacks without any"
exit 0
