#!/usr/bin/env bash
# The arm64 sidecar image (container/build-image --arch arm64): podman knows
# it as arm64, and its own root file system runs its profcpu (under
# qemu-aarch64-static, which finds the dynamic loader and every library in
# that root: one missing and it does not start), and busybox's tar, which
# `kubectl cp` runs. This machine cannot run arm64 containers (no binfmt
# handler, which a test must not register): the image runs on an arm64 node.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"

command -v qemu-aarch64-static >/dev/null ||
	skip "no qemu-aarch64-static to run arm64 binaries (scripts/install-deps installs it)"
command -v aarch64-linux-gnu-gcc >/dev/null ||
	skip "no arm64 cross compiler (aarch64-linux-gnu-gcc: scripts/install-deps installs it)"

"$tests_dir/../container/build-image" --arch arm64 localhost/arm64-profcpu-test -- "${podman_options[@]}" ||
	fail "container/build-image --arch arm64 failed"
architecture=$(podman image inspect --format '{{.Architecture}}' localhost/arm64-profcpu-test)
[[ $architecture == arm64 ]] || fail "the image's architecture is $architecture, not arm64"

# Its root file system, from a container created (not started) from it.
podman create --arch arm64 --name arm64-image-files localhost/arm64-profcpu-test >/dev/null
mkdir "$workdir/image"
podman export arm64-image-files | tar -C "$workdir/image" -x
readelf -h "$workdir/image/usr/bin/profcpu" | grep -q 'Machine: *AArch64' ||
	fail "the image's profcpu is not an arm64 binary"
version=$(qemu-aarch64-static -L "$workdir/image" "$workdir/image/usr/bin/profcpu" --version) ||
	fail "the image's profcpu does not start from the image's own libraries"
echo "$version"
grep -q profcpu <<<"$version" || fail "profcpu --version printed: $version"
# The libraries profcpu opens on demand load from the image too.
for library in libwget.so.0 libmicrohttpd.so.12; do
	qemu-aarch64-static -L "$workdir/image" "$workdir/image/lib/ld-linux-aarch64.so.1" \
		--list "$workdir/image/usr/lib/aarch64-linux-gnu/$library" >"$workdir/list.txt" ||
		{ cat "$workdir/list.txt"; fail "$library does not load in the image"; }
done
echo hello >"$workdir/hello.txt"
qemu-aarch64-static -L "$workdir/image" "$workdir/image/bin/busybox" tar -C "$workdir" -cf - hello.txt |
	tar -t | grep -qx hello.txt || fail "the image's busybox tar does not run"
echo "arm64 image: $(du -sh "$workdir/image" | cut -f1)"
