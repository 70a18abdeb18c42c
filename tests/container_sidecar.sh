#!/usr/bin/env bash
# profcpu in real containers under podman: as a sidecar sharing the target
# container's PID namespace, and from the host. JIT frames are named from the
# perf map inside the target's own /tmp, and a hostile symlink in the target
# never leads the profiler to a file of the host.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

# Images from local files: the JIT workload, and profcpu's own image.
import_jit_target localhost/jit-target
"$tests_dir/../container/build-image" localhost/profcpu-test -- "${podman_options[@]}"

run -d --name target localhost/jit-target /bin/workload >/dev/null ||
	skip "podman cannot run containers here"
mkdir -m 777 "$workdir/out"
sidecar=(--rm --pid=container:target -v "$workdir/out:/profilings" localhost/profcpu-test)

# The default seccomp profile blocks perf_event_open without SYS_ADMIN: the
# user is told so in one line.
status=0
run --cap-add PERFMON --cap-add SYS_PTRACE "${sidecar[@]}" \
	profcpu collect -pid 1 -duration 1 -o /profilings/refused 2>"$workdir/stderr" || status=$?
cat "$workdir/stderr"
((status == 1)) || fail "a refused sidecar exited with $status"
grep -q 'seccomp' "$workdir/stderr" || fail "the refusal does not mention seccomp"

# The sidecar with what it needs.
# The symbol server is down: the sidecar asks it once and says so.
run --cap-add PERFMON --cap-add SYS_PTRACE --security-opt seccomp=unconfined "${sidecar[@]}" \
	profcpu collect -pid 1 -duration 2 -o /profilings/sidecar --symbol-server http://127.0.0.1:9
folded top "$workdir/out/sidecar/folded_stacks.out" 3
assert_share "$workdir/out/sidecar/folded_stacks.out" ';call_generated;jitted_busy_loop\[Generated\](;|$)' 90 100
assert_file "$workdir/out/sidecar/perf-1.map"
grep -q 'no debug file for build-id .* on http://127.0.0.1:9' "$workdir/out/sidecar/profcpu.log" ||
	fail "the sidecar did not ask the symbol server"

# Results come out with `kubectl cp`, which runs `tar cf - PATH` in the
# container: the image's busybox tar.
run --rm -v "$workdir/out:/profilings" localhost/profcpu-test tar cf - /profilings/sidecar |
	tar -t >"$workdir/copied.txt"
grep -q 'profilings/sidecar/flamegraph.svg$' "$workdir/copied.txt" || fail "tar in the image does not copy the results"

# The symbol server over HTTPS, through the image's own libwget and GnuTLS:
# python's HTTPS server on the host's loopback (the sidecar shares the host's
# network for this) stands in for a real server, which this machine cannot
# reach, with a certificate of a CA made here. The server holds a debug file
# for the module the sidecar asked for above. The sidecar trusts the server
# once that CA is its CA file (mounted, as a cluster with its own CA would);
# without it, the download is refused in one line.
command -v openssl >/dev/null || skip "openssl is not installed"
read -r module hex < <(sed -n 's/^profcpu: symbols: \(.*\): no debug file for build-id \([0-9a-f]*\) on .*/\1 \2/p' \
	"$workdir/out/sidecar/profcpu.log" | head -1)
[[ -n $hex ]] || fail "the sidecar asked the symbol server for nothing"
served=$workdir/served/_.debug/elf-buildid-sym-$hex
mkdir -p "$served"
objcopy --only-keep-debug "$target_root$module" "$served/_.debug"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=127.0.0.1 \
	-addext subjectAltName=IP:127.0.0.1 -keyout "$workdir/key.pem" -out "$workdir/ca.pem" 2>/dev/null
https_port=$(free_port)
cat >"$workdir/https_server.py" <<'PY'
import functools, http.server, ssl, sys

port, folder, certificate, key = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=folder)
server = http.server.ThreadingHTTPServer(("127.0.0.1", port), handler)
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(certificate, key)
server.socket = context.wrap_socket(server.socket, server_side=True)
server.serve_forever()
PY
start python3 "$workdir/https_server.py" "$https_port" "$workdir/served" "$workdir/ca.pem" "$workdir/key.pem"
for _ in $(seq 50); do
	python3 -c "import socket; socket.create_connection(('127.0.0.1', $https_port), 0.1)" 2>/dev/null && break
	sleep 0.1
done
https_sidecar=(--rm --network=host --pid=container:target --cap-add PERFMON --cap-add SYS_PTRACE
	--security-opt seccomp=unconfined -v "$workdir/out:/profilings")
podman run "${https_sidecar[@]}" -v "$workdir/ca.pem:/etc/ssl/certs/ca-certificates.crt:ro" \
	localhost/profcpu-test profcpu collect -pid 1 -duration 1 -o /profilings/https \
	--symbol-server "https://127.0.0.1:$https_port"
grep "$module" "$workdir/out/https/profcpu.log"
grep -q "$module: downloaded its debug file from https://127.0.0.1:$https_port" \
	"$workdir/out/https/profcpu.log" || fail "the sidecar did not download over HTTPS"
podman run "${https_sidecar[@]}" localhost/profcpu-test profcpu collect -pid 1 -duration 1 \
	-o /profilings/untrusted --symbol-server "https://127.0.0.1:$https_port"
grep "$module" "$workdir/out/untrusted/profcpu.log"
grep -q "no debug file for build-id $hex on https://127.0.0.1:$https_port (the certificate of 127.0.0.1 is not trusted by /etc/ssl/certs/ca-certificates.crt;" \
	"$workdir/out/untrusted/profcpu.log" || fail "an untrusted certificate is not named as the reason"

# From the host, by the host's pid of the containerized process.
host_pid=$(podman inspect -f '{{.State.Pid}}' target)
"$PROFCPU" collect -pid "$host_pid" -duration 2 -o "$workdir/host"
assert_share "$workdir/host/folded_stacks.out" ';call_generated;jitted_busy_loop\[Generated\](;|$)' 90 100

# A hostile target: its perf map is a symlink to an absolute path. The same
# path on the host holds a map that names everything EVIL_HOST_FILE; the
# link must resolve inside the container, to the map the workload wrote.
evil=$workdir/evil/perf.map
mkdir -p "$(dirname "$evil")" "$target_root$(dirname "$evil")"
echo "0 7fffffffffff EVIL_HOST_FILE" >"$evil"
ln -s "$evil" "$target_root/tmp/perf-1.map"
import_image localhost/hostile-target "$target_root"
run -d --name hostile localhost/hostile-target /bin/workload >/dev/null
sleep 0.5
host_pid=$(podman inspect -f '{{.State.Pid}}' hostile)
"$PROFCPU" collect -pid "$host_pid" -duration 1 -o "$workdir/hostile"
folded top "$workdir/hostile/folded_stacks.out" 3
if grep -q EVIL_HOST_FILE "$workdir/hostile/folded_stacks.out"; then
	fail "the profiler followed the target's symlink to a file of the host"
fi
assert_share "$workdir/hostile/folded_stacks.out" ';call_generated;jitted_busy_loop\[Generated\](;|$)' 90 100
