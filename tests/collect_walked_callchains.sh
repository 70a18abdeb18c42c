#!/usr/bin/env bash
# Hybrid samples whose walk the collector is certain of are written with the
# walked frames as their user callchain and no stack copy (docs/UNWINDING.md,
# "Samples written as their walk"): most samples of a call tree built
# without frame pointers and of a .NET app. Their stacks are those of a
# capture of the same process that keeps every copy whole
# (PROFCPU_KEEP_STACK_COPIES=1), which the replay walks itself; and the real
# perf shows them whole, the leaf once.
source "$(dirname "$0")/lib.sh"

# copies PERF_DATA: "SAMPLES WITHOUT_A_COPY".
copies() {
	"$PERF_DATA_TOOL" summary "$1" | awk '/^sample: / { n++; if ($6 == 0) none++ } END { print n + 0, none + 0 }'
}

# capture NAME PID SECONDS [ENV...]: collects PID into $workdir/NAME.
capture() {
	local name=$1 pid=$2 seconds=$3
	shift 3
	env "$@" "$PROFCPU" collect -pid "$pid" -duration "$seconds" -F 499 -o "$workdir/$name" \
		>"$workdir/$name.stdout"
	folded top "$workdir/$name/folded_stacks.out" 3
}

# assert_written_as_walks NAME LOW: at least LOW% of the capture's samples
# carry no copy.
assert_written_as_walks() {
	local counts
	counts=$(copies "$workdir/$1/perf.data")
	echo "$1: samples, without a copy: $counts"
	python3 -c "import sys; n, none = map(int, '$counts'.split()); sys.exit(0 if n and none >= $2 / 100 * n else 1)" ||
		fail "$1: fewer than $2% of the samples are written as their walk"
}

# The reference keeps every copy and walks it in the replay.
assert_kept_copies() {
	local counts
	counts=$(copies "$workdir/$1/perf.data")
	[[ ${counts#* } == 0 ]] || fail "$1: PROFCPU_KEEP_STACK_COPIES=1 still wrote samples without a copy ($counts)"
}

# capture_both PID LOW: PID captured twice, as walks (at least LOW% of its
# samples without a copy) and keeping every copy.
capture_both() {
	capture walked "$1" 3
	capture copies "$1" 3 PROFCPU_KEEP_STACK_COPIES=1
	assert_written_as_walks walked "$2"
	assert_kept_copies copies
}

# same_shares REGEX...: each REGEX's share is within 8 points in both.
same_shares() {
	assert_shares_agree "written as walks" "$workdir/walked/folded_stacks.out" \
		"from whole copies" "$workdir/copies/folded_stacks.out" 8 "$@"
}

rooted_share() {
	sed -n 's/^stacks: .*(\([0-9.]*\)%) reach a thread root.*/\1/p' "$workdir/$1/profcpu.log"
}

# A native call tree six deep, -O2 -fomit-frame-pointer, on two threads.
start "$WORKLOAD_OMITTED_FRAMES" 60
pid=$started_pid
capture_both "$pid" 90
path='(start_thread|__libc_start_call_main;main);worker;stage_one;stage_two;stage_three;hot_[ab];spin(;|$)'
assert_share "$workdir/walked/folded_stacks.out" "$path" 97 100
same_shares "$path" ';hot_a;spin(;|$)' ';hot_b;spin(;|$)' '^[^;]*;(_start;.*)?__libc_start_call_main;main;'
for name in walked copies; do
	rooted=$(rooted_share "$name")
	python3 -c "import sys; sys.exit(0 if $rooted >= 97 else 1)" || fail "$name: only $rooted% reach a thread root"
done
kill "$pid"

if command -v perf >/dev/null; then
	perf script -i "$workdir/walked/perf.data" >"$workdir/perf.txt" 2>/dev/null
	python3 - "$workdir/perf.txt" <<'PY' || fail "perf script does not show the walked stacks whole"
import sys
stacks = [s for s in open(sys.argv[1]).read().split("\n\n") if "spin+" in s]
whole = sum(1 for s in stacks if "stage_one+" in s and ("start_thread+" in s or "__libc_start_call_main+" in s)
            and s.count("spin+") == 1)
print(f"perf script: {whole} of {len(stacks)} stacks in spin whole, the leaf once")
sys.exit(0 if stacks and whole >= 0.9 * len(stacks) else 1)
PY
fi

# A .NET app: JIT code between the runtime's native frames and Main.
build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
pid=$started_pid
wait_for_tier1 "$pid"
capture_both "$pid" 80
hot=';hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::Caller;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)'
assert_share "$workdir/walked/folded_stacks.out" "$hot" 80 100
same_shares "$hot" '__libc_start_call_main;.*hotloop!Demo\.Program::Main;'
echo "ok"
