#!/bin/sh
# The sampling half of the kernel matrix (scripts/test-kernels), in POSIX sh
# for busybox, run as the init of a Debian kernel's machine: profcpu samples
# a native program (hybrid, -a, --cgroup), a service's sleeps (--off-cpu),
# a .NET app, runs the agent, and samples as a user other than root with the
# manifests' capabilities (CAP_PERFMON, CAP_SYS_PTRACE) at the kernel's own
# kernel.perf_event_paranoid, then at what container/profcpu-node-paranoid.yaml
# sets (2). tests/kernel_check.sh reads RESULTS.
# usage: kernel_run.sh RESULTS
results=$1
profcpu=/usr/bin/profcpu
mkdir -p "$results"
uname -r >"$results/uname"
cat /proc/sys/kernel/perf_event_paranoid >"$results/paranoid"
cat /proc/sys/kernel/perf_event_mlock_kb >"$results/mlock_kb"

# Each capture in a folder of its own, its exit status and stderr beside it.
capture() {
	name=$1
	shift
	"$@" -o "$results/$name" >"$results/$name.log" 2>&1
	echo "$name: $?" | tee -a "$results/status"
}

# until killed at the end
/bin/frameless &
frameless=$!
/bin/switches 0 2 2000 &
switches=$!
sleep 1
capture native "$profcpu" collect -pid $frameless -duration 4
capture offcpu "$profcpu" collect -pid $switches -duration 4 --off-cpu
capture every "$profcpu" collect -a -duration 3

# A cgroup of its own for a second native program, in the v2 tree as a
# fresh machine mounts it: no controller enabled anywhere, so no perf_event
# either (implicit on v2) until one is enabled at the root.
mkdir -p /sys/fs/cgroup
mount -t cgroup2 none /sys/fs/cgroup
mkdir /sys/fs/cgroup/matrix
/bin/frameless 60 &
grouped=$!
echo $grouped >/sys/fs/cgroup/matrix/cgroup.procs
capture cgroup-bare "$profcpu" collect --cgroup /sys/fs/cgroup/matrix -duration 3
echo +pids >/sys/fs/cgroup/cgroup.subtree_control
capture cgroup "$profcpu" collect --cgroup /sys/fs/cgroup/matrix -duration 3
kill $grouped

# The agent, its receiver down: each period waits in the spool.
mkdir -p /tmp/spool
chmod 700 /tmp/spool
"$profcpu" agent --push http://127.0.0.1:9 --push-interval 2 --spool /tmp/spool --no-events \
	>"$results/agent.log" 2>&1 &
agent=$!
sleep 7
kill -TERM $agent
wait $agent
echo "agent: $?" | tee -a "$results/status"
ls -lR /tmp/spool >"$results/agent.spool"

# The .NET app, named through its diagnostics socket.
if [ -x /app/hotloop ]; then
	/app/hotloop 600 >"$results/hotloop.out" 2>&1 &
	hotloop=$!
	sleep 8
	capture dotnet "$profcpu" collect -pid $hotloop -duration 5
	kill $hotloop
fi

# Least privilege: uid 1000 with the manifests' capabilities and none else
# (so no CAP_IPC_LOCK: its locked-memory limit sizes its ring buffers).
as_sidecar() {
	setpriv --reuid 1000 --regid 1000 --clear-groups --inh-caps -all,+perfmon,+sys_ptrace \
		--ambient-caps +perfmon,+sys_ptrace --bounding-set -all,+perfmon,+sys_ptrace "$@"
}
mkdir -p "$results/sidecar" && chown 1000 "$results/sidecar"
cd "$results/sidecar" || exit 1
as_sidecar grep ^Cap /proc/self/status >"$results/sidecar.caps"
capture sidecar/default as_sidecar "$profcpu" collect -pid $frameless -duration 3
# The init step of container/profcpu-node-paranoid.yaml, for such kernels.
sh /e2e/node-paranoid.sh >"$results/node-paranoid.log" 2>&1
echo "node-paranoid: $?" | tee -a "$results/status"
capture sidecar/paranoid2 as_sidecar "$profcpu" collect -pid $frameless -duration 4
capture sidecar/every2 as_sidecar "$profcpu" collect -a -duration 3
capture sidecar/offcpu2 as_sidecar "$profcpu" collect -pid $switches -duration 4 --off-cpu
kill $frameless $switches
