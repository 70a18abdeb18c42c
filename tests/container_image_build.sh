#!/usr/bin/env bash
# The Containerfile builds the image with podman build from Debian's
# packages, and that image is container/build-image's: as small (within a
# tenth), and its profcpu runs (ps lists a process of its container).
# No registry is reached: the Debian 12 base is made with mmdebstrap from
# the machine's Debian sources, once, and podman's storage for this test is
# kept in the test cache, so that a second run reuses the base and the
# packages' layer (only the source copy and the build run again).
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"
command -v mmdebstrap >/dev/null || skip "mmdebstrap is not installed"
root=$(cd "$tests_dir/.." && pwd)
cache=${TEST_CACHE:?}/container-image-build
mkdir -p "$cache"
# Its run root a fixed one too: podman keeps the pair in its database.
podman_options=(--root "$cache/storage" --runroot /run/profcpu-container-image-build --storage-driver vfs)

suite=$(. /etc/os-release && echo "$VERSION_CODENAME")
[[ $suite == bookworm ]] || skip "the Containerfile's base is Debian 12 (this is $suite)"
if ! podman image exists localhost/debian:bookworm; then
	sources=()
	for file in /etc/apt/sources.list /etc/apt/sources.list.d/debian.sources; do
		[[ ! -s "$file" ]] || sources+=("$file")
	done
	mmdebstrap --quiet --variant=apt bookworm "$workdir/debian.tar" "${sources[@]}" ||
		skip "mmdebstrap cannot reach Debian's mirror"
	podman import -q "$workdir/debian.tar" localhost/debian:bookworm >/dev/null
fi

# The packages' stage tagged, so that pruning the last run's layers below
# keeps it.
build() {
	(cd "$root" && podman build --network host --build-arg DEBIAN=localhost/debian:bookworm \
		-f Containerfile "$@" .) >>"$workdir/build.log" 2>&1 ||
		{ tail -30 "$workdir/build.log"; fail "podman build -f Containerfile $* failed"; }
}
build --target packages -t localhost/profcpu-packages
build -t localhost/profcpu-containerfile
"$root/container/build-image" localhost/profcpu-build-image -- "${podman_options[@]}" >/dev/null
built=$(podman image inspect -f '{{.Size}}' localhost/profcpu-containerfile)
imported=$(podman image inspect -f '{{.Size}}' localhost/profcpu-build-image)
echo "Containerfile's image: $built bytes; container/build-image's: $imported bytes"
((built * 10 <= imported * 11)) || fail "the Containerfile's image is more than a tenth larger than build-image's"

podman run --rm --network=none localhost/profcpu-containerfile sh -c 'sleep 60 & sleep 0.5; profcpu ps' \
	>"$workdir/ps.txt" || fail "profcpu in the Containerfile's image does not run"
cat "$workdir/ps.txt"
grep -qE '^ +[0-9]+ +[0-9]+  sleep ' "$workdir/ps.txt" || fail "profcpu ps in the image does not list its sleep"
podman rmi -f localhost/profcpu-build-image >/dev/null
podman image prune -f >/dev/null # the last build's layers that no image uses now
echo "ok"
