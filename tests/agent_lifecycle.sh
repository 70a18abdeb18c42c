#!/usr/bin/env bash
# profcpu agent over processes' lives and the receiver's connections:
# - a process that execs another program within one period is two
#   processes: two profiles, each with its own `process` label and frames
#   (a shell busy in its loop, then the two_loops workload under its pid);
# - the pushes of a period share one connection to the receiver (HTTP
#   keep-alive), which the receiver counts;
# - a receiver that closes the connection after each answer, without
#   saying so, still gets every push;
# - a receiver that refuses the agent's credentials is said so once, with
#   the credential it refused (never its secret), and the periods wait in
#   the spool;
# - a shell that execs a .NET app (an entrypoint script's `exec dotnet`),
#   after the agent looked at the shell, is asked for its perf map once it
#   runs .NET: the app's JIT frames are named, and no profile mixes the two;
# - a pid that a second process gets after the first exited, within one
#   period, gives two profiles, each with its own process and frames;
# - a process whose pod's files appear after it was first sampled (runc's
#   init is in the container's cgroup before it enters the container's
#   root) is pushed with its pod's labels;
# - 300 short processes of one pod make one series a period, each process
#   in it by its pid and name (pprof sample labels).
#
# The agent runs in a PID namespace of its own, with its workloads: it
# samples and asks only them, not the machine's other processes (an agent
# switches on the perf map of every .NET process it sees). No Pyroscope
# server can be installed on this machine: the receiver is the tests'
# stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_LIFECYCLE_INSIDE:-} != 1 ]]; then
	AGENT_LIFECYCLE_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

# receiver NAME MODE [AUTHORIZATION]: the stand-in in $workdir/received-NAME,
# its URL in $url.
receiver() {
	local port
	port=$(free_port)
	mkdir -p "$workdir/received-$1"
	start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received-$1" "${@:2}"
	until [[ -e $workdir/received-$1/ready ]]; do sleep 0.1; done
	url=http://127.0.0.1:$port
}

# agent NAME INTERVAL [OPTION...]: an agent pushing to $url, spooling in
# $workdir/NAME, its stderr in $workdir/NAME.err; its pid in $agent_pid.
agent() {
	start "$PROFCPU" agent --push "$url" --push-interval "$2" --push-timeout 60 \
		--spool "$workdir/$1" "${@:3}" 2>"$workdir/$1.err"
	agent_pid=$started_pid
}

# next_period NAME: waits until the agent NAME starts a new period (what
# follows falls early in it); the first call also waits for its first.
next_period() {
	local period
	until period=$(newest_period "$1") && [[ -n $period ]]; do sleep 0.05; done
	until [[ $(newest_period "$1") > $period ]]; do sleep 0.05; done
}
newest_period() { ls -d "$workdir/$1"/period-* 2>/dev/null | tail -1; }

# stop_agent NAME: stops it (it sends its last period) and shows its log.
stop_agent() {
	kill -INT "$agent_pid"
	wait "$agent_pid" || fail "the agent exited with status $?"
	cat "$workdir/$1.err"
}

# pushes DIR: a line per process of each push, in the order they came:
# the round of pushes it came in (the worker sends a period's profiles one
# after the other, then waits for the next period), its connection, the
# pid and process (sample labels inside the profile), and the file.
pushes() {
	python3 - "$1" "$tests_dir" <<'PY'
import glob, sys
sys.path.insert(0, sys.argv[2])
from protobuf_wire import pprof_samples
found = []
for path in glob.glob(sys.argv[1] + "/*.query"):
    query = dict(line.rstrip("\n").split("=", 1) for line in open(path))
    with open(path[:-len(".query")] + ".pb.gz", "rb") as profile:
        processes = sorted({(labels["pid"], labels["process"])
                            for labels, _, _ in pprof_samples(profile.read())})
    for pid, process in processes:
        found.append((float(query["received"]), query["connection"], pid, process, path))
found.sort()
round_number, last = 0, None
for received, *rest in found:
    if last is not None and received - last > 1:
        round_number += 1
    last = received
    print(round_number, *rest)
PY
}

echo "--- a shell that execs another program within one period; keep-alive"
receiver keep ok
agent keep 6
next_period keep
# Busy in the shell's own loop for a second or two, then the same pid is
# two_loops for 2 s: both early in this 6-second period.
start bash -c 'echo $$ >"$0"; end=$((SECONDS + 2)); while ((SECONDS < end)); do :; done
	exec "$WORKLOAD_TWO_LOOPS" 2' "$workdir/shell.pid"
wait "$started_pid"
shell_pid=$(cat "$workdir/shell.pid")
next_period keep
stop_agent keep
pushes "$workdir/received-keep" | tee "$workdir/keep.pushes"

python3 - "$workdir/keep.pushes" "$shell_pid" "$tests_dir" <<'PY' || fail "the exec or the connections are not as they should"
import collections, sys
sys.path.insert(0, sys.argv[3])
from agent_pushes import profile_counts, rounds_of
lines = [line.split() for line in open(sys.argv[1])]
shell_pid = sys.argv[2]

# The shell and what it exec'd: one round, two profiles, own frames.
# (The fork before the shell's exec may give a third, short profile.)
rounds = rounds_of(sys.argv[1], shell_pid)
shown = profile_counts(rounds)
both = [pushed for pushed in rounds.values() if {"bash", "workload_two_lo"} <= set(pushed)]
assert both, f"no round with the shell and two_loops apart: {shown}"
for pushed in both:
    assert len(pushed["workload_two_lo"]) == 1, f"two_loops twice in one round: {shown}"
    assert b"two_loops" in pushed["workload_two_lo"][0], "two_loops' profile does not name it"
    assert not any(b"two_loops" in profile for profile in pushed["bash"]), \
        "the shell's profile names two_loops"
print(f"pid {shell_pid}: the shell and two_loops apart in one round: {shown}")

# Each round's pushes on one connection.
connections, files = collections.defaultdict(set), collections.defaultdict(set)
for number, connection, _, _, path in lines:
    connections[number].add(connection)
    files[number].add(path)
shared = [number for number in files if len(files[number]) >= 2]
assert shared, "no round of two pushes"
for number in shared:
    assert len(connections[number]) == 1, f"round {number} used connections {connections[number]}"
print(f"{sum(map(len, files.values()))} pushes in {len(connections)} rounds on "
      f"{len({line[1] for line in lines})} connection(s)")
PY

echo "--- a process whose pod's files appear after it was first sampled"
receiver late ok
agent late 6
next_period late
# Busy from its start; after 0.3 s its mount namespace gets the pod's
# hostname and service account namespace file, as a container's root.
echo late-7d9f8b4c6-x2k4q >"$workdir/late-hostname"
start unshare --mount bash -c 'echo $$ >"$0"; busy() { local end=$((${EPOCHREALTIME/./} + $1))
		while ((${EPOCHREALTIME/./} < end)); do :; done; }
	busy 300000
	mount --bind "$1" /etc/hostname && mount -t tmpfs pod /run &&
		mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
		echo late >/run/secrets/kubernetes.io/serviceaccount/namespace || exit 1
	busy 2000000' "$workdir/late.pid" "$workdir/late-hostname"
wait "$started_pid" || fail "the late pod's process could not set up its files"
next_period late
stop_agent late
late_pid=$(cat "$workdir/late.pid")
late_labels=$(pushes "$workdir/received-late" | awk -v pid="$late_pid" '$3 == pid { print $5 }' |
	sort -u | xargs -r grep -h '^name=')
echo "$late_labels"
[[ -n $late_labels ]] || fail "no push of pid $late_pid"
! grep -v 'namespace=late,pod=late-7d9f8b4c6-x2k4q' <<<"$late_labels" ||
	fail "a push of pid $late_pid lacks its pod's labels"

echo "--- 300 short processes of one pod: one series a period"
receiver many ok
agent many 4 -F 499
next_period many
echo many-5c8d7f9b6-k2x7p >"$workdir/many-hostname"
# Each busy for 30 ms, one after the other: about 10 s, three periods.
start unshare --mount bash -c 'mount --bind "$0" /etc/hostname && mount -t tmpfs pod /run &&
		mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
		echo jobs >/run/secrets/kubernetes.io/serviceaccount/namespace || exit 1
	for _ in {1..300}; do
		bash -c '"'"'end=$((${EPOCHREALTIME/./} + 30000)); while ((${EPOCHREALTIME/./} < end)); do :; done'"'"'
	done' "$workdir/many-hostname"
wait "$started_pid" || fail "the pod's 300 processes could not run"
next_period many
stop_agent many
pushes "$workdir/received-many" >"$workdir/many.pushes"
python3 - "$workdir/many.pushes" <<'PY' || fail "the pod's processes did not make one series"
import collections, sys
pushes = collections.defaultdict(set)  # round -> the pod's pushes
pids = set()
for number, _, pid, process, path in (line.split() for line in open(sys.argv[1])):
    name = dict(line.rstrip("\n").split("=", 1) for line in open(path))["name"]
    if "pod=many-5c8d7f9b6-k2x7p" in name:
        assert name.startswith("jobs/many.cpu{namespace=jobs,pod=many-5c8d7f9b6-k2x7p,"), name
        pushes[number].add(path)
        pids.add(pid)
print(f"{len(pids)} processes of the pod in {sum(map(len, pushes.values()))} pushes over "
      f"{len(pushes)} rounds")
assert len(pids) >= 100, "too few of the pod's processes were sampled"
assert all(len(paths) == 1 for paths in pushes.values()), dict(pushes)
PY

echo "--- a pid that another process gets within one period"
receiver reuse ok
agent reuse 6
next_period reuse
# two_loops for a second; once it has exited, this PID namespace hands its
# pid out again (ns_last_pid), to split for a second. A child that got
# another pid (a thread took it first) exits at once and is tried again.
"$WORKLOAD_TWO_LOOPS" 1 &
reused_pid=$!
wait "$reused_pid"
for _ in $(seq 50); do
	echo $((reused_pid - 1)) >/proc/sys/kernel/ns_last_pid
	bash -c '(($$ == $0)) || exit 3; exec "$1" 1' "$reused_pid" "$WORKLOAD_SPLIT" &
	wait $! && break
done
(($? == 0)) || fail "pid $reused_pid was not handed out again"
next_period reuse
stop_agent reuse
pushes "$workdir/received-reuse" >"$workdir/reuse.pushes"
python3 - "$workdir/reuse.pushes" "$reused_pid" "$tests_dir" <<'PY' || fail "the reused pid's processes are not apart"
import sys
sys.path.insert(0, sys.argv[3])
from agent_pushes import profile_counts, rounds_of
rounds = rounds_of(sys.argv[1], sys.argv[2])
shown = profile_counts(rounds)
both = [pushed for pushed in rounds.values() if {"workload_two_lo", "workload_split"} <= set(pushed)]
assert both, f"no round with two_loops and split apart under pid {sys.argv[2]}: {shown}"
for pushed in both:
    assert len(pushed["workload_two_lo"]) == 1 and len(pushed["workload_split"]) == 1, shown
    assert b"two_loops" in pushed["workload_two_lo"][0] and b"spin_sixty" not in pushed["workload_two_lo"][0], \
        f"two_loops' samples are not its own: {sorted(set(pushed['workload_two_lo'][0].split()))}"
    assert b"spin_sixty" in pushed["workload_split"][0] and b"two_loops" not in pushed["workload_split"][0], \
        f"split's samples are not its own: {sorted(set(pushed['workload_split'][0].split()))}"
print(f"pid {sys.argv[2]}: two_loops and then split apart in one round: {shown}")
PY

echo "--- a receiver that closes the connection after each answer"
receiver close close
start "$WORKLOAD_SPLIT" 600
start "$WORKLOAD_TWO_LOOPS" 600
agent close 2
periods() { cat "$workdir/close/agent.log" 2>/dev/null | grep -c "named and encoded" || true; }
until (($(periods) >= 3)); do sleep 0.2; done
stop_agent close
! grep -E "cannot push|refused" "$workdir/close.err" || fail "a push failed"
sent=$(sed -nE 's/.* processes in ([0-9]+) series named and encoded.*/\1/p' "$workdir/close/agent.log" |
	paste -sd+ | bc)
pushes "$workdir/received-close" >"$workdir/close.pushes"
received=$(cut -d' ' -f5 "$workdir/close.pushes" | sort -u | wc -l)
connections=$(cut -d' ' -f2 "$workdir/close.pushes" | sort -u | wc -l)
echo "$sent profiles made, $received received on $connections connections"
((received == sent && received >= 3)) || fail "the receiver got $received of $sent pushes"
((connections == received)) || fail "the receiver did not close each connection"

echo "--- a receiver that refuses the agent's credentials"
receiver refused ok "Basic $(printf '%s' 'agent:right' | base64)"
printf 'wrong-secret' >"$workdir/wrong-password"
agent refused 1 --basic-auth-user agent --basic-auth-password-file "$workdir/wrong-password"
until (($(cat "$workdir/refused/agent.log" 2>/dev/null | grep -c "named and encoded" || true) >= 3)); do
	sleep 0.2
done
stop_agent refused
refusals=$(grep -c "the server refused the basic auth of user agent (its password from $workdir/wrong-password): HTTP 401" \
	"$workdir/refused.err" || true)
((refusals == 1)) || fail "the refused credential was said $refusals times, not once"
! grep -q 'wrong-secret' "$workdir/refused.err" "$workdir/refused/agent.log" || fail "the secret was printed"
kept=$(ls "$workdir"/refused/period-*/*.pb.gz 2>/dev/null | wc -l)
((kept >= 3)) || fail "the agent kept $kept profiles in its spool, not every period's"

echo "--- a shell that execs a .NET app"
build_hotloop
receiver dotnet ok
agent dotnet 2
# Three periods of the shell (the agent looks at it once it is a second
# old: no runtime), then HotLoop under its pid.
start bash -c 'echo $$ >"$0"; end=$((SECONDS + 6)); while ((SECONDS < end)); do :; done
	exec dotnet "$1" 10' "$workdir/dotnet-shell.pid" "$workdir/bin/hotloop.dll"
wait "$started_pid" || fail "the shell or HotLoop failed"
stop_agent dotnet
pushes "$workdir/received-dotnet" >"$workdir/dotnet.pushes"
python3 - "$workdir/dotnet.pushes" "$(cat "$workdir/dotnet-shell.pid")" "$tests_dir" <<'PY' ||
import sys
sys.path.insert(0, sys.argv[3])
from agent_pushes import frames_of
profiles = [(process, frames_of(path[:-len(".query")] + ".pb.gz", pid, process))
            for _, _, pid, process, path in (line.split() for line in open(sys.argv[1]))
            if pid == sys.argv[2]]
shell = [profile for process, profile in profiles if process == "bash"]
app = [profile for process, profile in profiles if process == "dotnet"]
named = sum(b"HotMethod" in profile for profile in app)
print(f"pid {sys.argv[2]}: {len(shell)} profiles of the shell, {len(app)} of HotLoop, "
      f"{named} naming HotMethod")
assert shell and app, "the shell or HotLoop was not sent"
assert named, "HotLoop's JIT frames are not named"
assert not any(b"HotMethod" in profile for profile in shell), "the shell's profile names HotMethod"
PY
	fail "the exec'd .NET app is not named as it should"
echo "ok"
