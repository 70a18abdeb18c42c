#!/usr/bin/env bash
# A hardened .NET app in a container (DOTNET_EnableDiagnostics=0: no
# diagnostics IPC, no perf map, no jitdump; not root, as uid 1654, the `app`
# user of Microsoft's .NET images; tests/dotnet/HotLoop, the host's .NET
# runtime copied into the image) profiled by the least-privilege sidecar of
# container_sidecar.sh (PERFMON, SYS_PTRACE, unconfined seccomp, its PID
# namespace shared, its /tmp its own): `profcpu collect -pid 1` names the
# app's JIT frames from its runtime's memory (process_vm_readv across the
# containers, which SYS_PTRACE allows for another user's process), at most
# 1% of the samples with a [JIT] frame and
# HotMethod under Main and Caller in at least 80% (all the app does past
# its tier-up), and writes nothing in the app's /tmp. With --names perfmap
# (the memory route off) the same app is [JIT] in most samples: the checks
# above would fail there.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

build_hotloop
import_dotnet_app localhost/no-diagnostics-app "$workdir/bin"
"$tests_dir/../container/build-image" localhost/no-diagnostics-profcpu -- "${podman_options[@]}" >/dev/null

app=no-diagnostics-app-$$
run -d --name "$app" --user 1654:1654 -e DOTNET_EnableDiagnostics=0 -e DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
	localhost/no-diagnostics-app "$dotnet_root/dotnet" /app/hotloop.dll 600 >/dev/null ||
	skip "podman cannot run containers here"
until podman logs "$app" 2>&1 | grep -q ready; do
	[[ $(podman inspect -f '{{.State.Running}}' "$app") == true ]] || { podman logs "$app"; fail "the app container stopped"; }
	sleep 0.2
done
# Past tier-up (3 s of the app's CPU): before it, HotMethod's tier-0 and OSR
# code runs, whose samples skip Caller.
host_pid=$(podman inspect -f '{{.State.Pid}}' "$app")
until (($(cpu_ticks "$host_pid") >= 3 * $(getconf CLK_TCK))); do sleep 0.2; done
compgen -G "/proc/$host_pid/root/tmp/dotnet-diagnostic-*" >/dev/null &&
	fail "the app opened its diagnostics IPC despite DOTNET_EnableDiagnostics=0"

mkdir -m 777 "$workdir/out"
sidecar=(--rm --pid=container:"$app" --cap-add PERFMON --cap-add SYS_PTRACE --security-opt seccomp=unconfined
	-v "$workdir/out:/profilings" localhost/no-diagnostics-profcpu)
run "${sidecar[@]}" profcpu collect -pid 1 -duration 5 -F 299 -o /profilings/memory 2>"$workdir/memory.err" ||
	{ cat "$workdir/memory.err"; fail "collect in the sidecar failed"; }
cat "$workdir/memory.err"
grep -q "naming the JIT frames of .NET pid 1 from its runtime's memory" "$workdir/memory.err" ||
	fail "the sidecar did not name the app's JIT frames from its runtime's memory"
grep "names from the runtime's memory" "$workdir/out/memory/profcpu.log" ||
	fail "the sidecar's log gives no lookups in the runtime's memory"
folded top "$workdir/out/memory/folded_stacks.out" 5
(($(folded total "$workdir/out/memory/folded_stacks.out") >= 200)) || fail "the sidecar sampled the app less than 200 times"
assert_share "$workdir/out/memory/folded_stacks.out" '\[JIT\]' 0 1
assert_share "$workdir/out/memory/folded_stacks.out" \
	';hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::Caller;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)' 80 100
for file in perf-1.map jit-1.dump; do
	[[ ! -e /proc/$host_pid/root/tmp/$file ]] || fail "the sidecar made the app write /tmp/$file"
done

# The memory route off: the perf map route has nothing to read here.
run "${sidecar[@]}" profcpu collect -pid 1 -duration 2 --names perfmap -o /profilings/perfmap 2>/dev/null ||
	fail "collect --names perfmap in the sidecar failed"
assert_share "$workdir/out/perfmap/folded_stacks.out" '\[JIT\]' 50 100
echo PASS
