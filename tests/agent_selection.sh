#!/usr/bin/env bash
# profcpu agent --namespace, --pod, --container and --exclude-*: only the
# processes the selection takes are pushed (the others are neither walked
# nor named); a name or a glob, decided from a process's pod labels; a
# container by its name or kubectl's id, and a --container that matches
# nothing said so. Two "pods" stand in for Kubernetes' (a mount namespace
# each, with the pod's hostname and service-account namespace file, as the
# kubelet mounts them) beside a process of the host. No container runtime
# keeps their state: their labels come from those files, which a container
# can write, so --namespace and --pod take them only with
# --trust-container-labels (tests/container_pod_labels.sh has the
# runtime's state).
#
# The agent runs in a PID namespace of its own, with its workloads. No
# Pyroscope server can be installed on this machine: the receiver is the
# tests' stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_SELECTION_INSIDE:-} != 1 ]]; then
	AGENT_SELECTION_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

# pod NAMESPACE POD: a process busy for 60 s in a pod's files.
pod() {
	echo "$2" >"$workdir/hostname-$2"
	start unshare --mount bash -c 'mount --bind "$2" /etc/hostname && mount -t tmpfs pod /run &&
		mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
		echo "$1" >/run/secrets/kubernetes.io/serviceaccount/namespace || exit 1
		end=$((SECONDS + 60)); while ((SECONDS < end)); do :; done' \
		pod "$1" "$workdir/hostname-$2"
}
pod shop shop-7c6d9b5f8-x2k4q
pod debug debug-5f6d7c8b9-x7k2p
start "$WORKLOAD_SPLIT" 60

# pushed NAME OPTION...: an agent with the options for two periods of 2 s;
# the series it pushed, a line each ("SERVICE.cpu{LABELS}"), in
# $workdir/NAME.series.
pushed() {
	local name=$1 port
	shift
	port=$(free_port)
	mkdir -p "$workdir/received-$name"
	start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received-$name" ok
	until [[ -e $workdir/received-$name/ready ]]; do sleep 0.1; done
	start "$PROFCPU" agent --push "http://127.0.0.1:$port" --push-interval 2 \
		--spool "$workdir/spool-$name" "$@" 2>"$workdir/$name.err"
	local agent_pid=$started_pid
	until (($(cat "$workdir/spool-$name/agent.log" 2>/dev/null | grep -c "named and encoded" || true) >= 2)); do
		kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/$name.err"; fail "$name: the agent stopped"; }
		sleep 0.2
	done
	kill -INT "$agent_pid"
	wait "$agent_pid" || fail "$name: the agent exited with status $?"
	# (none when the selection took nothing)
	{ cat "$workdir"/received-"$name"/*.query 2>/dev/null || true; } |
		sed -n 's/^name=//p' | sort -u >"$workdir/$name.series"
	echo "$name ($*):"
	sed 's/^/    /' "$workdir/$name.series"
}

echo "--- --namespace 'sh*' on labels from the pod's own files: refused"
pushed refused --namespace 'sh*'
! grep -q '^shop/' "$workdir/refused.series" || fail "labels from the pod's own files selected it"
(($(grep -c 'without --trust-container-labels' "$workdir/refused.err") == 1)) ||
	{ cat "$workdir/refused.err"; fail "the refusal was not said once"; }

echo "--- --namespace 'sh*' --trust-container-labels: the shop pod alone"
pushed only-shop --namespace 'sh*' --trust-container-labels
grep -q '^shop/shop.cpu{namespace=shop,pod=shop-7c6d9b5f8-x2k4q,' "$workdir/only-shop.series" ||
	fail "the shop pod was not pushed"
! grep -v '^shop/shop.cpu{' "$workdir/only-shop.series" || fail "a process outside the namespace was pushed"
# The others were not replayed at all: each period's profile holds the
# pod's one process.
grep "named and encoded" "$workdir/spool-only-shop/agent.log"
! grep "named and encoded" "$workdir/spool-only-shop/agent.log" | grep -vq " of [01] processes in" ||
	fail "processes outside the selection were walked and named"

echo "--- --pod: by the pod's name"
pushed only-debug --pod 'debug-5f6d7c8b9-x7k2p' --trust-container-labels
grep -q '^debug/debug.cpu{' "$workdir/only-debug.series" || fail "the debug pod was not pushed"
! grep -v '^debug/debug.cpu{' "$workdir/only-debug.series" || fail "a process of another pod was pushed"

echo "--- --exclude-namespace debug: everything else"
pushed not-debug --exclude-namespace debug
grep -q '^shop/shop.cpu{' "$workdir/not-debug.series" || fail "the shop pod was not pushed"
grep -q '^workload_split.cpu{' "$workdir/not-debug.series" || fail "the host's process was not pushed"
! grep -q 'namespace=debug' "$workdir/not-debug.series" || fail "the excluded namespace was pushed"
echo "--- --container by name and by kubectl's id"
# A container as its runtime leaves it: a process in the cgroup
# cri-containerd-ID.scope, and its name in containers/storage's
# containers.json (podman's and CRI-O's state), under the graphroot that
# $CONTAINERS_STORAGE_CONF names.
make_test_cgroup
id=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
container_cgroup=$(dirname "$test_cgroup")/cri-containerd-$id.scope
mkdir "$container_cgroup" || skip "cannot make a container's cgroup"
test_cgroups+=("$container_cgroup")
start bash -c "echo \$\$ >'$container_cgroup/cgroup.procs' && exec '$WORKLOAD_SPLIT' 60"
mkdir -p "$workdir/storage/overlay-containers"
printf '[{"id":"%s","names":["k8s_istio-proxy_shop-7c6d9b5f8-x2k4q_shop_0c7e_0"],"image":"x"}]' "$id" \
	>"$workdir/storage/overlay-containers/containers.json"
printf '[storage]\ngraphroot = "%s"\n' "$workdir/storage" >"$workdir/storage.conf"
export CONTAINERS_STORAGE_CONF=$workdir/storage.conf
for selection in istio-proxy 'istio-*' "containerd://$id"; do
	name=by-${selection//[^a-z0-9-]/_}
	pushed "$name" --container "$selection"
	grep -q "container=${id:0:12}" "$workdir/$name.series" ||
		fail "--container $selection did not take the container"
	# [unknown]: a process of the container that exited before its period
	# was named has lost its labels with its name.
	! grep -v -e "container=${id:0:12}" -e '^\[unknown\]\.cpu{' "$workdir/$name.series" ||
		fail "--container $selection took processes outside the container"
done
pushed not-istio --exclude-container istio-proxy
[[ -s $workdir/not-istio.series ]] || fail "--exclude-container istio-proxy pushed nothing"
! grep -q "container=${id:0:12}" "$workdir/not-istio.series" || fail "the excluded container was pushed"

echo "--- --container that no container matches: said in one line"
pushed no-container --container checkout
cat "$workdir/no-container.err"
grep -q '^profcpu: warning: --container checkout: no running container has that id or name' \
	"$workdir/no-container.err" || fail "a --container matching nothing was not said"
[[ ! -s $workdir/no-container.series ]] || fail "--container checkout pushed processes"
echo "ok: the selection takes what it names and leaves out the rest"
