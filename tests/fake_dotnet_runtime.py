"""A stand-in for a .NET runtime older than .NET 10 on its diagnostics
socket, for what this machine cannot run (only .NET 10 is installed): it
maps a file named libcoreclr.so (which makes profcpu take it for .NET),
listens on /tmp/dotnet-diagnostic-PID-KEY-socket as the runtime does, and
answers as .NET 8 and 9 do: CollectTracing5 is an unknown command,
CollectTracing2 opens a session whose stream is the bytes of STREAM_FILE,
StopTracing ends it. Every command it gets is written to LOG, one line each
("set id"), with CollectTracing2's rundown flag and providers.

    fake_dotnet_runtime.py WORKDIR STREAM_FILE LOG
"""
import mmap
import os
import socket
import struct
import sys
import threading

UNKNOWN_COMMAND = 0x80131385
workdir, stream_file, log_path = sys.argv[1:4]

library = os.path.join(workdir, "libcoreclr.so")
with open(library, "wb") as file:
    file.write(b"\0" * 4096)
library_file = open(library, "rb")
mapping = mmap.mmap(library_file.fileno(), 4096, prot=mmap.PROT_READ)

key = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
path = f"/tmp/dotnet-diagnostic-{os.getpid()}-{key}-socket"
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(4)
log = open(log_path, "a", buffering=1)
streams = []


def reply(connection, ok, payload):
    connection.sendall(b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20 + len(payload), 0xFF,
                                                        0x00 if ok else 0xFF, 0) + payload)


def receive(connection, size):
    data = b""
    while len(data) < size:
        chunk = connection.recv(size - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def utf16_string(payload, at):
    count = struct.unpack_from("<I", payload, at)[0]
    text = payload[at + 4:at + 4 + 2 * count].decode("utf-16-le").rstrip("\0")
    return text, at + 4 + 2 * count


def describe_collect_tracing_2(payload):
    rundown = payload[8]
    count = struct.unpack_from("<I", payload, 9)[0]
    at, providers = 13, []
    for _ in range(count):
        keywords, level = struct.unpack_from("<QI", payload, at)
        name, at = utf16_string(payload, at + 12)
        _, at = utf16_string(payload, at)
        providers.append(f"{name}:0x{keywords:x}:{level}")
    return f"rundown {rundown} providers {','.join(providers)}"


def serve(connection):
    try:
        header = receive(connection, 20)
        size, command_set, command_id = struct.unpack_from("<HBB", header, 14)
        payload = receive(connection, size - 20)
    except EOFError:
        connection.close()
        return
    line = f"{command_set} {command_id}"
    if (command_set, command_id) == (2, 3):  # CollectTracing2
        log.write(f"{line} {describe_collect_tracing_2(payload)}\n")
        reply(connection, True, struct.pack("<Q", 1))
        with open(stream_file, "rb") as file:
            connection.sendall(file.read())
        streams.append(connection)  # open until StopTracing
        return
    log.write(line + "\n")
    if (command_set, command_id) == (2, 1):  # StopTracing
        reply(connection, True, struct.pack("<Q", 1))
        for stream in streams:
            stream.close()
    else:
        reply(connection, False, struct.pack("<I", UNKNOWN_COMMAND))
    connection.close()


print("ready", flush=True)
try:
    while True:
        connection, _ = server.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()
finally:
    os.unlink(path)
