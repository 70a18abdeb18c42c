#!/usr/bin/env bash
# A second opinion on the managed frames of profcpu's stacks: the .NET
# runtime's own sampler (the Microsoft-DotNETCore-SampleProfiler provider,
# recorded in the same capture's EventPipe session) walks each managed
# thread's stack itself, with the runtime's unwind data for every method.
# On WebMix hashing and compressing under its own load (ReadyToRun
# framework code and JIT code above libcrypto and zlib), almost no sample
# of profcpu's may hold a caller -> callee pair of managed methods that the
# runtime never showed: a frame skipped or made up by the walk would, again
# and again. Measured: hybrid 1.2 to 4.9% of samples with such a pair, each
# seen once or twice (rare paths the runtime's sampler did not happen to
# see), none seen 3 times; fp mode 10.7%, on the sixth of its samples that
# hold two managed frames. With every route of WebMix the rare tail grows to
# 15% (1.5% seen 3 times): too many rare paths for 10 s, so the routes are
# the two of the issue's stacks.
source "$(dirname "$0")/lib.sh"

build_traceevent_checker runtime_stacks
build_dotnet_app WebMix
port=$(free_port)
start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$port" 120 sha256,gzip
sleep 3 # past start-up, into the steady load
"$PROFCPU" collect -pid "$started_pid" -duration 10 -o "$workdir/web" \
	-events 'Microsoft-DotNETCore-SampleProfiler:0x0:5,Microsoft-Windows-DotNETRuntime:0x60098:5' \
	>/dev/null 2>"$workdir/collect.err" || { cat "$workdir/collect.err"; fail "collect failed"; }
kill "$started_pid"
dotnet "$workdir/runtime_stacks-bin/RuntimeStacks.dll" "$workdir/web/runtime.nettrace" \
	>"$workdir/runtime_stacks.txt" || fail "no stacks of the runtime's sampler in the nettrace"
python3 "$tests_dir/managed_pairs.py" "$workdir/runtime_stacks.txt" \
	"$workdir/web/folded_stacks.out" | tee "$workdir/pairs.txt"
total=$(folded total "$workdir/web/folded_stacks.out")
value() { awk -v key="$1" '$1 == key {print $2}' "$workdir/pairs.txt"; }
# fp mode holds two managed frames in a sixth of its samples (its stacks
# stop in libcrypto and zlib), hybrid in nine tenths.
python3 -c "import sys; sys.exit(0 if $(value checked) >= 0.5 * $total else 1)" ||
	fail "only $(value checked) of $total samples hold two managed frames"
python3 -c "import sys; sys.exit(0 if $(value unseen) <= 10 else 1)" ||
	fail "$(value unseen)% of samples hold a managed caller -> callee pair the runtime never showed"
python3 -c "import sys; sys.exit(0 if $(value unseen-repeated) <= 2 else 1)" ||
	fail "$(value unseen-repeated)% of samples hold a pair the runtime never showed, seen 3 times or more"
echo "PASS"
