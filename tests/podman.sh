# Sourced by the container tests after lib.sh: a private podman for this test
# (its own storage, runc since crun fails on these hybrid cgroups, no
# default ulimits since there is no CAP_SYS_RESOURCE here) and `run`, which
# starts containers without a network. Every container goes at the end.
command -v podman >/dev/null || skip "podman is not installed"
command -v runc >/dev/null || skip "runc is not installed"
(($(id -u) == 0)) || skip "the container tests run as root"

cat >"$workdir/containers.conf" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
CONF
export CONTAINERS_CONF=$workdir/containers.conf
podman_options=(--root "$workdir/storage" --runroot "$workdir/run" --storage-driver vfs)
podman() { command podman "${podman_options[@]}" "$@"; }
run() { podman run --network=none "$@"; }
# Twice: the first pass cannot remove a container others share the PID
# namespace of (--pid=container:NAME) while they are there.
remove_containers() {
	podman rm -f -t 0 -a >/dev/null 2>&1 || true
	podman rm -f -t 0 -a >/dev/null 2>&1 || true
}
trap 'remove_containers; cleanup' EXIT

# import_image NAME ROOT: the image NAME from the folder ROOT (skips the test
# when podman cannot import here).
import_image() {
	chmod 755 "$2"
	tar -C "$2" -c . | podman import -q - "$1" >/dev/null || skip "podman cannot import images here"
}

# import_jit_target NAME: the image NAME of the JIT workload
# (tests/workloads/jit_perfmap.c) as /bin/workload, with its libraries and a
# /tmp for its perf map, built in $target_root.
import_jit_target() {
	target_root=$workdir/target-root
	install -D "$WORKLOAD_JIT_PERFMAP" "$target_root/bin/workload"
	install_libraries "$target_root" "$WORKLOAD_JIT_PERFMAP"
	install -d -m 1777 "$target_root/tmp"
	import_image "$1" "$target_root"
}

# install_libraries ROOT BINARY...: the shared libraries each BINARY loads,
# at their paths under ROOT.
install_libraries() {
	local root=$1 binary library
	shift
	for binary in "$@"; do
		for library in $(ldd "$binary" | grep -oE '/[^ ]+'); do
			[[ -e "$root$library" ]] || install -D "$(readlink -f "$library")" "$root$library"
		done
	done
}

# import_dotnet_app IMAGE APP_DIR: the image IMAGE of a built .NET app: the
# host's .NET runtime folder (its shared frameworks, ASP.NET Core's too,
# newest version of each) at the same path, the libraries they load, APP_DIR
# as /app and a /tmp for the perf map; $dotnet_root is that path. Images are
# never pulled: the runtime is copied from the host.
import_dotnet_app() {
	local image=$1 app_dir=$2 framework version app_root=$workdir/app-root-$RANDOM
	dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")")
	mkdir -p "$app_root$dotnet_root/shared" "$app_root/app"
	cp -a "$dotnet_root/dotnet" "$dotnet_root/host" "$app_root$dotnet_root/"
	for framework in "$dotnet_root"/shared/*/; do
		version=$(ls -d "$framework"* | sort -V | tail -1)
		mkdir -p "$app_root$dotnet_root/shared/$(basename "$framework")"
		cp -a "$version" "$app_root$dotnet_root/shared/$(basename "$framework")/"
		# (ASP.NET Core's framework is managed code only.)
		! compgen -G "$version/*.so" >/dev/null || install_libraries "$app_root" "$version"/*.so
	done
	install_libraries "$app_root" "$dotnet_root/dotnet" "$dotnet_root"/host/fxr/*/*.so
	cp -a "$app_dir/." "$app_root/app/"
	install -d -m 1777 "$app_root/tmp"
	import_image "$image" "$app_root"
}
