#!/usr/bin/env bash
# A shared library split as the .NET build splits libcoreclr.so (objcopy
# --only-keep-debug, --strip-unneeded, --add-gnu-debuglink), loaded by a busy
# program and profiled with profcpu collect: its internal function is named
# only when the matching .dbg is found, and the log says how to get it.
source "$(dirname "$0")/lib.sh"

command -v objcopy >/dev/null || skip "objcopy (binutils) is not installed"
cd "$workdir"
cat >lib.c <<'C'
static volatile unsigned long sink;
__attribute__((noinline)) static void internal_spin(void)
{
	for (unsigned long i = 0; i < 100000000; i++)
		sink += i;
}
void lib_entry(void)
{
	internal_spin();
}
C
cat >main.c <<'C'
void lib_entry(void);
int main(void)
{
	for (;;)
		lib_entry();
}
C
build_library() { # OUTPUT [CFLAGS...]
	local output=$1
	shift
	gcc -shared -fPIC -g -O1 -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer "$@" \
		-o "$output" lib.c
}
mkdir app
build_library app/libsplit.so
objcopy --only-keep-debug app/libsplit.so libsplit.so.dbg
objcopy --strip-unneeded app/libsplit.so
objcopy --add-gnu-debuglink=libsplit.so.dbg app/libsplit.so
gcc -O0 -fno-omit-frame-pointer -o app/busy main.c -Lapp -lsplit -Wl,-rpath,'$ORIGIN'
nm app/libsplit.so 2>&1 | grep -q internal_spin && fail "the stripped library still names internal_spin"

profile() { # NAME [OPTIONS...]: profiles app/busy into NAME/
	local name=$1
	shift
	start app/busy
	"$PROFCPU" collect -pid "$started_pid" -duration 1 -F 499 -o "$name" "$@" 2>/dev/null
	kill "$started_pid"
	folded top "$name/folded_stacks.out" 1
}

# No debug file anywhere: the frame is the module, and the log says what to do.
profile missing
assert_share missing/folded_stacks.out 'lib_entry;\[libsplit.so\]$' 90 100
grep -q 'libsplit.so' missing/profcpu.log && grep -q 'dotnet-symbol' missing/profcpu.log ||
	fail "the log does not say libsplit.so lacks debug information and how to get it"

# Beside the library, as dotnet-symbol or a build puts it.
cp libsplit.so.dbg app/
profile beside
assert_share beside/folded_stacks.out 'lib_entry;internal_spin$' 90 100
rm app/libsplit.so.dbg

# In a folder named with --symbols.
mkdir symbols && cp libsplit.so.dbg symbols/
profile given --symbols "$workdir/symbols"
assert_share given/folded_stacks.out 'lib_entry;internal_spin$' 90 100

# A .dbg of another build (other build-id) is refused.
build_library other.so -DANOTHER_BUILD=1 -Wl,--build-id=sha1 -Wa,--defsym,another=1
objcopy --only-keep-debug other.so app/libsplit.so.dbg
profile mismatched
assert_share mismatched/folded_stacks.out 'internal_spin' 0 0
grep -q 'ignoring .*libsplit.so.dbg: its build-id .* is not the one of' mismatched/profcpu.log ||
	fail "the log does not say why the mismatched .dbg was refused"

# From a symbol server, by build-id, in Microsoft's key layout
# (_.debug/elf-buildid-sym-<build-id>/_.debug). Python's HTTP server on
# loopback stands in for https://msdl.microsoft.com/download/symbols, which
# this machine cannot reach; the request and the layout are the same.
rm app/libsplit.so.dbg
build_id=$(readelf -nW app/libsplit.so | awk '/Build ID/ { print $NF }')
[[ ${#build_id} == 40 ]] || fail "libsplit.so has no 20-byte build-id: '$build_id'"
mkdir -p "served/_.debug/elf-buildid-sym-$build_id"
cp libsplit.so.dbg "served/_.debug/elf-buildid-sym-$build_id/_.debug"
port=$(free_port)
start python3 -m http.server --bind 127.0.0.1 "$port" --directory served
until python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null; do sleep 0.1; done
export XDG_CACHE_HOME=$workdir/cache
profile served --symbol-server "http://127.0.0.1:$port/"
assert_share served/folded_stacks.out 'lib_entry;internal_spin$' 90 100
grep -q "downloaded its debug file from http://127.0.0.1:$port" served/profcpu.log ||
	fail "the log does not say the debug file came from the server"
[[ -f $XDG_CACHE_HOME/profcpu/symbols/_.debug/elf-buildid-sym-$build_id/_.debug ]] ||
	fail "the downloaded debug file was not cached"

# From a debuginfod server named by DEBUGINFOD_URLS, into an empty cache: the
# replay downloads the file and says so. The walk made while sampling must
# never download (a download would stall the sampling loop): had it done so,
# the replay would find the file cached and download nothing.
mkdir -p "served/buildid/$build_id"
cp libsplit.so.dbg "served/buildid/$build_id/debuginfo"
export XDG_CACHE_HOME=$workdir/cache-debuginfod
# The server's URL carries a user and password: the log shows it without.
DEBUGINFOD_URLS="http://reader:s3cret@127.0.0.1:$port" profile debuginfod
assert_share debuginfod/folded_stacks.out 'lib_entry;internal_spin$' 90 100
grep -q "downloaded its debug file from http://127.0.0.1:$port" debuginfod/profcpu.log ||
	fail "the debug file was not downloaded after the sampling (the walk made while sampling downloaded it?)"
! grep -rq s3cret debuginfod/ || fail "the symbol server's password was written"
