#!/usr/bin/env bash
# The agent's whole manifests (container/profcpu-daemonset*.yaml: Pyroscope,
# Grafana Cloud, a tenant, OTLP) as a user applies them: each keeps the
# spool (--spool and its hostPath volume, so periods survive a restart),
# mounts each secret file it names, has the memory limit the measured use
# asks for, and plays under `podman kube play`, where the agent starts and
# keeps its periods in the spool on the host while its receiver is down.
# podman 4.3 plays no DaemonSet: its pod template is played as a Pod, with
# a local image, the host's network (the receiver URLs point to a closed
# port on loopback), the seccomp annotation podman honours, and folders of
# the test for the hostPath and Secret volumes.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"
python3 -c 'import yaml' 2>/dev/null || skip "python3-yaml is not installed"
manifests=("$tests_dir"/../container/profcpu-daemonset*.yaml)
((${#manifests[@]} >= 4)) || fail "fewer than four DaemonSet manifests: ${manifests[*]}"

# What each manifest must hold, read as Kubernetes reads it.
python3 - "${manifests[@]}" <<'PY' || fail "a manifest lacks what the agent needs"
import sys, yaml
MEASURED_PEAK_MIB = 207  # the worker on a node whose processes come and go (docs/AGENT.md)
def mebibytes(quantity):
    units = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024}
    return float(quantity[:-2]) * units[quantity[-2:]]
for path in sys.argv[1:]:
    daemonset = next(d for d in yaml.safe_load_all(open(path)) if d and d["kind"] == "DaemonSet")
    spec = daemonset["spec"]["template"]["spec"]
    container = spec["containers"][0]
    command = container["command"]
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: volumes[m["name"]] for m in container["volumeMounts"]}
    assert "--spool" in command, f"{path}: no --spool"
    spool = command[command.index("--spool") + 1]
    assert "hostPath" in mounts.get(spool, {}), f"{path}: --spool {spool} is not a hostPath volume"
    for option in ("--basic-auth-password-file", "--bearer-token-file",
                   "--otlp-basic-auth-password-file", "--otlp-bearer-token-file"):
        if option in command:
            file = command[command.index(option) + 1]
            folder = file.rsplit("/", 1)[0]
            assert "secret" in mounts.get(folder, {}), f"{path}: {option} {file} is in no Secret"
    limit = mebibytes(container["resources"]["limits"]["memory"])
    assert limit >= 2 * MEASURED_PEAK_MIB, f"{path}: a memory limit of {limit} MiB"
    print(f"{path}: --spool {spool} on a hostPath, memory limit {limit:.0f} MiB")
PY

"$tests_dir/../container/build-image" localhost/manifest-profcpu -- "${podman_options[@]}" >/dev/null
remove_pods() {
	podman pod rm -f -t 0 -a >/dev/null 2>&1 || true
	remove_containers
	cleanup
}
trap remove_pods EXIT
closed_port=$(free_port)

for manifest in "${manifests[@]}"; do
	name=$(basename "$manifest" .yaml)
	host=$workdir/$name
	mkdir -p "$host"
	python3 - "$manifest" "$name" "$host" "$closed_port" >"$host/pod.yaml" <<'PY'
import re, sys, yaml
source, name, host, port = sys.argv[1:5]
daemonset = next(d for d in yaml.safe_load_all(open(source)) if d and d["kind"] == "DaemonSet")
template = daemonset["spec"]["template"]
pod = {"apiVersion": "v1", "kind": "Pod",
       "metadata": {"name": name, "annotations": {
           "seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
       "spec": template["spec"]}
spec = pod["spec"]
spec["hostNetwork"] = True
# A node's own set-up (a sysctl) is not this machine's to change.
spec.pop("initContainers", None)
container = spec["containers"][0]
container["image"] = "localhost/manifest-profcpu"
container["command"] = [re.sub(r"^https?://.*", f"http://127.0.0.1:{port}", word)
                        for word in container["command"]] + ["--push-interval", "1"]
# The node name from the downward API: podman has none.
container["env"] = [{"name": "NODE_NAME", "value": "manifest-node"}]
for volume in spec["volumes"]:
    folder = f"{host}/{volume['name']}"
    if "secret" in volume:  # a Secret's key as kubectl create secret --from-file makes it
        import os
        os.makedirs(folder, exist_ok=True)
        open(f"{folder}/token", "w").write("not-a-real-token\n")
    volume.pop("secret", None)
    volume["hostPath"] = {"path": folder, "type": "DirectoryOrCreate"}
print(yaml.safe_dump(pod))
PY
	podman kube play "$host/pod.yaml" >"$host/play.out" 2>&1 ||
		{ cat "$host/play.out"; skip "podman kube play cannot run the pod here"; }
	# The agent starts, and its periods wait in the spool on the host.
	until compgen -G "$host/spool/period-*" >/dev/null && [[ -s $host/spool/agent.log ]]; do
		[[ $(podman inspect -f '{{.State.Running}}' "$name-profcpu") == true ]] ||
			{ podman logs "$name-profcpu"; fail "$name: the agent stopped"; }
		sleep 0.2
	done
	podman logs "$name-profcpu" >"$host/agent.err" 2>&1
	head -3 "$host/agent.err"
	grep -q "^profcpu: agent on node manifest-node" "$host/agent.err" || fail "$name: the agent did not start"
	echo "$name: plays; periods kept in its spool: $(compgen -G "$host/spool/period-*" | wc -l)"
	podman pod rm -f -t 0 "$name" >/dev/null
done
echo "ok: ${#manifests[@]} manifests keep their spool and play"
