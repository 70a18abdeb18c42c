#!/usr/bin/env bash
# Source lines of precompiled .NET code in a real container under podman,
# profiled as users do it: from a sidecar sharing the app container's PID
# namespace (tests/dotnet/R2RTwoLoops, published ReadyToRun with its PDB;
# the checks of source_lines_r2r.sh). Once with the image mapped as code,
# as the runtime does by default, and once from the runtime's own copy of
# it in anonymous memory (DOTNET_PELoader_DisableMapping=1: the layout it
# falls back to where it cannot map an image).
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"
source "$tests_dir/r2r_two_loops.sh"

import_dotnet_app localhost/r2r-lines "$app"
"$tests_dir/../container/build-image" localhost/profcpu-test -- "${podman_options[@]}"
mkdir -m 777 "$workdir/out"

# profile NAME [ENV...]: the app in a container NAME with the environment
# ENV, 8 seconds of it from a sidecar into $workdir/out/NAME; its mappings
# of r2rtwoloops.dll (as /proc on the host shows them) in $workdir/NAME.maps.
profile() {
	local name=$1 environment=() variable
	shift
	for variable in DOTNET_TC_CallCounting=0 "$@"; do environment+=(-e "$variable"); done
	run -d --name "$name" "${environment[@]}" localhost/r2r-lines \
		"$dotnet_root/dotnet" /app/r2rtwoloops.dll 60 >/dev/null || skip "podman cannot run containers here"
	until podman logs "$name" 2>&1 | grep -q ready; do
		[[ $(podman inspect -f '{{.State.Running}}' "$name") == true ]] ||
			{ podman logs "$name"; fail "the app container $name stopped"; }
		sleep 0.2
	done
	grep 'r2rtwoloops\.dll$' "/proc/$(podman inspect -f '{{.State.Pid}}' "$name")/maps" >"$workdir/$name.maps"
	run --rm --pid=container:"$name" --cap-add PERFMON --cap-add SYS_PTRACE --security-opt seccomp=unconfined \
		-v "$workdir/out:/profilings" localhost/profcpu-test \
		profcpu collect -pid 1 -duration 8 -F 499 --lines -o "/profilings/$name" >/dev/null 2>"$workdir/collect.err" ||
		{ cat "$workdir/collect.err"; fail "collect in the sidecar failed"; }
	podman rm -f -t 0 "$name" >/dev/null
}

echo "=== the image mapped as code"
profile mapped
grep -q ' r-xp ' "$workdir/mapped.maps" || fail "the runtime did not map r2rtwoloops.dll as code"
check_lines "$workdir/out/mapped"

echo "=== the runtime's copy of the image"
profile copied DOTNET_PELoader_DisableMapping=1
! grep -q ' r-xp ' "$workdir/copied.maps" || fail "the runtime mapped r2rtwoloops.dll as code: the switch did nothing"
check_lines "$workdir/out/copied"
echo "ok"
