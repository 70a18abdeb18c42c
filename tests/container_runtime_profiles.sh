#!/usr/bin/env bash
# The runtime events' profiles from a least-privilege sidecar container
# (PERFMON, SYS_PTRACE, unconfined seccomp) sharing the PID namespace of a
# .NET app in its own container (tests/dotnet/EventStacks, the host's .NET
# runtime copied into the image) that waits, throws and allocates 2:1
# between two methods each: profcpu collect -pid 1 -events
# contention,exceptions,alloc, stopped with SIGINT as `podman kill` sends it,
# writes the three profiles, each split 2:1 within 10% and named (at most 5%
# of the weight under no named frame), the exceptions those the app caught,
# and its summary names first, among the threads that held the locks, the
# app's holder thread by its tid in the app's PID namespace.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

build_dotnet_app EventStacks
import_dotnet_app localhost/stacks-app "$workdir/EventStacks"
"$tests_dir/../container/build-image" localhost/stacks-profcpu -- "${podman_options[@]}" >/dev/null

mkdir -m 777 "$workdir/out" "$workdir/trigger"
app=stacks-app-$$ sidecar=stacks-sidecar-$$
run -d --name "$app" -v "$workdir/trigger:/trigger" -e DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 localhost/stacks-app \
	"$dotnet_root/dotnet" /app/eventstacks.dll /trigger/go 100 >/dev/null ||
	skip "podman cannot run containers here"
until podman logs "$app" 2>&1 | grep -q ready; do
	[[ $(podman inspect -f '{{.State.Running}}' "$app") == true ]] || { podman logs "$app"; fail "the app container stopped"; }
	sleep 0.2
done
run -d --name "$sidecar" --pid=container:"$app" --cap-add PERFMON --cap-add SYS_PTRACE \
	--security-opt seccomp=unconfined -v "$workdir/out:/profilings" localhost/stacks-profcpu \
	profcpu collect -pid 1 -events contention,exceptions,alloc -o /profilings/run >/dev/null
until grep -q 'EventPipe session' "$workdir/out/run/profcpu.log" 2>/dev/null; do
	[[ $(podman inspect -f '{{.State.Running}}' "$sidecar") == true ]] ||
		{ podman logs "$sidecar"; fail "the sidecar stopped before its event session started"; }
	sleep 0.2
done
touch "$workdir/trigger/go"
until podman logs "$app" 2>&1 | grep -q done; do
	[[ $(podman inspect -f '{{.State.Running}}' "$app") == true ]] || { podman logs "$app"; fail "the app container stopped"; }
	sleep 0.2
done
podman kill --signal INT "$sidecar" >/dev/null
[[ $(podman wait "$sidecar") == 0 ]] || { podman logs "$sidecar"; fail "collect in the sidecar failed"; }
podman logs "$sidecar" >"$workdir/sidecar.out" 2>&1
podman logs "$app" >"$workdir/app.out" 2>&1
cat "$workdir/app.out" "$workdir/sidecar.out"

# assert_two_to_one WHAT A B: A is twice B, within 10%.
assert_two_to_one() {
	echo "$1: $2 against $3"
	python3 -c "import sys; a, b = $2, $3; sys.exit(0 if b > 0 and 1.8 <= a / b <= 2.2 else 1)" ||
		fail "$1: $2 against $3 is not 2:1 within 10%"
}
out=$workdir/out/run
assert_two_to_one "time waited in WaitOnA and WaitOnB (ns)" \
	"$(folded count "$out/contention_folded_stacks.out" 'Demo\.Program::WaitOnA(;|$)')" \
	"$(folded count "$out/contention_folded_stacks.out" 'Demo\.Program::WaitOnB(;|$)')"
assert_two_to_one "exceptions from ThrowA and ThrowB" \
	"$(folded count "$out/exceptions_folded_stacks.out" 'Demo\.Program::ThrowA;.*Demo\.KnownException$')" \
	"$(folded count "$out/exceptions_folded_stacks.out" 'Demo\.Program::ThrowB;.*Demo\.KnownException$')"
assert_two_to_one "bytes allocated in AllocateA and AllocateB" \
	"$(folded count "$out/alloc_folded_stacks.out" 'Demo\.Program::AllocateA;System\.Byte\[\]$')" \
	"$(folded count "$out/alloc_folded_stacks.out" 'Demo\.Program::AllocateB;System\.Byte\[\]$')"
caught=$(awk '$1 == "exceptions" {print $2}' "$workdir/app.out")
[[ $(folded count "$out/exceptions_folded_stacks.out" 'Demo\.KnownException$') == "$caught" ]] ||
	fail "the sidecar counts $(folded count "$out/exceptions_folded_stacks.out" 'Demo\.KnownException$') Demo.KnownException, the app caught $caught"
[[ $(grep -c 'under no named frame' "$workdir/sidecar.out") == 3 ]] || fail "the sidecar's summary does not give the three profiles"
while read -r share; do
	python3 -c "import sys; sys.exit(0 if $share <= 5 else 1)" || fail "$share% of a profile's weight is under no named frame"
done < <(sed -nE 's/^profcpu: .*: [0-9]+ events, ([0-9.]+)% under no named frame$/\1/p' "$workdir/sidecar.out")
holder=$(awk '$1 == "holder-tid" {print $2}' "$workdir/app.out")
grep -A1 '^    by the thread that held the lock:$' "$workdir/sidecar.out" | tail -1 | grep -qE " waits  tid $holder$" ||
	fail "the sidecar's summary does not name the holder thread $holder first among the threads that held the locks"
echo "ok: from the sidecar, contention, exceptions and allocations split 2:1 and named; $caught exceptions; the locks' holder named"
