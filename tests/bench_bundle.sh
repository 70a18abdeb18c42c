#!/usr/bin/env bash
# scripts/bench-bundle, what a lent machine of many cores runs the cost
# benchmarks from (scripts/bench-device): its programs must run where none
# of their libraries is installed. In a container holding busybox alone,
# profcpu collect -a and perf record + perf script run from the bundle;
# the libraries profcpu opens when it first needs them resolve inside it.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"
command -v patchelf >/dev/null || skip "patchelf is not installed (scripts/install-deps)"

build=$(cd "$(dirname "$PROFCPU")/.." && pwd)
link=$workdir/link
"$tests_dir/../scripts/bench-bundle" "$workdir/bundle" "$build" "$link" >"$workdir/bundle.log" ||
	{ cat "$workdir/bundle.log"; fail "scripts/bench-bundle failed"; }
cat "$workdir/bundle.log"
ln -s "$workdir/bundle" "$link"

# What profcpu opens on demand, with everything it loads, from the bundle.
for library in libwget.so.0 libmicrohttpd.so.12; do
	"$link/lib/ld-linux-x86-64.so.2" --library-path "$link/lib" --list "$link/lib/$library" \
		>"$workdir/$library.list" || fail "$library does not load from the bundle"
	! grep -v "$link/lib/\|linux-vdso" "$workdir/$library.list" ||
		fail "$library loads a library from outside the bundle"
done

# busybox and its libraries: the container's whole root.
root=$workdir/root
install -D /bin/busybox "$root/bin/busybox"
install_libraries "$root" /bin/busybox
for applet in sh sleep grep; do ln -s busybox "$root/bin/$applet"; done
install -d -m 1777 "$root/tmp"
import_image localhost/busybox-only "$root"
run --rm --privileged -e ASAN_OPTIONS=detect_leaks=0 -v "$workdir/bundle:$link:ro" \
	localhost/busybox-only sh -c "
	cd /tmp &&
	$link/src/profcpu collect -a -duration 1 -o out &&
	$link/bin/perf record -q -a -g -o perf.data -- sleep 1 &&
	$link/bin/perf script -i perf.data | grep -c cpu-clock" >"$workdir/run.log" 2>&1 ||
	{ cat "$workdir/run.log"; fail "the bundle's programs do not run in the bare container"; }
cat "$workdir/run.log"
grep -qE 'profcpu: [1-9][0-9]* samples in' "$workdir/run.log" || fail "profcpu collected no sample"
(($(tail -1 "$workdir/run.log") > 0)) || fail "perf script printed no sample"
echo ok
