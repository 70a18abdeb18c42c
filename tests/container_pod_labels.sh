#!/usr/bin/env bash
# profcpu agent's pod labels come from the container runtime's state, not
# from files the container can write: two pods under `podman kube play`,
#   - "planted": its image ships a service-account namespace file that
#     says "victim" (a pod posing as another tenant);
#   - "tokenless": automountServiceAccountToken: false, no namespace file;
# and the agent with --namespace tenant-a --namespace tenant-b --namespace
# victim: each pod is labelled and selected by the namespace its runtime
# state names, the planted one never as "victim". The runtime's state
# becomes readable only once both pods have run a period, judged on what
# the last resort found (the planted file, refused by the selection; no
# namespace): their verdicts follow the state when it comes.
#
# Stand-in: podman 4.3's kube play keeps no namespace or pod name of its
# own in a container's OCI config (only io.kubernetes.cri-o.SandboxID and
# io.podman.annotations.*), but it copies the manifest's pod annotations
# into it. The manifests carry the annotations containerd writes in a
# Kubernetes node (io.kubernetes.cri.sandbox-namespace, -name, -uid,
# container-name), so podman's userdata/config.json stands in for
# containerd's bundle; the agent is pointed at the test's podman storage
# with --container-state (a link to it, made late).
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

# image NAME [NAMESPACE_FILE_TEXT]: the split workload as /bin/workload,
# with a service-account namespace file when given.
image() {
	local root=$workdir/root-$1
	install -D "$WORKLOAD_SPLIT" "$root/bin/workload"
	install_libraries "$root" "$WORKLOAD_SPLIT"
	if [[ -n ${2:-} ]]; then
		install -D -m 644 /dev/null "$root/var/run/secrets/kubernetes.io/serviceaccount/namespace"
		echo "$2" >"$root/var/run/secrets/kubernetes.io/serviceaccount/namespace"
	fi
	import_image "localhost/labels-$1" "$root"
}
image planted victim
image tokenless

# play NAME NAMESPACE IMAGE: the pod NAME of namespace NAMESPACE, with the
# annotations containerd would write (see above), its container "app".
play() {
	cat >"$workdir/$1.yaml" <<YAML
apiVersion: v1
kind: Pod
metadata:
  name: $1
  namespace: $2
  annotations:
    io.kubernetes.cri.sandbox-namespace: $2
    io.kubernetes.cri.sandbox-name: $1
    io.kubernetes.cri.sandbox-uid: 3f1c2b7a-9d4e-4c1a-8f2b-$(printf '%012x' $$)
    io.kubernetes.cri.container-name: app
spec:
  automountServiceAccountToken: false
  containers:
  - name: app
    image: localhost/labels-$3
    command: ["/bin/workload", "120"]
YAML
	podman kube play "$workdir/$1.yaml" >"$workdir/$1.play" 2>&1 ||
		{ cat "$workdir/$1.play"; skip "podman kube play cannot run the pod here"; }
}
remove_pods() {
	podman pod rm -f -t 0 -a >/dev/null 2>&1 || true
	remove_containers
	cleanup
}
trap remove_pods EXIT
# The agent, with periods of 2 s to the tests' stand-in for Pyroscope,
# started before the pods as on a node: their processes are first seen
# young, and judged again once their labels settle.
port=$(free_port)
mkdir -p "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
until [[ -e $workdir/received/ready ]]; do sleep 0.1; done
start "$PROFCPU" agent --push "http://127.0.0.1:$port" --push-interval 2 --spool "$workdir/spool" \
	--container-state "$workdir/state" \
	--namespace tenant-a --namespace tenant-b --namespace victim 2>"$workdir/agent.err"
agent_pid=$started_pid
# periods: how many the agent has sent.
periods() { cat "$workdir/spool/agent.log" 2>/dev/null | grep -c "named and encoded" || true; }
until [[ -e $workdir/spool/agent.log ]]; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
	sleep 0.2
done

play planted-pod tenant-a planted
play tokenless-pod tenant-b tokenless
planted_id=$(podman inspect -f '{{.Id}}' planted-pod-app)
tokenless_id=$(podman inspect -f '{{.Id}}' tokenless-pod-app)
planted_pid=$(podman inspect -f '{{.State.Pid}}' planted-pod-app)
[[ $(cat "/proc/$planted_pid/root/var/run/secrets/kubernetes.io/serviceaccount/namespace") == victim ]] ||
	fail "the planted pod has no planted namespace file"

# A whole period with both pods running and their runtime's state out of
# sight: neither is taken.
running=$(periods)
until (($(periods) >= running + 2)); do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
	sleep 0.2
done
! compgen -G "$workdir/received/*.query" >/dev/null ||
	{ cat "$workdir"/received/*.query; fail "a pod was taken before its runtime's state was read"; }
grep -q 'without --trust-container-labels' "$workdir/agent.err" ||
	fail "the agent did not say it refused the planted pod's own labels"
# The state in sight: two whole periods more.
ln -s "$workdir/storage/vfs-containers" "$workdir/state"
running=$(periods)
until (($(periods) >= running + 3)); do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
	sleep 0.2
done
kill -INT "$agent_pid"
wait "$agent_pid" || fail "the agent exited with status $?"
{ cat "$workdir"/received/*.query 2>/dev/null || true; } |
	sed -n 's/^name=//p' | sort -u >"$workdir/series"
echo "pushed:"
sed 's/^/    /' "$workdir/series"

! grep -q 'namespace=victim' "$workdir/series" ||
	fail "the planted namespace file labelled the pod"
grep -q "^tenant-a/planted-pod.cpu{namespace=tenant-a,pod=planted-pod,container=${planted_id:0:12}," "$workdir/series" ||
	fail "the planted pod was not pushed with its runtime's namespace tenant-a"
grep -q "^tenant-b/tokenless-pod.cpu{namespace=tenant-b,pod=tokenless-pod,container=${tokenless_id:0:12}," "$workdir/series" ||
	fail "the pod without a service-account token was not selected by its runtime's namespace tenant-b"
! grep -v '^tenant-[ab]/' "$workdir/series" || fail "a process outside the pods was pushed"
echo "ok: both pods labelled and selected by their runtime's state, the planted file ignored"
