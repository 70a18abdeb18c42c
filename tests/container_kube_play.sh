#!/usr/bin/env bash
# The shipped manifests under `podman kube play`, with local images:
#   - container/profcpu-sidecar.yaml, the ASP.NET Core app of
#     tests/dotnet/WebMix (under its own load) as the pod's app: `profcpu ps`
#     names the app's container and the pod, the HTTP API on the pod's
#     loopback lists it and captures it, and `--off-cpu` runs through
#     `podman exec` (what `kubectl exec` does);
#   - the pod template of container/profcpu-daemonset.yaml (hostPID, its
#     capabilities; its command left out, sleep instead): `profcpu ps` sees the
#     host's processes, and `--off-cpu` of one runs through `podman exec`.
# Where podman differs from Kubernetes, the test changes the manifest: the
# images are local ones; podman ignores `seccompProfile: Unconfined` (the
# kernel then refuses perf_event_open) and honours the annotation
# seccomp.security.alpha.kubernetes.io/pod: unconfined instead, which the
# test adds; the app's command is given (the image has none). The pod's pid
# 1 is podman's catatonit where Kubernetes has its pause process. podman
# 4.3 plays no DaemonSet and ignores hostPID: the daemonset's template runs
# as `podman run --pid=host` with its capabilities, seccomp profile and
# volume (a folder of the test for its hostPath).
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"

build_dotnet_app WebMix
import_dotnet_app localhost/offcpu-webmix "$workdir/WebMix"
"$tests_dir/../container/build-image" localhost/offcpu-profcpu -- "${podman_options[@]}" >/dev/null
remove_pods() {
	podman pod rm -f -t 0 -a >/dev/null 2>&1 || true
	remove_containers
	cleanup
}
trap remove_pods EXIT

# local_manifest SOURCE NAME: SOURCE's Pod named NAME with local images, for
# podman, on stdout.
local_manifest() {
	python3 - "$@" "$dotnet_root" <<'PY'
import sys, yaml
source, name, dotnet_root = sys.argv[1:4]
pod = next(d for d in yaml.safe_load_all(open(source)) if d and d["kind"] == "Pod")
pod["metadata"]["name"] = name
pod["metadata"].setdefault("annotations", {})["seccomp.security.alpha.kubernetes.io/pod"] = "unconfined"
for container in pod["spec"]["containers"]:
    if container["image"].startswith("myregistry/profcpu"):
        container["image"] = "localhost/offcpu-profcpu"
    else:
        container["image"] = "localhost/offcpu-webmix"
        container["command"] = [dotnet_root + "/dotnet", "/app/webmix.dll",
                                "http://127.0.0.1:5080", "300", "cpu,block"]
        container["env"] = [{"name": "DOTNET_SYSTEM_GLOBALIZATION_INVARIANT", "value": "1"}]
print(yaml.safe_dump(pod))
PY
}

# The sidecar pod.
pod=offcpu-sidecar-$$
local_manifest "$tests_dir/../container/profcpu-sidecar.yaml" "$pod" >"$workdir/sidecar.yaml"
podman kube play "$workdir/sidecar.yaml" >"$workdir/play.out" 2>&1 ||
	{ cat "$workdir/play.out"; skip "podman kube play cannot run the pod here"; }
profcpu=$pod-profcpu
app_container=$pod-app
until podman logs "$app_container" 2>&1 | grep -q ready; do
	[[ $(podman inspect -f '{{.State.Running}}' "$app_container") == true ]] ||
		{ podman logs "$app_container"; fail "the app container of the pod stopped"; }
	sleep 0.2
done
app_id=$(podman inspect -f '{{.Id}}' "$app_container")
pod_id=$(podman pod inspect -f '{{.Id}}' "$pod")

# profcpu ps: pid 1 is catatonit; the app, .NET, in its container and pod.
podman exec "$profcpu" profcpu ps | tee "$workdir/ps.txt"
app_pid=$(awk '$3 == "dotnet" && $4 == ".NET" {print $1}' "$workdir/ps.txt")
[[ -n $app_pid ]] || fail "profcpu ps in the pod does not list the .NET app"
grep -qE "^ +$app_pid +[0-9]+  dotnet +\.NET 1[0-9.]+ .* ${app_id:0:12}  ${pod_id:0:12} " "$workdir/ps.txt" ||
	fail "profcpu ps names the app's container ${app_id:0:12} and pod ${pod_id:0:12} otherwise"

# The HTTP API on the pod's loopback, from inside the pod (kubectl
# port-forward reaches the same): the app listed, a capture of it.
api() { podman exec "$profcpu" busybox wget -q -O "$@"; }
until api /profilings/processes.json http://127.0.0.1:7071/processes 2>/dev/null; do
	[[ $(podman inspect -f '{{.State.Running}}' "$profcpu") == true ]] ||
		{ podman logs "$profcpu"; fail "profcpu serve stopped"; }
	sleep 0.2
done
podman exec "$profcpu" cat /profilings/processes.json >"$workdir/processes.json"
python3 - "$workdir/processes.json" "$app_pid" "${app_id:0:12}" "${pod_id:0:12}" <<'PY' ||
import json, sys
processes = json.load(open(sys.argv[1]))["processes"]
app = [p for p in processes if p["pid"] == int(sys.argv[2])]
print(app)
assert app and app[0]["runtime"] == ".NET", processes
assert app[0]["container"] == sys.argv[3] and app[0]["pod"] == sys.argv[4], app
PY
	fail "GET /processes does not list the app with its container and pod"
sleep 8 # past start-up, into the steady load
api /profilings/flame.svg --post-data '' "http://127.0.0.1:7071/captures?pid=$app_pid&seconds=4" ||
	fail "the capture through the API failed"
podman exec "$profcpu" cat /profilings/flame.svg >"$workdir/flame.svg"
grep -q 'Routes::Cpu' "$workdir/flame.svg" || fail "the API's flame graph does not name Routes::Cpu"

# --off-cpu through podman exec.
podman exec "$profcpu" profcpu collect -pid "$app_pid" -duration 6 --off-cpu -o /profilings/off 2>&1 | tail -3
podman exec "$profcpu" cat /profilings/off/offcpu_folded_stacks.out >"$workdir/off.folded"
blocking=$(folded count "$workdir/off.folded" 'Routes::Block;.*Task::(Wait|InternalWait)')
echo "off CPU in Routes::Block's Task.Wait: $blocking us"
python3 -c "import sys; sys.exit(0 if $blocking >= 5e5 else 1)" ||
	fail "--off-cpu through podman exec put $blocking us off CPU in the blocking route's Task.Wait"
podman pod rm -f -t 0 "$pod" >/dev/null

# The daemonset's pod template: hostPID, and what it needs to sample any
# process of the node. podman 4.3's kube play ignores hostPID (the pod gets
# a PID namespace of its own), so the template's container runs with
# `podman run --pid=host` and the template's capabilities, seccomp profile
# and volume.
mkdir -p "$workdir/node-profilings"
node=offcpu-node-$$
mapfile -t node_options < <(python3 - "$tests_dir/../container/profcpu-daemonset.yaml" "$workdir/node-profilings" <<'PY'
import sys, yaml
daemonset = next(d for d in yaml.safe_load_all(open(sys.argv[1])) if d and d["kind"] == "DaemonSet")
spec = daemonset["spec"]["template"]["spec"]
assert spec.get("hostPID") is True, "the daemonset's pods do not share the host's PID namespace"
container = spec["containers"][0]
security = container["securityContext"]
assert security["seccompProfile"]["type"] == "Unconfined"
print("--pid=host\n--security-opt\nseccomp=unconfined")
for capability in security["capabilities"]["add"]:
    print(f"--cap-add\n{capability}")
volumes = {v["name"]: v for v in spec["volumes"]}
for mount in container["volumeMounts"]:
    assert "hostPath" in volumes[mount["name"]]
    print(f"-v\n{sys.argv[2]}/{mount['name']}:{mount['mountPath']}")
PY
)
# The template's volumes hold what its own command writes; the captures
# below go to a folder of the test's.
for option in "${node_options[@]}"; do
	if [[ $option == "$workdir"/* ]]; then mkdir -p "${option%%:*}"; fi
done
node_options+=(-v "$workdir/node-profilings:/profilings")
echo "the daemonset's container: podman run ${node_options[*]}"
run -d --name "$node-profcpu" "${node_options[@]}" localhost/offcpu-profcpu sleep 600 >/dev/null
start python3 -c 'import time
while True: time.sleep(0.02)'
sleeper=$started_pid
podman exec "$node-profcpu" profcpu ps >"$workdir/node-ps.txt"
grep -qE "^ +$sleeper +$sleeper  python3 " "$workdir/node-ps.txt" ||
	fail "profcpu ps in the daemonset's pod does not see the host's process $sleeper"
podman exec "$node-profcpu" profcpu collect -pid "$sleeper" -duration 2 --off-cpu -o /profilings/host 2>&1 | tail -2
grep -q 'clock_nanosleep' "$workdir/node-profilings/host/offcpu_folded_stacks.out" ||
	fail "--off-cpu of a host process from the daemonset's pod has no stack in clock_nanosleep"
echo "ok: the sidecar manifest under podman kube play, the daemonset's pod template under podman run --pid=host"
