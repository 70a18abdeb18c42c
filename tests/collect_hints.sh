#!/usr/bin/env bash
# The hints say what is really missing. Root without CAP_SYSLOG (as in a
# sidecar) reads no kernel addresses: the log asks for CAP_SYSLOG, not for
# root. libc without its debug file (here /usr/lib/debug is hidden by an
# empty mount) is a distribution library: the log names the distribution's
# debug package, not dotnet-symbol.
source "$(dirname "$0")/lib.sh"
(($(id -u) == 0)) || skip "the test drops a capability of root"
command -v capsh >/dev/null || skip "capsh (libcap2-bin) is not installed"
command -v unshare >/dev/null || skip "unshare is not installed"

mkdir "$workdir/empty"
# dd spends its time in read() and write(): libc and kernel frames.
unshare --mount sh -c '
	mount --bind "$1/empty" /usr/lib/debug || exit 77
	dd if=/dev/zero of=/dev/null bs=4k 2>/dev/null &
	capsh --drop=cap_syslog -- -c "\"$2\" collect -pid $! -duration 2 -o \"$1/out\""
	status=$?
	kill $!
	exit $status
' sh "$workdir" "$PROFCPU" || {
	status=$?
	((status == 77)) && skip "cannot mount over /usr/lib/debug here"
	fail "collect exited with $status"
}
folded top "$workdir/out/folded_stacks.out" 5
grep 'profcpu: symbols:' "$workdir/out/profcpu.log" | cut -c1-300
grep -q 'kernel frames stay unnamed; profcpu needs CAP_SYSLOG' "$workdir/out/profcpu.log" ||
	fail "no CAP_SYSLOG hint for the kernel frames"
grep -q 'libc.so.6 (build-id [0-9a-f]*) has no debug information.*libc6-dbg' "$workdir/out/profcpu.log" ||
	fail "no distribution debug package hint for libc"
grep 'libc.so.6 (build-id' "$workdir/out/profcpu.log" | grep -q dotnet-symbol &&
	fail "the libc hint still suggests dotnet-symbol"
true
