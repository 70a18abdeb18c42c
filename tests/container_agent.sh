#!/usr/bin/env bash
# profcpu agent in a hostPID container (PERFMON, SYS_PTRACE, seccomp
# unconfined: what a DaemonSet's pod gets), with two podman containers
# standing in for two Kubernetes pods: each has its own hostname (the pod's
# name) and a mounted service-account namespace file, and runs a .NET app
# of its own; the first app runs with DOTNET_EnableDiagnostics=0 (no
# diagnostics IPC, as hardened images run it) and is named from its
# runtime's memory, by the agent's default where the IPC does not answer:
# no [JIT] frame in at least 99% of its samples, its hot method in at least
# 80%, and no perf map or jitdump written in its pod. Three more "pods" are hostile: their /etc/hostname
# holds a label injection, is a FIFO, or is 1 MB.
#
# No Pyroscope server can be installed on this machine: the receiver is the
# tests' stand-in (tests/pyroscope_receiver.py), which keeps each push's
# query and profile as Pyroscope's ingest API receives them.
#
# Each pod's series carries its labels and its own frames, one push per
# period, its process by pid and name inside the profile; the receiver stops and comes back: the periods within
# the buffer arrive, the older ones are dropped with one line.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

"$tests_dir/../container/build-image" localhost/agent-profcpu -- "${podman_options[@]}" >/dev/null

# One image for both apps: the .NET runtime, HotLoop and FramelessCallers.
build_hotloop
build_dotnet_app FramelessCallers "$workdir/bin"
dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")")
runtime=$(ls -d "$dotnet_root"/shared/Microsoft.NETCore.App/* | tail -1)
app_root=$workdir/app-root
mkdir -p "$app_root$dotnet_root/shared/Microsoft.NETCore.App" "$app_root/app"
cp -a "$dotnet_root/dotnet" "$dotnet_root/host" "$app_root$dotnet_root/"
cp -a "$runtime" "$app_root$dotnet_root/shared/Microsoft.NETCore.App/"
install_libraries "$app_root" "$dotnet_root/dotnet" "$runtime"/*.so "$dotnet_root"/host/fxr/*/*.so
cp -a "$workdir/bin/." "$app_root/app/"
install -d -m 1777 "$app_root/tmp"
import_image localhost/agent-dotnet-app "$app_root"
import_jit_target localhost/agent-jit-target

# pod NAME HOSTNAME NAMESPACE IMAGE COMMAND...: a container as a pod's.
pod() {
	local name=$1 hostname=$2 namespace=$3
	shift 3
	mkdir -p "$workdir/secrets-$name"
	echo "$namespace" >"$workdir/secrets-$name/namespace"
	run -d --name "$name" --hostname "$hostname" -e DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 \
		-v "$workdir/secrets-$name:/var/run/secrets/kubernetes.io/serviceaccount:ro" \
		"${extra[@]}" "$@" >/dev/null || skip "podman cannot run containers here"
	extra=()
}
extra=(-e DOTNET_EnableDiagnostics=0)
pod agent-pod-a shop-7c6d9b5f8-x2k4q shop localhost/agent-dotnet-app "$dotnet_root/dotnet" /app/hotloop.dll 600
pod agent-pod-b billing-0 billing localhost/agent-dotnet-app "$dotnet_root/dotnet" /app/framelesscallers.dll 600
# Hostile pods: any container may write its own /etc/hostname.
printf 'a},service_name=x\n' >"$workdir/hostname-inject"
mkfifo "$workdir/hostname-fifo"
head -c 1048576 /dev/zero | tr '\0' a >"$workdir/hostname-huge"
for kind in inject fifo huge; do
	extra=(-v "$workdir/hostname-$kind:/etc/hostname")
	pod "agent-hostile-$kind" ignored hostile localhost/agent-jit-target /bin/workload
done
for name in agent-pod-a agent-pod-b; do
	until podman logs "$name" 2>&1 | grep -q ready; do
		[[ $(podman inspect -f '{{.State.Running}}' "$name") == true ]] ||
			{ podman logs "$name"; fail "$name stopped"; }
		sleep 0.2
	done
done
id_of() { podman inspect -f '{{.Id}}' "$1" | cut -c1-12; }
pid_of() { podman inspect -f '{{.State.Pid}}' "$1"; }

port=$(free_port)
receiver() { # receiver OUT_DIR: starts the stand-in and waits until it listens
	mkdir -p "$1"
	python3 "$tests_dir/pyroscope_receiver.py" "$port" "$1" ok &
	receiver_pid=$!
	background_pids+=("$receiver_pid")
	until [[ -e "$1/ready" ]]; do sleep 0.1; done
}
receiver "$workdir/received-1"

mkdir -p "$workdir/spool"
# Labels, periods and buffering are what this test checks, with the
# cheaper frame-pointer stacks: whole stacks are agent_webmix's.
podman run -d --name agent-agent --pid=host --network=host --cap-add PERFMON --cap-add SYS_PTRACE \
	--security-opt seccomp=unconfined -e NODE_NAME=agent-node -v "$workdir/spool:/spool" \
	localhost/agent-profcpu profcpu agent --push "http://127.0.0.1:$port" --push-interval 2 \
	--buffer-periods 2 --push-timeout 60 --call-graph fp --spool /spool >/dev/null
agent_log() { podman logs agent-agent 2>&1; }
# wait_for_log REGEX: until the agent says it (or stops).
wait_for_log() {
	until agent_log | grep -qE "$1"; do
		[[ $(podman inspect -f '{{.State.Running}}' agent-agent) == true ]] ||
			{ agent_log; fail "the agent stopped before saying /$1/"; }
		sleep 0.5
	done
}
# pushes DIR KEY=VALUE: the query files of DIR whose name has the label.
pushes() { grep -lF -e "$2" "$1"/*.query 2>/dev/null || true; }
a_pid=$(pid_of agent-pod-a)
a_series="container=$(id_of agent-pod-a),"
until (($(pushes "$workdir/received-1" "$a_series" | wc -l) >= 3)); do
	wait_for_log "agent on node"
	sleep 0.5
done

# A job shorter than a period: started as a period begins and gone once it
# ran half a second of CPU (usually before the period ends), so its period
# is sent after it exited; its push still carries its pod's labels, read at
# its first sample. (A second of wall time was once not enough to be
# sampled on a loaded machine.)
mkdir -p "$workdir/secrets-job"
echo batch >"$workdir/secrets-job/namespace"
podman create --network=none --name agent-pod-job --hostname batch-job-x7k2p \
	-v "$workdir/secrets-job:/var/run/secrets/kubernetes.io/serviceaccount:ro" \
	localhost/agent-jit-target /bin/workload >/dev/null
newest_period() { ls -d "$workdir"/spool/period-* 2>/dev/null | tail -1; }
period=$(newest_period)
until [[ $(newest_period) > $period ]]; do sleep 0.05; done
podman start agent-pod-job >/dev/null
job_pid=$(pid_of agent-pod-job)
# cpu_ticks PID: its user and system time so far, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
until (($(cpu_ticks "$job_pid") >= $(getconf CLK_TCK) / 2)); do
	[[ -e /proc/$job_pid ]] || fail "the job exited before it ran half a second"
	sleep 0.05
done
podman rm -f -t 0 agent-pod-job >/dev/null
until (($(pushes "$workdir/received-1" "$a_series" | wc -l) >= 6)); do sleep 0.5; done

# The receiver goes away for more periods than the buffer holds.
kill "$receiver_pid"
wait "$receiver_pid" 2>/dev/null || true
wait_for_log "cannot push to http://127.0.0.1:$port"
wait_for_log "the oldest are dropped"
restarted=$(date +%s)
receiver "$workdir/received-2"
wait_for_log "takes profiles again"
until (($(pushes "$workdir/received-2" "$a_series" | wc -l) >= 4)); do sleep 0.5; done
podman stop -t 60 agent-agent >/dev/null
agent_log >"$workdir/agent.log"
cat "$workdir/agent.log"
# The pod without IPC got no perf map or jitdump: the agent named it from
# its runtime's memory.
written=$(compgen -G "/proc/$(pid_of agent-pod-a)/root/tmp/perf-*.map" ||
	compgen -G "/proc/$(pid_of agent-pod-a)/root/tmp/jit-*.dump" || true)
[[ -z $written ]] || fail "the agent had agent-pod-a write $written"

python3 - "$workdir" "$(id_of agent-pod-a)" "$(id_of agent-pod-b)" "$a_pid" "$(pid_of agent-pod-b)" \
	"$restarted" "$(id_of agent-hostile-inject)" "$(id_of agent-hostile-fifo)" "$(id_of agent-hostile-huge)" \
	"$job_pid" "$tests_dir" <<'PY' ||
import glob, os, re, sys
sys.path.insert(0, sys.argv[11])
from protobuf_wire import pprof_samples
work, a_id, b_id, a_pid, b_pid, restarted = sys.argv[1:7]
hostile_ids = sys.argv[7:10]
job_pid = sys.argv[10]
restarted = int(restarted)

def read(folder):
    found = []
    for path in sorted(glob.glob(os.path.join(work, folder, "*.query"))):
        query = dict(line.rstrip("\n").split("=", 1) for line in open(path))
        name = query["name"]
        if not re.search(r"\.cpu\{", name):
            continue  # a .NET process's runtime events' profile
        service, labels = re.fullmatch(r"(.*)\.cpu\{(.*)\}", name).groups()
        pairs = [pair.split("=", 1) for pair in labels.split(",")]
        keys = [key for key, _ in pairs]
        assert len(keys) == len(set(keys)), f"a label twice: {name}"
        with open(path[:-len(".query")] + ".pb.gz", "rb") as gzipped:
            samples = pprof_samples(gzipped.read())
        # The processes (sample labels) and the frames, as bytes to look in.
        processes = {(labels["pid"], labels["process"]) for labels, _, _ in samples}
        frames = "\n".join(name for _, _, names in samples for name in names).encode()
        found.append((service, dict(pairs), int(query["from"]), frames, processes,
                      int(query["until"])))
    return found

first, second = read("received-1"), read("received-2")
allowed = {"namespace", "pod", "container", "node"}
for service, labels, *_ in first + second:
    assert set(labels) <= allowed, f"unexpected labels {labels}"
    assert labels["node"] == "agent-node", labels

def series(found, container):
    return [entry for entry in found if entry[1].get("container") == container]

# Each pod: its labels, its own frames, one push per period.
for container, pid, service, namespace, pod, mine, other in [
        (a_id, a_pid, "shop/shop", "shop", "shop-7c6d9b5f8-x2k4q", b"HotMethod", b"Spin"),
        (b_id, b_pid, "billing/billing-0", "billing", "billing-0", b"Spin", b"HotMethod")]:
    pushes = series(first, container) + series(second, container)
    assert pushes, f"no push from the pod {pod}"
    for got_service, labels, _, _, processes, _ in pushes:
        assert got_service == service, (got_service, service)
        assert labels == {"namespace": namespace, "pod": pod, "container": container,
                          "node": "agent-node"}, labels
        assert processes == {(pid, "dotnet")}, processes
    named = sum(mine in profile for _, _, _, profile, *_ in pushes)
    assert named * 2 >= len(pushes), f"{pod}: {named} of {len(pushes)} profiles name {mine}"
    assert not any(other in profile for _, _, _, profile, *_ in pushes), f"{pod} has {other}"
    # Each period dated by its samples' own times: one period's span ends
    # before the next one's begins (to the second pushes round them to).
    # (A period the first receiver took as it was killed, without an
    # answer, is rightly pushed again to the second.)
    for found in (first, second):
        spans = sorted((entry[2], entry[5]) for entry in series(found, container))
        for (start, until), (next_start, _) in zip(spans, spans[1:]):
            assert next_start >= until - 1, f"{pod}: periods overlap or repeat: {spans}"
    print(f"{pod}: {len(pushes)} pushes as {service}, {named} naming {mine.decode()}")

# The pod without diagnostics IPC is named from its runtime's memory, in
# the pushes after its first (the agent chose how to name it once it had
# seen it sampled).
def samples_of(folder, container):
    paths = sorted(glob.glob(os.path.join(work, folder, "*.query")),
                   key=lambda path: int(os.path.basename(path).split(".")[0]))
    for path in paths:
        query = open(path).read()
        if f"container={container}," in query and ".cpu{" in query:
            with open(path[:-len(".query")] + ".pb.gz", "rb") as gzipped:
                yield [sample for sample in pprof_samples(gzipped.read()) if sample[2]]

a_pushes = list(samples_of("received-1", a_id))[1:] + list(samples_of("received-2", a_id))
total = sum(values[0] for push in a_pushes for _, values, _ in push)
jit = sum(values[0] for push in a_pushes for _, values, names in push if "[JIT]" in names)
hot = sum(values[0] for push in a_pushes for _, values, names in push
          if any(name.endswith("Demo.Program::HotMethod") for name in names))
print(f"shop (DOTNET_EnableDiagnostics=0): {total} samples, {100 * jit / max(total, 1):.1f}% "
      f"with a [JIT] frame, HotMethod in {100 * hot / max(total, 1):.1f}%")
assert total >= 50, f"shop: {total} samples pushed, the test wants 50"
assert jit * 100 <= total, "shop's JIT frames are not named from its runtime's memory"
assert hot * 100 >= total * 80, "shop's hot method is not named in 80% of its samples"

# The periods begun while the receiver was away: the buffer's (2, and the
# one in flight), not more; the rest were dropped.
late = {start for _, _, start, *_ in series(second, a_id) if start < restarted}
print(f"periods from the outage that arrived: {len(late)}")
assert 1 <= len(late) <= 3, late

# The job's push, sent after it exited, carries its pod's labels.
job = [entry for entry in first if any(pid == job_pid for pid, _ in entry[4])]
seen = sorted(set().union(*(e[4] for e in first)) - {(a_pid, "dotnet"), (b_pid, "dotnet")})
assert job, f"no push of the job {job_pid}: {seen}"
for service, labels, *_ in job:
    assert service == "batch/batch-job" and labels.get("pod") == "batch-job-x7k2p" and \
        labels.get("namespace") == "batch", (service, labels)
print(f"the job: {len(job)} pushes, each with its pod's labels")

# Hostile hostnames add no label and change none; they are left out.
for container in hostile_ids:
    pushes = series(first, container) + series(second, container)
    assert pushes, f"no push from the hostile pod {container}"
    for service, labels, *_ in pushes:
        assert "pod" not in labels and service == "hostile/workload", (service, labels)
print("ok")
PY
	fail "the pushes do not carry what each pod should"
(($(grep -c "the oldest are dropped" "$workdir/agent.log") == 1)) || fail "the drops were not said once"
for file in /etc/hostname; do
	(($(grep -c "$file in its root is" "$workdir/agent.log") >= 3)) ||
		fail "the agent did not say it refused the hostile pods' $file"
done
echo "ok"
