#!/usr/bin/env bash
# Off-CPU time and PerfView's Thread Time from a least-privilege sidecar
# container (PERFMON, SYS_PTRACE, unconfined seccomp; no tracefs inside, as in
# every container) sharing the PID namespace of an ASP.NET Core app in its own
# container (tests/dotnet/WebMix, the host's .NET runtime copied into the
# image), under its own load: a CPU-bound route and a route that blocks 100 ms
# in Task.Delay(100).Wait(), asked in turn by one client per core (the
# blocking route twice for each CPU request, so that a loaded machine, where
# the CPU route takes longer, still leaves the clients mostly blocked), 6
# cores to .NET (DOTNET_PROCESSOR_COUNT): the blocked requests' share of the
# thread time is at most the clients over the threads (about 25).
#   - profcpu collect -pid 1 --off-cpu: the switches come from the software
#     event; the blocking route's off-CPU time is its Task.Wait, the CPU
#     route leads on CPU; JIT and ReadyToRun frames are named and the
#     runtime's events recorded in the same run.
#   - perfcollect's form, profcpu collect NAME -pid 1 -threadtime: the zip's
#     Thread Time, read by TraceEvent as PerfView reads it, shows the
#     blocking route blocked for at least 10% of the thread time.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

build_dotnet_app WebMix
build_traceevent_checker traceevent
import_dotnet_app localhost/offcpu-webmix "$workdir/WebMix"
"$tests_dir/../container/build-image" localhost/offcpu-profcpu -- "${podman_options[@]}" >/dev/null

app=offcpu-app-$$
run -d --name "$app" -e DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 -e DOTNET_PROCESSOR_COUNT=6 localhost/offcpu-webmix \
	"$dotnet_root/dotnet" /app/webmix.dll http://127.0.0.1:5080 300 cpu,block,block >/dev/null ||
	skip "podman cannot run containers here"
until podman logs "$app" 2>&1 | grep -q ready; do
	[[ $(podman inspect -f '{{.State.Running}}' "$app") == true ]] ||
		{ podman logs "$app"; fail "the ASP.NET Core app container stopped"; }
	sleep 0.2
done
mkdir -m 777 "$workdir/out"
sidecar=(--rm --pid=container:"$app" --cap-add PERFMON --cap-add SYS_PTRACE
	--security-opt seccomp=unconfined -v "$workdir/out:/profilings" localhost/offcpu-profcpu)
if run "${sidecar[@]}" ls /sys/kernel/tracing/events/sched >/dev/null 2>&1; then
	fail "the sidecar sees tracefs: this test is about containers without it"
fi
sleep 10 # past start-up and the JIT's tier-up, into the steady load

run "${sidecar[@]}" profcpu collect -pid 1 -duration 12 -F 299 --off-cpu -o /profilings/off 2>&1 |
	tee "$workdir/stderr"
grep -q '^off-CPU: context-switches ' "$workdir/out/off/profcpu.log" ||
	fail "in the sidecar, the switches did not come from the software event: $(grep '^off-CPU' "$workdir/out/off/profcpu.log")"
on=$workdir/out/off/folded_stacks.out
off=$workdir/out/off/offcpu_folded_stacks.out

# On CPU: the CPU route leads, its JIT-compiled handler named.
cpu=$(folded count "$on" 'webmix!.*Routes::Cpu')
in_routes=$(folded count "$on" 'Routes::')
cpu_share=$(folded share "$on" 'Routes::Cpu')
echo "on CPU: Routes::Cpu $cpu_share% of all, $cpu of the $in_routes samples in route handlers"
python3 -c "import sys; sys.exit(0 if $cpu >= 0.9 * $in_routes and $cpu_share >= 25 else 1)" ||
	fail "on CPU, the CPU route does not lead ($cpu_share%, $cpu of $in_routes in routes)"
# ReadyToRun: ASP.NET Core's precompiled code named, hardly any frame left
# as a bare [X.dll].
assert_share "$on" 'Microsoft\.AspNetCore[A-Za-z.]*!' 1 100
assert_share "$on" '\[[A-Za-z0-9_.]+\.dll\]' 0 5

# Off CPU: the blocking route's time is its Task.Wait. (Kernel frames are
# not named without CAP_SYSLOG, which a least-privilege sidecar lacks.)
folded top "$off" 5
task_wait='Routes::Block;System\.Private\.CoreLib!System\.Threading\.Tasks\.Task::(Wait|InternalWait)'
blocking=$(folded count "$off" 'Routes::Block;')
waiting=$(folded count "$off" "$task_wait")
echo "off CPU in the blocking route: ${blocking} us, ${waiting} us of it in Task.Wait"
{ grep -E 'Routes::Block;' "$off" | grep -vE "$task_wait" || true; } | sort -t' ' -k2 -n | tail -3 |
	sed 's/.*\(Routes::\)/off CPU elsewhere in the blocking route: \1/' | cut -c1-900
python3 -c "import sys; sys.exit(0 if $waiting >= 0.9 * $blocking and $blocking >= 1e6 else 1)" ||
	fail "of the $blocking us off CPU in the blocking route, Task.Wait holds $waiting us (expected 90% of at least 1 s)"

# The runtime's events, through EventPipe, in the same run.
[[ -s $workdir/out/off/runtime.nettrace ]] || fail "the sidecar recorded no runtime events (runtime.nettrace)"
grep -E 'exceptions:|lock contention:|GC' "$workdir/stderr" | head -5

# perfcollect's form with -threadtime: Thread Time as PerfView reads it.
run "${sidecar[@]}" profcpu collect waits -pid 1 -collectsec 8 -threadtime >/dev/null
dotnet "$workdir/traceevent-bin/TraceEventCheck.dll" --threadtime "$workdir/out/waits.trace.zip" 'Routes::Block' |
	tee "$workdir/result"
share=$(awk '$1 == "blocked_matching_share" {print $2}' "$workdir/result")
grep -qE '^frame webmix!.*Routes::Block\(\)' "$workdir/result" || fail "TraceEvent does not name webmix!Routes::Block()"
python3 -c "import sys; sys.exit(0 if $share >= 10 else 1)" ||
	fail "TraceEvent puts $share% of the thread time blocked in Routes::Block (expected 10% or more)"
echo "ok: from the sidecar without tracefs, the blocking route's off-CPU time is its Task.Wait, and PerfView's Thread Time shows it blocked $share% of the thread time"
