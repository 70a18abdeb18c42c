#!/usr/bin/env python3
# A process that poses as .NET to the agent: it maps the file given (named
# libcoreclr.so), listens on a diagnostics socket named as the runtime
# names it and, asked for an EventPipe session (CollectTracing2), answers
# yes and then streams random bytes without end, fast, ignoring
# StopTracing. It spins a fifth of a core, so that the agent samples it.
# A real .NET runtime cannot be made to do this: tests/agent_hostile_runtime.sh
# and tests/agent_bad_neighbours.sh use it as a stand-in.
#   fake_dotnet_runtime.py LIBCORECLR
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

def busy():  # a fifth of a core: six of them leave the machine to the rest
    while True:
        began = time.monotonic()
        while time.monotonic() - began < 0.02:
            pass
        time.sleep(0.08)

threading.Thread(target=busy, daemon=True).start()  # sampled: the agent looks at it
while True:
    connection, _ = server.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
