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
# The symbol server is unreachable: what matters is that the image's profcpu
# can load libcurl (loaded only when a server is named) and tries it.
run --cap-add PERFMON --cap-add SYS_PTRACE --security-opt seccomp=unconfined "${sidecar[@]}" \
	profcpu collect -pid 1 -duration 2 -o /profilings/sidecar --symbol-server http://127.0.0.1:9
folded top "$workdir/out/sidecar/folded_stacks.out" 3
assert_share "$workdir/out/sidecar/folded_stacks.out" ';call_generated;jitted_busy_loop\[Generated\]$' 90 100
assert_file "$workdir/out/sidecar/perf-1.map"
grep -q 'libcurl is not installed' "$workdir/out/sidecar/profcpu.log" && fail "the image lacks libcurl"
grep -q 'no debug file for build-id .* on http://127.0.0.1:9' "$workdir/out/sidecar/profcpu.log" ||
	fail "the sidecar did not ask the symbol server"

# From the host, by the host's pid of the containerized process.
host_pid=$(podman inspect -f '{{.State.Pid}}' target)
"$PROFCPU" collect -pid "$host_pid" -duration 2 -o "$workdir/host"
assert_share "$workdir/host/folded_stacks.out" ';call_generated;jitted_busy_loop\[Generated\]$' 90 100

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
assert_share "$workdir/hostile/folded_stacks.out" ';call_generated;jitted_busy_loop\[Generated\]$' 90 100
