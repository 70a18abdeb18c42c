#!/usr/bin/env bash
# The agent leaves its targets as it found them: a .NET app (tests/dotnet/
# DynReuse, a new dynamic method a phase) whose perf map and jitdump the
# agent turned on writes them no more once the agent stops (SIGINT), though
# it goes on compiling methods; one whose owner turned them on
# (DOTNET_PerfMapEnabled=1) is left writing. A worker killed in between
# (SIGKILL) leaves a record in the spool, and the worker started after it
# takes over what the dead one turned on. A stopped app (SIGSTOP) holds
# the others up no longer than the agent's bound, is said in its log, and
# turns its files off once it runs again (the request waited in its
# socket).
# An agent killed with kill -9 leaves its worker, which turns off what it
# turned on. (The perf map route, --names perfmap: by default the agent
# turns on no perf map in a .NET 9+ app, tests/agent_dotnet_no_diagnostics.sh.)
#
# The agent runs in a PID namespace of its own, with its workloads: it asks
# only them, not the machine's other .NET processes.
if [[ ${AGENT_DOTNET_LEAVE_INSIDE:-} != 1 ]]; then
	AGENT_DOTNET_LEAVE_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

build_dotnet_app DynReuse

# asked PID: waits until the agent has asked the runtime of PID.
asked() {
	until grep -q "perf map and jitdump of .NET pid $1 " "$workdir/agent.err"; do
		kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent exited"; }
		sleep 0.1
	done
}

port=$(free_port)
mkdir -p "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
until [[ -e $workdir/received/ready ]]; do sleep 0.1; done

start_dynreuse own
own=$started_pid
start_dynreuse owner DOTNET_PerfMapEnabled=1
owner=$started_pid
start_dynreuse stopped
stopped=$started_pid
spool=$workdir/spool
start "$PROFCPU" agent --push "http://127.0.0.1:$port" --push-interval 1 --no-events --names perfmap \
	--spool "$spool" 2>"$workdir/agent.err"
agent_pid=$started_pid
asked "$own"
asked "$owner"
asked "$stopped"
grep -qx "$own [0-9]*" "$spool/perfmaps-on" || fail "the spool's record lacks pid $own"
grep -q "^$owner " "$spool/perfmaps-on" && fail "the spool's record lists pid $owner, whose owner turned its perf map on"

echo "--- the worker killed: the next one takes over its perf maps"
worker=$(pgrep -P "$agent_pid")
kill -KILL "$worker"
until grep -q "worker died" "$workdir/agent.err"; do sleep 0.1; done
until grep -q "taken over" "$spool/agent.log" 2>/dev/null; do sleep 0.1; done

echo "--- the agent stopped, one of its targets stopped too"
# SIGSTOP: its diagnostics socket takes the request and never answers.
kill -STOP "$stopped"
kill -INT "$agent_pid"
wait "$agent_pid" || fail "the agent exited with status $?"
cat "$workdir/agent.err"
[[ ! -e $spool/perfmaps-on ]] || fail "the spool's record stays after the agent turned everything off"
grep "pid $stopped: no answer" "$spool/agent.log" || fail "the agent's log does not say the stopped app did not answer"
# Run again, it reads the request that waited in its socket.
kill -CONT "$stopped"
dynreuse_phases_later stopped "$stopped" 1
stopped_before=$(perf_files_sizes "$stopped")
own_before=$(perf_files_sizes "$own")
owner_before=$(perf_files_sizes "$owner")
dynreuse_phases_later own "$own" 3
dynreuse_phases_later owner "$owner" 1
dynreuse_phases_later stopped "$stopped" 3
own_after=$(perf_files_sizes "$own")
owner_after=$(perf_files_sizes "$owner")
echo "turned on by the agent: $own_before after it stopped, 3 methods later: $own_after"
echo "turned on by its owner: $owner_before after it stopped, later: $owner_after"
stopped_after=$(perf_files_sizes "$stopped")
echo "stopped while the agent stopped: $stopped_before once it ran again, 3 methods later: $stopped_after"
[[ "$stopped_before" == "$stopped_after" ]] || fail "the perf map or jitdump of the app stopped while the agent stopped still grows once it runs again ($stopped_before -> $stopped_after bytes)"
[[ "$own_before" == "$own_after" ]] || fail "the perf map or jitdump the agent turned on still grows after it stopped ($own_before -> $own_after bytes)"
((${owner_after% *} > ${owner_before% *})) || fail "the perf map its owner turned on stopped growing after the agent"

echo "--- the sampler killed (kill -9): its worker turns off what it turned on"
start_dynreuse alone
alone=$started_pid
start "$PROFCPU" agent --push "http://127.0.0.1:$port" --push-interval 1 --no-events --names perfmap \
	--spool "$workdir/spool-killed" 2>"$workdir/agent.err"
agent_pid=$started_pid
asked "$alone"
worker=$(pgrep -P "$agent_pid")
kill -KILL "$agent_pid"
# (an orphan: a zombie until this namespace's first process reaps it)
while [[ $(awk '{print $3}' "/proc/$worker/stat" 2>/dev/null) =~ ^[RSD]$ ]]; do sleep 0.1; done
alone_before=$(perf_files_sizes "$alone")
dynreuse_phases_later alone "$alone" 3
alone_after=$(perf_files_sizes "$alone")
echo "turned on by a killed agent: $alone_before after its worker ended, 3 methods later: $alone_after"
[[ "$alone_before" == "$alone_after" ]] || fail "the perf map or jitdump a killed agent turned on still grows ($alone_before -> $alone_after bytes)"
