#!/usr/bin/env bash
# A capture keeps the kernel symbols it used (kallsyms in its folder and in
# both archives), so postprocess names kernel frames the same where
# /proc/kallsyms is hidden and when the machine runs another boot (here: an
# empty file and a made-up boot_id mounted over the real ones in a private
# mount namespace). A copy that an interrupted collect left unfinished gives
# way to /proc/kallsyms on the same boot.
source "$(dirname "$0")/lib.sh"
(($(id -u) == 0)) || skip "the test mounts over /proc files"
command -v unshare >/dev/null || skip "unshare is not installed"
grep -qv '^0000000000000000 ' /proc/kallsyms || skip "/proc/kallsyms shows no addresses here"

# dd spends its time in read() and write(): kernel frames in most samples.
start dd if=/dev/zero of=/dev/null bs=4k
"$PROFCPU" collect -pid "$started_pid" -duration 2 -o "$workdir/out" >/dev/null
kill "$started_pid"
copy=$workdir/out/kallsyms
assert_file "$copy"
head -2 "$copy" | grep -qx "# boot_id $(cat /proc/sys/kernel/random/boot_id)" ||
	fail "the copy does not say which boot it comes from"
head -2 "$copy" | grep -qx "# release $(uname -r)" || fail "the copy does not name the kernel"
[[ $(tail -1 "$copy") == "# complete" ]] || fail "the copy is not marked complete"
lines=$(grep -vc '^#' "$copy")
echo "the copy holds $lines of $(wc -l </proc/kallsyms) kallsyms lines"
((lines > 0 && lines < 5000)) || fail "the copy holds $lines lines"
tar tzf "$workdir/out/prof.tar.gz" >"$workdir/tar_members"
grep -qx 'out/kallsyms' "$workdir/tar_members" || fail "kallsyms is not in prof.tar.gz"
unzip -l "$workdir/out/prof.trace.zip" >"$workdir/zip_members"
grep -q ' prof.trace/kallsyms$' "$workdir/zip_members" || fail "kallsyms is not in prof.trace.zip"
kernel_frames=$(grep -c 'ksys_read\|ksys_write' "$workdir/out/folded_stacks.out" || true)
((kernel_frames > 0)) || fail "no named kernel frame in the capture"

touch "$workdir/empty"
echo 00000000-0000-0000-0000-000000000000 >"$workdir/boot_id"
# postprocess_with FILE_TO_HIDE REPLACEMENT DIR: postprocess DIR with
# REPLACEMENT mounted over FILE_TO_HIDE.
postprocess_with() {
	unshare --mount sh -c 'mount --bind "$2" "$1" && "$4" postprocess -dir "$3" >/dev/null' \
		sh "$1" "$2" "$3" "$PROFCPU" || fail "postprocess with $2 over $1 failed"
}

# kallsyms hidden: the same names, from the copy.
cp -r "$workdir/out" "$workdir/hidden"
postprocess_with /proc/kallsyms "$workdir/empty" "$workdir/hidden"
cmp -s "$workdir/out/folded_stacks.out" "$workdir/hidden/folded_stacks.out" ||
	fail "kernel frames are named otherwise with /proc/kallsyms hidden"
grep -q 'kernel frames named from .*/hidden/kallsyms, written when' "$workdir/hidden/profcpu.log" ||
	fail "the log does not say the names come from the copy"

# The control: without the copy the same postprocess loses the names.
cp -r "$workdir/out" "$workdir/no_copy"
rm "$workdir/no_copy/kallsyms"
postprocess_with /proc/kallsyms "$workdir/empty" "$workdir/no_copy"
grep -q 'ksys_read\|ksys_write' "$workdir/no_copy/folded_stacks.out" &&
	fail "kernel frames named without the copy: the test shows nothing"

# Another boot: the copy names the frames, also where this kernel would
# (its names marked to tell them apart).
cp -r "$workdir/out" "$workdir/rebooted"
sed -i '/^#/!s/^\([0-9a-f]* . [^\t]*\)/\1_copied/' "$workdir/rebooted/kallsyms"
cp -r "$workdir/rebooted" "$workdir/interrupted"
postprocess_with /proc/sys/kernel/random/boot_id "$workdir/boot_id" "$workdir/rebooted"
grep -q 'this machine runs .*boot 00000000-0000' "$workdir/rebooted/profcpu.log" ||
	fail "the log does not say the capture came from another boot"
sed 's/_copied//g' "$workdir/rebooted/folded_stacks.out" |
	cmp -s - "$workdir/out/folded_stacks.out" ||
	fail "after a reboot kernel frames are not named from the copy"
grep -q 'ksys_read_copied\|ksys_write_copied' "$workdir/rebooted/folded_stacks.out" ||
	fail "after a reboot the names do not come from the copy"

# The same boot, a copy without its last line: the names of /proc/kallsyms.
sed -i '$d' "$workdir/interrupted/kallsyms"
"$PROFCPU" postprocess -dir "$workdir/interrupted" >/dev/null
cmp -s "$workdir/out/folded_stacks.out" "$workdir/interrupted/folded_stacks.out" ||
	fail "an unfinished copy named kernel frames on the boot that made it"
true
