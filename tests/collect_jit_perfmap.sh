#!/usr/bin/env bash
# Code generated at run time is named from the process's own perf map, also
# when the process lives in its own PID and mount namespace with a private
# /tmp, where the map is /proc/<pid>/root/tmp/perf-<namespace pid>.map.
source "$(dirname "$0")/lib.sh"

check_capture() {
	local out=$1
	folded top "$out/folded_stacks.out" 3
	assert_share "$out/folded_stacks.out" ';main;call_generated;jitted_busy_loop\[Generated\]$' 90 100
	ls "$out"/perf-*.map >/dev/null || fail "no perf map copy in $out"
	grep -qP '^\t +[0-9a-f]+ jitted_busy_loop\[Generated\] \(/tmp/perf-[0-9]+\.map\)$' \
		"$out/perf_script.out" || fail "JIT frames must show the perf map as their DSO"
}

# In this namespace.
start "$WORKLOAD_JIT_PERFMAP"
pid=$started_pid
until [[ -s /tmp/perf-$pid.map ]]; do sleep 0.05; done
"$PROFCPU" collect -pid "$pid" -duration 2 -o "$workdir/plain"
kill "$pid"
rm -f "/tmp/perf-$pid.map"
check_capture "$workdir/plain"

# After the process is gone, postprocess names the frames from the copy.
rm "$workdir/plain/folded_stacks.out"
"$PROFCPU" postprocess -dir "$workdir/plain"
check_capture "$workdir/plain"

# A map replaced during the capture (written beside it and renamed over it,
# while the capture holds the old one open): samples before the rename are
# named by the first map, samples from a poll after it by the second.
start "$WORKLOAD_JIT_PERFMAP" >"$workdir/replaced.out"
pid=$started_pid
until [[ -s /tmp/perf-$pid.map ]]; do sleep 0.05; done
"$PROFCPU" collect -pid "$pid" -duration 4 -o "$workdir/replaced" 2>"$workdir/replaced.stderr" &
collector=$!
until grep -qs '^profcpu: sampling' "$workdir/replaced.stderr"; do sleep 0.05; done
sleep 1.5
kill -USR1 "$pid"
wait "$collector"
kill "$pid"
rm -f "/tmp/perf-$pid.map"
replaced_at=$(awk '/^replaced at/ {print $3}' "$workdir/replaced.out")
[[ -n $replaced_at ]] || fail "the workload did not replace its map"
python3 - "$workdir/replaced/perf_script.out" "$replaced_at" <<'PY' ||
import re, sys

replaced_at = float(sys.argv[2])
listed = []  # (time, text) of each sample
for block in open(sys.argv[1]).read().strip().split("\n\n"):
    listed.append((float(re.search(r" (\d+\.\d+): ", block).group(1)), block))
before = [text for time, text in listed if time < replaced_at]
after = [text for time, text in listed if time > replaced_at + 0.2]  # a poll is 50 ms

def share(group, name):
    return 100 * sum(f" {name}[Generated] " in text for text in group) / max(len(group), 1)

first, second = share(before, "jitted_busy_loop"), share(after, "jitted_busy_loop_v2")
print(f"before the rename: {len(before)} samples, {first:.1f}% jitted_busy_loop; "
      f"from 0.2 s after: {len(after)} samples, {second:.1f}% jitted_busy_loop_v2")
sys.exit(0 if len(before) >= 20 and len(after) >= 20 and first >= 90 and second >= 90 else 1)
PY
	fail "samples not named by the map of their time"

# In its own PID and mount namespace, with a private /tmp.
command -v unshare >/dev/null || skip "unshare is missing"
# The workload is opened before the private /tmp hides it (the checkout may
# live under /tmp), then run from a copy inside that /tmp.
start unshare --pid --mount --fork --mount-proc --kill-child sh -c \
	'exec 3<"$0" && mount -t tmpfs tmpfs /tmp && cat <&3 >/tmp/jit-workload &&
	chmod +x /tmp/jit-workload && exec /tmp/jit-workload' "$WORKLOAD_JIT_PERFMAP"
find_process '^/tmp/jit-workload$'
pid=$found_pid
namespace_pid=$(awk '/^NSpid:/ {print $NF}' "/proc/$pid/status")
((namespace_pid != pid)) || skip "unshare gave no separate PID namespace"
until [[ -s /proc/$pid/root/tmp/perf-$namespace_pid.map ]]; do sleep 0.05; done
[[ ! -e /tmp/perf-$namespace_pid.map && ! -e /tmp/perf-$pid.map ]] ||
	skip "a perf map with the same pid exists in this /tmp"
"$PROFCPU" collect -pid "$pid" -duration 2 -o "$workdir/namespaced"
check_capture "$workdir/namespaced"
