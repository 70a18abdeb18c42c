#!/usr/bin/env bash
# The checking half of the kernel matrix (see kernel_run.sh): what each
# capture in one Debian kernel's machine wrote. Exits 1 at the first check
# that fails.
# usage: kernel_check.sh RESULTS VERSION
set -euo pipefail
results=$1 version=$2
fail() {
	echo "FAIL ($version): $*" >&2
	exit 1
}
# status NAME EXPECTED: the capture's exit status, from kernel_run.sh's list.
status() {
	local got
	got=$(awk -v name="$1:" '$1 == name { print $2 }' "$results/status")
	[[ $got == "$2" ]] || { tail -3 "$results/$1.log" 2>/dev/null; fail "$1 exited ${got:-never}, not $2"; }
}
# samples FOLDED PATTERN: the samples of the stacks matching PATTERN.
samples() { awk -v pattern="$2" '$0 ~ pattern { n += $NF } END { print n + 0 }' "$1"; }

[[ $(cat "$results/uname") == "$version".* ]] || fail "the machine ran $(cat "$results/uname")"
paranoid=$(cat "$results/paranoid")
echo "$version: $(cat "$results/uname"), kernel.perf_event_paranoid $paranoid, perf_event_mlock_kb $(cat "$results/mlock_kb")"

# Hybrid stacks of the frameless program (most of its time in memset
# under emulation): whole, through its frameless callers.
worker=';worker;(caller_[ab];leaf_work|fill_[ab];)'
status native 0
native=$(samples "$results/native/folded_stacks.out" "$worker")
all=$(samples "$results/native/folded_stacks.out" '.')
echo "native: $native of $all samples in worker;caller_a/b;leaf_work or worker;fill_a/b"
((native * 2 > all)) || fail "the native program's stacks lack its callers"

# Off-CPU: the sleeps, every stack ending at the scheduler's entry once.
status offcpu 0
off=$results/offcpu/offcpu_folded_stacks.out
slept=$(samples "$off" ';serve;.*;do_nanosleep;schedule [0-9]+$')
echo "off-CPU: $slept us of $(samples "$off" '.') in serve's nanosleep ending ;do_nanosleep;schedule"
((slept > 0)) || { head -3 "$off"; fail "no off-CPU stack ends ;do_nanosleep;schedule"; }
! grep -E '__schedule|;([^;]+);\1 [0-9]+$' "$off" | head -3 | grep . ||
	fail "off-CPU stacks end with __schedule or a repeated frame"

status every 0
(($(samples "$results/every/folded_stacks.out" "$worker") > 0)) || fail "-a missed the native program"

# --cgroup: first in a tree without controllers, then with one at the root.
status cgroup-bare 1
grep -qF "the perf_event controller is missing from its cgroup v2 tree" "$results/cgroup-bare.log" ||
	fail "--cgroup in a tree without controllers said: $(tail -1 "$results/cgroup-bare.log")"
status cgroup 0
grouped=$(samples "$results/cgroup/folded_stacks.out" "$worker")
others=$(samples "$results/cgroup/folded_stacks.out" '^switches')
echo "--cgroup: $grouped samples in its program's worker, $others of the program outside"
((grouped > 0 && others == 0)) || fail "--cgroup sampled $grouped in its program, $others outside"

# The agent, its receiver down: its periods wait in the spool.
status agent 0
periods=$(grep -c '^/tmp/spool/period-' "$results/agent.spool" || true)
echo "agent: $periods periods in the spool"
((periods >= 2)) || { tail -3 "$results/agent.log"; fail "the agent spooled $periods periods"; }

status dotnet 0
hot=$(samples "$results/dotnet/folded_stacks.out" 'Demo.Program::HotMethod')
echo ".NET: $hot samples in Demo.Program::HotMethod"
((hot > 0)) || fail "the .NET app's HotMethod is not named"

# Least privilege: CAP_PERFMON and CAP_SYS_PTRACE, as the manifests give.
grep -q '^CapEff:.*0000004000080000' "$results/sidecar.caps" ||
	fail "the sidecar's capabilities: $(grep CapEff "$results/sidecar.caps")"
if ((paranoid > 2)); then
	status sidecar/default 1
	advice="profcpu: perf_event_open: Permission denied: kernel.perf_event_paranoid is $paranoid, and above 2 Debian's and Ubuntu's kernels let only CAP_SYS_ADMIN open perf events (CAP_PERFMON, which profcpu has, is not enough): give profcpu CAP_SYS_ADMIN, or set kernel.perf_event_paranoid to 2 or less on the node (sysctl -w kernel.perf_event_paranoid=2)"
	[[ $(cat "$results/sidecar/default.log") == "$advice" ]] ||
		fail "at paranoid $paranoid the sidecar said: $(cat "$results/sidecar/default.log")"
	echo "sidecar at paranoid $paranoid: refused, with the advice"
else
	status sidecar/default 0
fi
status node-paranoid 0
grep -qx "kernel.perf_event_paranoid: $paranoid, now 2" "$results/node-paranoid.log" ||
	fail "container/profcpu-node-paranoid.yaml's init step said: $(cat "$results/node-paranoid.log")"
# Its ring buffers: what its locked-memory limit allows (on 5.10, 128 pages
# a CPU of the 256 asked, 2048 with --off-cpu). Samples lost, which an
# emulated machine's slow reader may cause at any size, are said with what
# lifts the loss: for a ring the limit shrank, what to grant.
for capture in paranoid2 every2 offcpu2; do
	status "sidecar/$capture" 0
	log=$results/sidecar/$capture.log
	lost=$(sed -n 's/.* \([0-9]*\) lost; stopped.*/\1/p' "$log")
	shrunk=$(grep -o 'ring buffers of [0-9]* pages per CPU, not [0-9]*' "$log" || true)
	echo "sidecar $capture at paranoid 2: $(grep -oE '[0-9]+ samples[^;]* [0-9]+ lost' "$log")${shrunk:+; $shrunk}"
	if [[ -n $shrunk ]]; then
		grep -q 'per CPU, not .*give profcpu CAP_IPC_LOCK' "$log" || fail "the shrunk ring's warning grants nothing"
		((lost == 0)) || grep -q "$lost samples were lost in ring buffers of .*give profcpu CAP_IPC_LOCK" "$log" ||
			fail "$lost samples lost in a shrunk ring, not said with what to grant: $(grep lost "$log")"
	elif ((lost > 0)); then
		grep -q "$lost samples were lost: the ring buffer overflowed; raise -buffersize" "$log" ||
			fail "$lost samples lost, not said"
	fi
done
(($(samples "$results/sidecar/paranoid2/folded_stacks.out" "$worker") > 0)) ||
	fail "the sidecar at paranoid 2 missed the native program's worker"
echo "$version: every check passed"
