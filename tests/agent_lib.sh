# The agent's end-to-end tests that run one agent with its spool in
# $workdir/spool, pushing to the tests' stand-in receiver
# (lib.sh's start_receiver_and_agent). Sourced after lib.sh.

# agent_runs: fails the test, with the agent's stderr, once it stopped.
agent_runs() {
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
}

# periods: how many periods the agent has sent.
periods() {
	local count
	count=$(grep -c "named and encoded" "$workdir/spool/agent.log" 2>/dev/null)
	echo "${count:-0}"
}

# wait_periods N: until the agent has sent N periods.
wait_periods() {
	until (($(periods) >= $1)); do
		agent_runs
		sleep 0.2
	done
}

# wait_session PID: until the agent records the runtime events of PID;
# fails, with the agent's log, when it sent 30 periods without.
wait_session() {
	local last_period=$(($(periods) + 30))
	until grep -q "EventPipe session .*/runtime-$1-" "$workdir/spool/agent.log" 2>/dev/null; do
		agent_runs
		kill -0 "$1" 2>/dev/null || fail "pid $1 exited"
		(($(periods) < last_period)) ||
			{ tail -30 "$workdir/spool/agent.log"; fail "the agent sent 30 periods without a session of pid $1"; }
		sleep 0.2
	done
}

# wait_sent_after MS [COMMAND...]: until the agent has sent a period begun
# after MS (milliseconds of Unix time, as its folder is named): the periods
# before it are sent too. COMMAND runs at each look.
wait_sent_after() {
	until grep -o "period-[0-9]*-[0-9]*: .* named and encoded" "$workdir/spool/agent.log" |
		awk -F'[-:]' -v after="$1" '$2 > after { found = 1 } END { exit !found }'; do
		agent_runs
		"${@:2}"
		sleep 0.2
	done
}

# start_fake_runtimes N: N stand-ins for a .NET runtime that stream events
# without end (tests/fake_dotnet_runtime.py); their pids in $fake_pids.
start_fake_runtimes() {
	mkdir -p "$workdir/fake"
	head -c 65536 /dev/zero >"$workdir/fake/libcoreclr.so"
	fake_pids=()
	for ((fake = 0; fake < $1; fake++)); do
		start python3 "$tests_dir/fake_dotnet_runtime.py" "$workdir/fake/libcoreclr.so"
		fake_pids+=("$started_pid")
	done
}
