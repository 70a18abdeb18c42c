#!/usr/bin/env bash
# A process that poses as .NET to the agent (it maps a file named
# libcoreclr.so and listens on a diagnostics socket) and, asked for an
# EventPipe session, answers yes and then streams bytes without end, fast,
# ignoring StopTracing: the agent's runtime events are hostile input. The
# agent must go on: each period's file of that process stops at 64 MiB,
# the periods are sent (CPU profiles of the other processes pushed), the
# junk gives no runtime profile, and the agent stops when told.
#
# A real .NET runtime cannot be made to do this: the stand-in is a Python
# script speaking the diagnostics IPC's framing (DOTNET_IPC_V1 headers).
# The agent runs in a PID namespace of its own; the receiver is the tests'
# stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_HOSTILE_RUNTIME_INSIDE:-} != 1 ]]; then
	AGENT_HOSTILE_RUNTIME_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

mkdir "$workdir/fake"
head -c 65536 /dev/zero >"$workdir/fake/libcoreclr.so"
cat >"$workdir/fake.py" <<'PY'
import mmap, os, socket, struct, sys, threading, time

runtime = mmap.mmap(os.open(sys.argv[1], os.O_RDONLY), 0, prot=mmap.PROT_READ)
server = socket.socket(socket.AF_UNIX)
# As the runtime names it: its pid and its start time in clock ticks.
start_ticks = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
server.bind(f"/tmp/dotnet-diagnostic-{os.getpid()}-{start_ticks}-socket")
server.listen(16)

def reply(connection, payload):
    connection.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20 + len(payload), 0xFF, 0, 0)
                       + payload)

def serve(connection):
    header = connection.recv(20, socket.MSG_WAITALL)
    if len(header) < 20:
        return
    size, command_set, command_id, _ = struct.unpack("<HBBH", header[14:20])
    connection.recv(max(size - 20, 0), socket.MSG_WAITALL)
    if (command_set, command_id) == (0x02, 0x03):  # CollectTracing2: endless bytes
        reply(connection, struct.pack("<Q", 7))
        junk = os.urandom(1 << 16)
        try:
            while True:
                connection.sendall(junk)
        except OSError:
            return
    reply(connection, struct.pack("<Q", 7) if command_set == 0x02 else b"\0\0\0\0")
    connection.close()

def busy():
    while True:
        pass

threading.Thread(target=busy, daemon=True).start()  # sampled: the agent looks at it
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
PY
start python3 "$workdir/fake.py" "$workdir/fake/libcoreclr.so"
fake_pid=$started_pid

port=$(free_port)
mkdir "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
until [[ -e $workdir/received/ready ]]; do sleep 0.1; done
start "$PROFCPU" agent --push "http://127.0.0.1:$port" --push-interval 2 --push-timeout 60 \
	--spool "$workdir/spool" 2>"$workdir/agent.err"
agent_pid=$started_pid

# periods: how many periods the agent has sent.
periods() {
	local count
	count=$(grep -c "named and encoded" "$workdir/spool/agent.log" 2>/dev/null)
	echo "${count:-0}"
}
until grep -q "EventPipe session .*/runtime-$fake_pid-" "$workdir/spool/agent.log" 2>/dev/null; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
	kill -0 "$fake_pid" 2>/dev/null || fail "the fake runtime exited"
	sleep 0.2
done
# Each period's file stops at 64 MiB (the stream no longer read past it,
# its connection closed at the cut), and the periods go on.
largest=0
from=$(periods)
until (($(periods) >= from + 6)); do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
	for file in "$workdir"/spool/runtime-*.nettrace; do
		[[ -e $file ]] || continue
		size=$(stat -c %s "$file" 2>/dev/null || echo 0)
		((size <= largest)) || largest=$size
	done
	sleep 0.2
done
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
kill "$fake_pid"
cat "$workdir/agent.err"
echo "the largest session file: $largest bytes"
((largest > 0)) || fail "the agent wrote none of the fake runtime's stream"
((largest <= 64 << 20)) || fail "a session file grew to $largest bytes, past 64 MiB"
grep -q '^label.__name__=process_cpu$' "$workdir"/received/*.query || fail "no CPU profile was pushed"
! grep -q '^label.__name__=\(lock\|exception\|memory\)$' "$workdir"/received/*.query ||
	fail "the fake runtime's junk gave a runtime profile"
! ls "$workdir"/spool/runtime-*.nettrace 2>/dev/null || fail "the agent left session files in its spool"
echo "ok: an endless hostile stream bounded, the periods sent"
