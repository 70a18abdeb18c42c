#!/usr/bin/env bash
# Native frames are named from the very file a process mapped, however it
# reached it: a library deleted and replaced by another file at the same
# path while it runs (found through /proc/<pid>/map_files: the file at the
# path has another inode), and a process in its own PID and mount namespace
# with a private root (unshare --root), whose files live elsewhere here.
source "$(dirname "$0")/lib.sh"

victim=$(dirname "$WORKLOAD_LOADS_LIBRARY")/libvictim.so
named='call_victim;victim_spin(;|$)'

# wait_loaded OUTPUT: until the workload has mapped its library.
wait_loaded() {
	for _ in $(seq 200); do
		grep -q loaded "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "the workload did not load its library: $(cat "$1")"
}

# A library deleted, then replaced by another file, during the capture.
mkdir -p "$workdir/lib"
cp "$victim" "$workdir/lib/libvictim.so"
"$WORKLOAD_LOADS_LIBRARY" "$workdir/lib/libvictim.so" >"$workdir/loaded.out" &
pid=$!
background_pids+=("$pid")
wait_loaded "$workdir/loaded.out"
"$PROFCPU" collect -pid "$pid" -duration 3 -F 199 -o "$workdir/deleted" &
collector=$!
sleep 1
rm "$workdir/lib/libvictim.so"
cp "$(dirname "$WORKLOAD_LOADS_LIBRARY")/workload_split" "$workdir/lib/libvictim.so"
wait "$collector"
kill "$pid"
folded top "$workdir/deleted/folded_stacks.out" 3
assert_share "$workdir/deleted/folded_stacks.out" "$named" 80 100

# A private root: the program and the libraries it loads live under
# $workdir/root here, at /app and /lib... inside; its library is deleted as
# it runs.
command -v unshare >/dev/null || skip "unshare is missing"
root=$workdir/root
mkdir -p "$root/app"
cp "$WORKLOAD_LOADS_LIBRARY" "$root/app/loads_library"
cp "$victim" "$root/app/libvictim.so"
for library in $(ldd "$WORKLOAD_LOADS_LIBRARY" | grep -o '/[^ ]*'); do
	mkdir -p "$root$(dirname "$library")"
	cp "$library" "$root$library"
done
start unshare --pid --mount --fork --kill-child --root="$root" /app/loads_library /app/libvictim.so \
	>"$workdir/root.out"
wait_loaded "$workdir/root.out"
pid=$(pgrep -f -n '^/app/loads_library' || true)
[[ -n "$pid" ]] || fail "the namespaced workload did not start"
[[ $(readlink "/proc/$pid/root") == "$root" ]] || skip "unshare --root gave no private root"
rm "$root/app/libvictim.so"
"$PROFCPU" collect -pid "$pid" -duration 2 -F 199 -o "$workdir/private-root"
folded top "$workdir/private-root/folded_stacks.out" 3
assert_share "$workdir/private-root/folded_stacks.out" "__libc_start_call_main;main;$named" 80 100
echo "ok"
