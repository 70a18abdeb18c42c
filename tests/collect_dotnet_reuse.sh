#!/usr/bin/env bash
# Dynamic methods that free their code, run one after another at one address
# (tests/dotnet/DynReuse): each sample names the method that was there at its
# time, from the jitdump's timed records (the IPC route), and from when each
# perf map line appeared (the perf map alone, diagnostics off), and from
# the runtime's memory as each sample is read (diagnostics off); a later
# profcpu postprocess of the folder gives the same names.
source "$(dirname "$0")/lib.sh"

build_dotnet_app DynReuse

# check_phases NAME FOLDER MINIMUM: at least MINIMUM% of the samples in the
# dynamic methods name the phase running at their time.
check_phases() {
	local result
	python3 "$tests_dir/phases.py" "$workdir/$1.out" "$2/perf_script.out" | tee "$workdir/$1.phases"
	result=$(tail -1 "$workdir/$1.phases")
	read -r _ total percent <<<"$result"
	((total >= 30)) || fail "$1: only $total samples in the dynamic methods"
	python3 -c "import sys; sys.exit(0 if $percent >= $3 else 1)" ||
		fail "$1: $percent% of samples name their own phase, expected at least $3%"
}

# run NAME ENV...: profiles DynReuse (6 phases of 1.5 s) to its end.
run() {
	local name=$1
	shift
	env "$@" dotnet "$workdir/DynReuse/dynreuse.dll" 6 1.5 >"$workdir/$name.out" 2>&1 &
	background_pids+=($!)
	until grep -qs ready "$workdir/$name.out"; do sleep 0.05; done
	"$PROFCPU" collect -pid $! -o "$workdir/$name" 2>&1 | tee "$workdir/$name.stderr"
	wait $! || true
	grep -q '^done' "$workdir/$name.out" || fail "$name: DynReuse did not finish"
	# Every phase ran at one address (else this test shows nothing).
	local addresses
	addresses=$(grep 'dynamicClass::Phase[1-9]' "$workdir/$name/perf-"*.map | cut -d' ' -f1 | sort -u | wc -l)
	echo "$name: dynamic methods at $addresses address(es)"
	((addresses == 1)) || skip "the runtime did not reuse the freed code's address"
}

# The IPC route: the jitdump, timed to the nanosecond.
run jitdump
grep -q 'turned on the perf map and jitdump' "$workdir/jitdump.stderr" || fail "the IPC was not used"
check_phases jitdump "$workdir/jitdump" 95
# collect named the samples from the jitdump as its copier parsed it, a
# postprocess from the copy: every sample is named alike.
cp "$workdir/jitdump/perf_script.out" "$workdir/jitdump-by-collect.txt"
"$PROFCPU" postprocess -dir "$workdir/jitdump" >/dev/null
cmp -s "$workdir/jitdump-by-collect.txt" "$workdir/jitdump/perf_script.out" ||
	fail "postprocess named samples differently from collect"
cp "$workdir/jitdump.out" "$workdir/jitdump-later.out"
check_phases jitdump-later "$workdir/jitdump" 95

# The perf map alone: each line dated by the poll that first saw it.
run perfmap DOTNET_PerfMapEnabled=3 DOTNET_EnableDiagnostics=0
[[ ! -s "$workdir/perfmap/jit-"*.dump ]] 2>/dev/null || fail "a jitdump where none was asked for"
check_phases perfmap "$workdir/perfmap" 85
"$PROFCPU" postprocess -dir "$workdir/perfmap" >/dev/null
cp "$workdir/perfmap.out" "$workdir/perfmap-later.out"
check_phases perfmap-later "$workdir/perfmap" 85

# The runtime's memory alone (diagnostics off, no perf map): each dynamic
# method's code looked up as its samples are read (memory_perfmap.h).
run memory DOTNET_EnableDiagnostics=0
grep -q "from its runtime's memory" "$workdir/memory.stderr" || fail "the runtime's memory was not read"
check_phases memory "$workdir/memory" 85
"$PROFCPU" postprocess -dir "$workdir/memory" >/dev/null
cp "$workdir/memory.out" "$workdir/memory-later.out"
check_phases memory-later "$workdir/memory" 85
