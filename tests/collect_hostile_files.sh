#!/usr/bin/env bash
# The target's files are hostile: a perf map that is a FIFO planted by
# another user, a link to the target's own /dev/zero, one endless line.
# collect reads none of them forever, keeps its memory bounded, writes every
# output and says in one line what it skipped.
source "$(dirname "$0")/lib.sh"

(($(id -u) == 0)) || skip "needs root: the profiler runs as root next to other users' files"

# collect_guarded NAME PID: collects 1 s of PID into $workdir/NAME. The
# timeout only catches a hang (the bug), it bounds no speed: a healthy run
# takes seconds.
collect_guarded() {
	local status=0
	/usr/bin/time -f '%M' -o "$workdir/$1.rss" timeout 300 \
		"$PROFCPU" collect -pid "$2" -duration 1 -F 499 -o "$workdir/$1" 2>"$workdir/$1.stderr" ||
		status=$?
	cat "$workdir/$1.stderr"
	((status != 124)) || fail "$1: collect hung reading the target's perf map"
	((status == 0)) || fail "$1: collect exited with $status"
	assert_file "$workdir/$1/folded_stacks.out"
	assert_file "$workdir/$1/flamegraph.svg"
	assert_share "$workdir/$1/folded_stacks.out" 'spin_sixty$' 15 95
}

# Any local user can make /tmp/perf-<pid>.map of root's process a FIFO.
command -v setpriv >/dev/null || skip "setpriv is missing"
start "$WORKLOAD_SPLIT" 60
fifo=/tmp/perf-$started_pid.map
[[ ! -e $fifo ]] || skip "$fifo exists already"
setpriv --reuid=65534 --regid=65534 --clear-groups mkfifo "$fifo"
trap 'rm -f "$fifo"; cleanup' EXIT
[[ -p $fifo && $(stat -c %u "$fifo") == 65534 ]] || fail "nobody could not plant the FIFO"
collect_guarded fifo "$started_pid"
grep -q "perf-$started_pid.map of pid $started_pid is not a regular file" "$workdir/fifo/profcpu.log" ||
	fail "the log does not say the FIFO map was skipped"
rm -f "$fifo"

# A 100 MB line in a map: read in linear time, kept in bounded memory,
# skipped with a word in the log. The same run with a small map is the
# reference for memory.
start "$WORKLOAD_SPLIT" 60
map=/tmp/perf-$started_pid.map
trap 'rm -f "$map"; cleanup' EXIT
printf '7f0000000000 10 small_map_line\n' >"$map"
collect_guarded small_map "$started_pid"
python3 - "$map" <<'PY'
import sys
with open(sys.argv[1], "w") as out:
    out.write("7f0000000000 10 before_the_long_line\n7f0000001000 10 ")
    chunk = "A" * (1 << 20)
    for _ in range(100):
        out.write(chunk)
    out.write("\n7f0000002000 10 after_the_long_line\n")
PY
collect_guarded long_line "$started_pid"
small_rss=$(cat "$workdir/small_map.rss") long_rss=$(cat "$workdir/long_line.rss")
echo "peak RSS: ${small_rss} KiB with a small map, ${long_rss} KiB with a 100 MB line"
((long_rss < small_rss + 50 * 1024)) ||
	fail "a 100 MB line grew collect's memory from $small_rss to $long_rss KiB"
grep -q "skipped 1 lines longer than 64 KiB in the perf map of pid $started_pid" \
	"$workdir/long_line.stderr" || fail "no word of the skipped line"
grep -q "after_the_long_line" "$workdir/long_line/perf-$started_pid.map" ||
	fail "the line after the long one was lost"
rm -f "$map"

# A container whose perf map links to its own /dev/zero: in its own PID and
# mount namespace, with a private /tmp (the target's root is the same
# directory tree; the link resolves inside it, to the device).
command -v unshare >/dev/null || skip "unshare is missing"
name=profcpu-zero-$$
start unshare --pid --mount --fork --mount-proc --kill-child sh -c \
	'exec 3<"$0" && mount -t tmpfs tmpfs /tmp && cat <&3 >"/tmp/$1" && chmod +x "/tmp/$1" &&
	ln -s /dev/zero /tmp/perf-1.map && exec "/tmp/$1" 60' "$WORKLOAD_SPLIT" "$name"
find_process "^/tmp/$name 60\$"
pid=$found_pid
[[ $(readlink "/proc/$pid/root/tmp/perf-1.map") == /dev/zero ]] || fail "no /dev/zero link in the target"
collect_guarded zero "$pid"
grep -q "/tmp/perf-1.map of pid $pid is not a regular file" "$workdir/zero/profcpu.log" ||
	fail "the log does not say the /dev/zero map was skipped"
echo ok
