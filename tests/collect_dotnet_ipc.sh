#!/usr/bin/env bash
# A .NET app started WITHOUT DOTNET_PerfMapEnabled: profcpu turns its perf map
# on through the diagnostics socket, so managed frames are named with no
# restart. A stale map left by an earlier process is not trusted, and a
# symlink planted where the socket should be is never followed.
source "$(dirname "$0")/lib.sh"

build_hotloop
check_named() {
	folded top "$1/folded_stacks.out" 2
	assert_share "$1/folded_stacks.out" 'hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)' 80 100
}

# No perf map at all.
start_hotloop
pid=$started_pid
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/plain" 2>"$workdir/stderr"
cat "$workdir/stderr"
grep -q 'turned on the perf map' "$workdir/stderr" || fail "no word of turning the perf map on"
check_named "$workdir/plain"
kill "$pid"
rm -f "/tmp/perf-$pid.map"

# A perf map older than the process, naming everything STALE_NAME.
start_hotloop
pid=$started_pid
echo "0 7fffffffffff STALE_NAME" >"/tmp/perf-$pid.map"
touch -d '1 hour ago' "/tmp/perf-$pid.map"
"$PROFCPU" collect -pid "$pid" -duration 3 -o "$workdir/stale"
grep -q STALE_NAME "$workdir/stale/folded_stacks.out" && fail "names came from a stale perf map"
check_named "$workdir/stale"
kill "$pid"
rm -f "/tmp/perf-$pid.map"

# No diagnostics socket, but a symlink in its place to a socket of ours that
# counts connections.
start_hotloop DOTNET_EnableDiagnostics=0
pid=$started_pid
python3 - "$workdir/listener.sock" "$workdir/connections" <<'PY' &
import socket, sys
server = socket.socket(socket.AF_UNIX)
server.bind(sys.argv[1])
server.listen(1)
server.settimeout(15)
try:
    server.accept()
    open(sys.argv[2], "w").write("connected\n")
except socket.timeout:
    pass
PY
background_pids+=($!)
until [[ -S "$workdir/listener.sock" ]]; do sleep 0.05; done
planted=/tmp/dotnet-diagnostic-$pid-99999999999-socket
ln -s "$workdir/listener.sock" "$planted"
trap 'rm -f "$planted"; cleanup' EXIT
"$PROFCPU" collect -pid "$pid" -duration 1 -o "$workdir/planted" 2>"$workdir/stderr"
cat "$workdir/stderr"
[[ ! -e "$workdir/connections" ]] || fail "profcpu followed a planted symlink to another socket"
# Without the IPC, its JIT frames are named from its runtime's memory
# (collect_dotnet_no_diagnostics.sh); where the perf map route is asked for
# alone, the advice is how to name them.
grep -q "naming the JIT frames of .NET pid $pid from its runtime's memory" "$workdir/stderr" ||
	fail "no word of the route from the runtime's memory when the perf map cannot be turned on"
"$PROFCPU" collect -pid "$pid" -duration 1 --names perfmap -o "$workdir/planted-perfmap" 2>"$workdir/stderr"
grep -q 'DOTNET_PerfMapEnabled=1' "$workdir/stderr" || fail "no advice when the perf map cannot be turned on"
