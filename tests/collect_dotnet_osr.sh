#!/usr/bin/env bash
# A loop that runs in on-stack-replaced code for the whole process: OsrWorker
# (tests/dotnet/OsrWorker) calls Worker once on the main thread (Main ->
# MainOuter -> Worker) and once on a thread of its own (ThreadRoot, its
# ThreadStart -> ThreadOuter -> Worker); Worker calls Step from its loop,
# where a third of the time goes. Worker's loop moves from its
# quick-JIT code to its OSR code ([OptimizedTier1OSR]) at once and never
# leaves it. The OSR code runs on top of the quick-JIT frame, with rbp
# pointing at a copy of that frame's saved rbp: the rbp chain goes from the
# OSR frame to the quick-JIT frame and then to the caller's caller, and
# MainOuter and ThreadOuter were missing from every such sample.
#  - hybrid: at least 95% of Worker's samples reach Main through MainOuter,
#    and the thread's start (start_thread) through ThreadOuter, in the
#    collector's walk and in a replay of the stack copies, Step's samples
#    (OSR code as a caller) among them;
#  - fp (the kernel's frame-pointer callchain, as perf -g, which skips
#    them): the replay puts them back where the leaf is the OSR code and
#    the sample's 512 bytes of stack hold both frames, here 95% or more of
#    the samples in Worker itself (Step's keep the callchain as it is);
#  - a second opinion: the same app without tiered compilation (Worker
#    optimized at once, no OSR) reaches them in hybrid mode as well.
source "$(dirname "$0")/lib.sh"

build_dotnet_app OsrWorker "$workdir/app"
worker='osrworker!Demo\.Program::Worker'
main_thread='^dotnet;.*'$worker
main_chain='__libc_start_call_main;.*;osrworker!Demo\.Program::Main;osrworker!Demo\.Program::MainOuter;'$worker
own_thread='^osr-thread;.*'$worker
thread_chain='^osr-thread;(__clone3;)?start_thread;.*!System\.Threading\.Thread::StartCallback;osrworker!Demo\.Program::ThreadRoot;osrworker!Demo\.Program::ThreadOuter;'$worker

# assert_reach FOLDED THREAD CHAIN LOW HIGH: of the samples whose stack
# matches THREAD, the share (in %) that also matches CHAIN lies in
# [LOW, HIGH], of at least 20 such samples (a loaded machine gives the app
# few).
assert_reach() {
	local all reached share
	all=$(folded count "$1" "$2")
	reached=$(folded count "$1" "$3")
	share=$(python3 -c "print(f'{100 * $reached / max($all, 1):.1f}')")
	echo "$reached of $all samples of /$2/ match /$3/: $share%"
	python3 -c "import sys; sys.exit(0 if $all >= 20 and $4 <= $share <= $5 else 1)" ||
		fail "$reached of $all samples of /$2/ match /$3/ ($share%), expected $4..$5%"
}

DOTNET_TieredCompilation=1 start_dotnet_app "$workdir/app/osrworker.dll" 120
for mode in hybrid fp; do
	PROFCPU_KEEP_STACK_COPIES=1 "$PROFCPU" collect -pid "$started_pid" -duration 4 \
		--call-graph "$mode" -o "$workdir/$mode" >/dev/null
	folded top "$workdir/$mode/folded_stacks.out" 2
done
kill "$started_pid"
# Worker runs as its OSR code: the innermost Worker frame of nearly every
# sample is [OptimizedTier1OSR].
python3 - "$workdir/hybrid/perf_script.out" <<'PY' || fail "Worker does not run as OSR code"
import re, sys
frame = re.compile(r"Demo\.Program::Worker\(\)\[(\w+)\]")
tiers = [m.group(1) for sample in open(sys.argv[1]).read().split("\n\n")
         if (m := frame.search(sample))]
osr = tiers.count("OptimizedTier1OSR")
print(f"{osr} of {len(tiers)} samples in Worker run its OSR code")
sys.exit(0 if tiers and osr >= 0.9 * len(tiers) else 1)
PY
assert_reach "$workdir/hybrid/folded_stacks.out" "$main_thread" "$main_chain" 95 100
assert_reach "$workdir/hybrid/folded_stacks.out" "$own_thread" "$thread_chain" 95 100
assert_reach "$workdir/hybrid/folded_stacks.out" "$worker" "$worker;osrworker!Demo\.Program::Step" 10 60
# The replay walks the stack copies again, with the capture's jitdump.
"$PROFCPU" postprocess -dir "$workdir/hybrid" >/dev/null
assert_reach "$workdir/hybrid/folded_stacks.out" "$main_thread" "$main_chain" 95 100
assert_reach "$workdir/hybrid/folded_stacks.out" "$own_thread" "$thread_chain" 95 100
assert_reach "$workdir/fp/folded_stacks.out" "$main_thread\$" "$main_chain\$" 95 100
assert_reach "$workdir/fp/folded_stacks.out" "$own_thread\$" "$thread_chain\$" 95 100

DOTNET_TieredCompilation=0 start_dotnet_app "$workdir/app/osrworker.dll" 120
"$PROFCPU" collect -pid "$started_pid" -duration 4 -o "$workdir/no_osr" >/dev/null
kill "$started_pid"
folded top "$workdir/no_osr/folded_stacks.out" 2
grep -q 'Worker()\[OptimizedTier1OSR\]' "$workdir/no_osr/perf_script.out" &&
	fail "Worker ran as OSR code without tiered compilation"
assert_reach "$workdir/no_osr/folded_stacks.out" "$main_thread" "$main_chain" 95 100
assert_reach "$workdir/no_osr/folded_stacks.out" "$own_thread" "$thread_chain" 95 100
echo "PASS"
