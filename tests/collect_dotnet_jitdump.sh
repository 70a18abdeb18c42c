#!/usr/bin/env bash
# Time spent in precompiled (ReadyToRun) framework code, named from the
# jitdump that profcpu has the runtime write whole through its diagnostics
# IPC (tests/dotnet/R2RLoop, with DOTNET_TC_CallCounting=0 so that the
# framework methods stay in their ReadyToRun code). The target is started
# with DOTNET_PerfMapEnabled=1, whose own jitdump .NET 10 cuts off after two
# stub records: profcpu repairs it. The hottest framework methods get the
# shares a DOTNET_ReadyToRun=0 run (everything jitted, in the perf map)
# gives.
source "$(dirname "$0")/lib.sh"

build_dotnet_app R2RLoop

# start NAME ENV...: starts R2RLoop with ENV; its pid is in ${pids[NAME]}.
declare -A pids
start_r2rloop() {
	local name=$1
	shift
	env DOTNET_TC_CallCounting=0 "$@" dotnet "$workdir/R2RLoop/r2rloop.dll" 60 >"$workdir/$name.out" 2>&1 &
	pids[$name]=$!
	background_pids+=($!)
}
# profile NAME: 6 seconds of run NAME into $workdir/NAME, in the background.
profile() {
	"$PROFCPU" collect -pid "${pids[$1]}" -duration 6 -F 499 -o "$workdir/$1" >"$workdir/$1.stderr" 2>&1 &
	profilers+=($!)
}

# share NAME REGEX: % of the samples of run NAME whose stack matches REGEX.
share() {
	folded share "$workdir/$1/folded_stacks.out" "$2"
}

# The ReadyToRun run and the one with everything jitted (fully optimized at
# once, as ReadyToRun code is: no Tier0) are sampled at the same time, so
# that they share whatever else loads the machine: how long a dictionary
# lookup takes against a sort moves with that load.
start_r2rloop r2r DOTNET_PerfMapEnabled=1
start_r2rloop jitted DOTNET_ReadyToRun=0 DOTNET_TieredCompilation=0
for name in r2r jitted; do
	until grep -qs ready "$workdir/$name.out"; do sleep 0.05; done
done
profilers=()
profile r2r
profile jitted
for profiler in "${profilers[@]}"; do wait "$profiler" || fail "profcpu collect failed"; done
kill "${pids[@]}"
cat "$workdir/r2r.stderr" "$workdir/jitted.stderr"
grep -q 'turned on the perf map and jitdump' "$workdir/r2r.stderr" || fail "the IPC was not used"
grep '^jitdump:' "$workdir/r2r/profcpu.log"
folded top "$workdir/r2r/folded_stacks.out" 3 | cut -c1-300

# Every managed frame named: no [Assembly.dll] (R2R code no one named), no
# [unknown], no [JIT] (generated code no one named).
unnamed=$(share r2r '\[[A-Za-z0-9_.]+\.dll\]|\[unknown\]|\[JIT\]')
echo "samples with an unnamed managed frame: $unnamed%"
python3 -c "import sys; sys.exit(0 if $unnamed <= 5 else 1)" ||
	fail "$unnamed% of samples have an unnamed managed frame, expected at most 5%"

# within RUN METHOD CALLER: % of CALLER's samples that are in METHOD.
within() {
	python3 -c "print(round(100 * $(share "$1" "$3.*$2") / max($(share "$1" "$3"), 0.1), 1))"
}
# assert_close WHAT R2R JITTED: the two shares lie within 5 points.
assert_close() {
	echo "$1: $2% from ReadyToRun code, $3% when jitted"
	python3 -c "import sys; sys.exit(0 if $2 >= 1 and abs($2 - $3) <= 5 else 1)" ||
		fail "$1: $2% from ReadyToRun code but $3% when jitted"
}
# Sorting takes most of the time either way, but how much depends on how
# fast each build of the code is (ReadyToRun code targets an older CPU):
# compare the sort helper's share of the sorting.
assert_close "ArraySortHelper in SortRound" "$(within r2r ArraySortHelper SortRound)" \
	"$(within jitted ArraySortHelper SortRound)"
echo "ArraySortHelper in all samples: $(share r2r ArraySortHelper)% from ReadyToRun code," \
	"$(share jitted ArraySortHelper)% when jitted"
# The lookups' share is small: compare it whole. (Within LookupRound, shared
# generic ReadyToRun code spends a third of its time in dispatch stubs and
# the runtime's generic lookups, which jitted code does not.)
assert_close "Dictionary FindValue" "$(share r2r 'Dictionary`2.*::FindValue')" \
	"$(share jitted 'Dictionary`2.*::FindValue')"

# The capture names the same frames later, from its own copies: collect
# named them from the jitdump as its copier parsed it, postprocess parses
# the copy.
cp "$workdir/r2r/folded_stacks.out" "$workdir/folded-by-collect"
"$PROFCPU" postprocess -dir "$workdir/r2r" >/dev/null
cmp -s "$workdir/folded-by-collect" "$workdir/r2r/folded_stacks.out" ||
	fail "postprocess named frames differently"
