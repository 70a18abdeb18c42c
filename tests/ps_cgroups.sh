#!/usr/bin/env bash
# profcpu ps names the container and the Kubernetes pod of a process from its
# cgroup. Real cgroups, made here with the paths the kubelet makes: with the
# cgroupfs driver (kubepods/burstable/pod<uid>/<container id>) and with the
# systemd driver (kubepods-burstable-pod<uid with _>.slice/
# cri-containerd-<container id>.scope); a process is moved into each.
source "$(dirname "$0")/lib.sh"
(($(id -u) == 0)) || skip "making cgroups needs root"
hierarchy=/sys/fs/cgroup/pids
[[ -w $hierarchy/cgroup.procs ]] || hierarchy=/sys/fs/cgroup
[[ -w $hierarchy/cgroup.procs ]] || skip "no writable cgroup hierarchy here"

random_hex() { python3 -c "import secrets; print(secrets.token_hex($1))"; }
pod_uid() { python3 -c 'import uuid; print(uuid.uuid4())'; }

uid_a=$(pod_uid) container_a=$(random_hex 32)
uid_b=$(pod_uid) container_b=$(random_hex 32)
top_a=$hierarchy/profcpu-test-$$-kubepods
cgroup_a=$top_a/burstable/pod$uid_a/$container_a
top_b=$hierarchy/profcpu-test-$$-kubepods.slice
cgroup_b=$top_b/kubepods-burstable.slice/kubepods-burstable-pod${uid_b//-/_}.slice/cri-containerd-$container_b.scope
mkdir -p "$cgroup_a" "$cgroup_b"
start sleep 60
sleeper_a=$started_pid
start sleep 60
sleeper_b=$started_pid
echo "$sleeper_a" >"$cgroup_a/cgroup.procs"
echo "$sleeper_b" >"$cgroup_b/cgroup.procs"
remove_cgroups() {
	echo "$sleeper_a" >"$hierarchy/cgroup.procs" 2>/dev/null || true
	echo "$sleeper_b" >"$hierarchy/cgroup.procs" 2>/dev/null || true
	find "$top_a" "$top_b" -depth -type d -exec rmdir {} + 2>/dev/null || true
	cleanup
}
trap remove_cgroups EXIT

"$PROFCPU" ps >"$workdir/ps.txt"
grep -E "^ *($sleeper_a|$sleeper_b) " "$workdir/ps.txt"
grep -qE "^ *$sleeper_a +[0-9]+  sleep .* ${container_a:0:12}  $uid_a " "$workdir/ps.txt" ||
	fail "the cgroupfs-driver pod and container are not shown"
grep -qE "^ *$sleeper_b +[0-9]+  sleep .* ${container_b:0:12}  $uid_b " "$workdir/ps.txt" ||
	fail "the systemd-driver pod and container are not shown"
