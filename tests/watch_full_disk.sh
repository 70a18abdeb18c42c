#!/usr/bin/env bash
# A full disk under the watch's ring: sampling stops with collect's one line
# saying where and why, the watch ends without a crash, and the ring's
# folder is removed (the disk is given back).
source "$(dirname "$0")/lib.sh"

(($(id -u) == 0)) || skip "needs root to mount a small tmpfs"
mkdir "$workdir/small"
mount -t tmpfs -o size=20k tmpfs "$workdir/small" || skip "cannot mount a tmpfs"
trap 'umount -l "$workdir/small" 2>/dev/null || true; cleanup' EXIT
start "$WORKLOAD_TWO_LOOPS"
status=0
timeout 300 "$PROFCPU" watch -pid "$started_pid" --once -o "$workdir/small/out" 2>"$workdir/stderr" ||
	status=$?
cat "$workdir/stderr"
((status == 1)) || fail "watch exited with $status on a full disk"
grep -q "writing $workdir/small/out/.ring.*perf.data failed after .*: No space left on device" \
	"$workdir/stderr" || fail "no word of the full disk"
[[ -z $(find "$workdir/small/out" -mindepth 1 -maxdepth 1 -name '.ring*') ]] || fail "the ring was left on the full disk"
