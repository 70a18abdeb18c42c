#!/usr/bin/env bash
# The unit tests on the arm64 build: builds profcpu for arm64 with the cross
# file (cross/aarch64-linux-gnu.ini) into $ARM64_BUILD, configured once and
# rebuilt where the sources changed, and runs its unit tests under
# qemu-aarch64-static (the cross file's exe wrapper): the arm64 code of
# profcpu, compiled for and run on an emulated arm64 CPU, its CFI tests on
# its own arm64 code. Passes when every one passes; each one's result is
# in $ARM64_BUILD/meson-logs.
source "$(dirname "$0")/lib.sh"

command -v aarch64-linux-gnu-gcc >/dev/null ||
	skip "no arm64 cross compiler (aarch64-linux-gnu-gcc: scripts/install-deps installs it)"
command -v qemu-aarch64-static >/dev/null ||
	skip "no qemu-aarch64-static to run arm64 binaries (scripts/install-deps installs it)"
root=$(cd "$tests_dir/.." && pwd)
build=${ARM64_BUILD:?}

if [[ ! -f $build/build.ninja ]]; then
	meson setup "$build" "$root" --cross-file "$root/cross/aarch64-linux-gnu.ini" \
		>"$workdir/setup.log" 2>&1 || { cat "$workdir/setup.log"; fail "the arm64 build does not configure"; }
fi
meson compile -C "$build" >"$workdir/compile.log" 2>&1 ||
	{ tail -30 "$workdir/compile.log"; fail "the arm64 build does not compile"; }
readelf -h "$build/tests/test_stack_walk" | grep -q 'Machine: *AArch64' ||
	fail "the arm64 build's tests are not arm64 binaries"
meson test -C "$build" --suite unit --print-errorlogs --num-processes 2 ||
	fail "unit tests failed on arm64 (under qemu-aarch64-static)"
