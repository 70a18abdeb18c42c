#!/usr/bin/env bash
# End-to-end tests of symbols/ on real ELF files: a library built here with
# -g and split as the .NET build splits libcoreclr.so (objcopy
# --only-keep-debug, --strip-unneeded, --add-gnu-debuglink), its debug file
# put in each place the search looks, the machine's own libcoreclr.so, a C++
# library, a symbol server on 127.0.0.1, a target-root escape, malformed ELF
# files. Exit 0 pass, 1 fail, 77 skip.
set -uo pipefail

tool=${NATIVE_SYMBOLS_TOOL:?set NATIVE_SYMBOLS_TOOL to the native_symbols_tool program}
sources=$(cd "$(dirname "$0")/native_symbols" && pwd)
for program in gcc g++ objcopy readelf nm python3; do
	command -v "$program" >/dev/null || {
		echo "SKIP: $program is missing"
		exit 77
	}
done

work=$(mktemp -d /tmp/profcpu-native-symbols.XXXXXX)
server_pid=
cleanup() {
	[[ -n $server_pid ]] && kill "$server_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
unset PROFCPU_SYMBOL_PATH DEBUGINFOD_URLS
export XDG_CACHE_HOME=$work/xdg-cache

failures=0
pass() { echo "ok: $1"; }
fail() {
	echo "FAIL: $1"
	failures=$((failures + 1))
}

# expect NAME PATTERN TEXT: TEXT must match the extended regex PATTERN.
expect() {
	if grep -qE -- "$2" <<<"$3"; then pass "$1"; else
		fail "$1: no /$2/ in:"
		sed 's/^/    /' <<<"$3"
	fi
}
refuse() {
	if grep -qE -- "$2" <<<"$3"; then
		fail "$1: unexpected /$2/ in:"
		sed 's/^/    /' <<<"$3"
	else pass "$1"; fi
}

# file_offset ELF SYMBOL [DELTA]: the file offset of SYMBOL+DELTA, as a
# mapping of ELF gives it, through its PT_LOAD headers.
file_offset() {
	local elf=$1 symbol=$2 delta=${3:-0} value address type offset virtual physical size rest
	value=$(nm "$elf" | awk -v s="$symbol" '$3 == s { print $1; exit }')
	[[ -n $value ]] || { echo "no $symbol in $elf" >&2; return 1; }
	address=$((16#$value + delta))
	while read -r type offset virtual physical size rest; do
		[[ $type == LOAD ]] || continue
		if ((address >= virtual && address < virtual + size)); then
			printf '%x\n' $((address - virtual + offset))
			return
		fi
	done < <(readelf -lW "$elf")
}

# lookup OPTIONS... -- PATH OFFSET...: the names, then the log.
lookup() { "$tool" "$@" 2>&1; }

build_id_of() { readelf -nW "$1" | awk '/Build ID/ { print $NF }'; }

# build_split NAME CFLAGS...: builds $work/build/NAME/libdemo.so from demo.c,
# keeps the unstripped copy as libdemo.full.so, and splits the debug
# information into libdemo.so.dbg.
build_split() {
	local dir=$work/build/$1
	shift
	mkdir -p "$dir"
	gcc -g -O1 -shared -fPIC "$@" -o "$dir/libdemo.so" "$sources/demo.c" || return 1
	cp "$dir/libdemo.so" "$dir/libdemo.full.so"
	(cd "$dir" && objcopy --only-keep-debug libdemo.so libdemo.so.dbg &&
		objcopy --strip-unneeded libdemo.so &&
		objcopy --add-gnu-debuglink=libdemo.so.dbg libdemo.so)
}

build_split main -Wl,--build-id || { fail "building the demo library"; exit 1; }
build_split other -Wl,--build-id -DVARIANT=2
build_split no_build_id -Wl,--build-id=none
built=$work/build/main
internal=$(file_offset "$built/libdemo.full.so" internal_helper 4)
hidden=$(file_offset "$built/libdemo.full.so" hidden_worker 2)
exported=$(file_offset "$built/libdemo.full.so" exported_entry 1)
hex=$(build_id_of "$built/libdemo.so")

# new_root NAME: an empty fake target root with the stripped library at
# /app/libdemo.so.
new_root() {
	local root=$work/roots/$1
	mkdir -p "$root/app"
	cp "$built/libdemo.so" "$root/app/"
	echo "$root"
}
names() { lookup "$@" /app/libdemo.so "$internal" /app/libdemo.so "$hidden" /app/libdemo.so "$exported"; }

# --- Without a debug file only the exported function is named.
root=$(new_root none)
out=$(names --root "$root")
expect "stripped: exported function named" "libdemo.so $exported: exported_entry\+0x1$" "$out"
expect "stripped: internal function unnamed" "libdemo.so $internal: \?\?" "$out"
expect "stripped: hidden function unnamed" "libdemo.so $hidden: \?\?" "$out"
expect "stripped: log names the missing debug file and how to get it" \
	"/app/libdemo.so \(build-id $hex\) has no debug information: libdemo.so.dbg was not found.*dotnet-symbol --symbols.*--symbol-server" "$out"

# A library of the distribution gets the distribution's hint, not dotnet-symbol's.
mkdir -p "$root/usr/lib/x86_64-linux-gnu"
cp "$built/libdemo.so" "$root/usr/lib/x86_64-linux-gnu/libc.so.6"
out=$(lookup --root "$root" /usr/lib/x86_64-linux-gnu/libc.so.6 "$exported")
expect "stripped libc: log points to libc6-dbg" "libc.so.6 \(build-id $hex\) has no debug information: .*apt-get install libc6-dbg" "$out"
refuse "stripped libc: no dotnet-symbol hint" "dotnet-symbol" "$out"

# --- Each search location, inside the fake root.
check_found() { # LABEL ROOT_OR_EMPTY OPTIONS...
	local label=$1
	shift
	out=$(names "$@")
	expect "$label: internal function named" "libdemo.so $internal: internal_helper\+0x4$" "$out"
	expect "$label: hidden function named" "libdemo.so $hidden: hidden_worker\+0x2$" "$out"
	expect "$label: exported function named" "libdemo.so $exported: exported_entry\+0x1$" "$out"
}
root=$(new_root beside)
cp "$built/libdemo.so.dbg" "$root/app/"
check_found "beside (.dbg)" --root "$root"
expect "beside: log says where" "symbols from /app/libdemo.so.dbg \(in the target's root\)" "$out"

root=$(new_root beside_debug)
cp "$built/libdemo.so.dbg" "$root/app/libdemo.so.debug"
check_found "beside (.debug)" --root "$root"

root=$(new_root dot_debug)
mkdir -p "$root/app/.debug" && cp "$built/libdemo.so.dbg" "$root/app/.debug/"
check_found "debuglink in .debug/" --root "$root"

root=$(new_root usr_lib_debug)
mkdir -p "$root/usr/lib/debug/app" && cp "$built/libdemo.so.dbg" "$root/usr/lib/debug/app/"
check_found "debuglink under /usr/lib/debug/<dir>/" --root "$root"

root=$(new_root build_id_tree)
mkdir -p "$root/usr/lib/debug/.build-id/${hex:0:2}"
cp "$built/libdemo.so.dbg" "$root/usr/lib/debug/.build-id/${hex:0:2}/${hex:2}.debug"
check_found "/usr/lib/debug/.build-id tree" --root "$root"

root=$(new_root flat_symbols)
mkdir -p "$work/flat" && cp "$built/libdemo.so.dbg" "$work/flat/"
check_found "--symbols flat folder" --root "$root" --symbols "$work/empty" --symbols "$work/flat"

mkdir -p "$work/tree/.build-id/${hex:0:2}"
cp "$built/libdemo.so.dbg" "$work/tree/.build-id/${hex:0:2}/${hex:2}.debug"
out=$(PROFCPU_SYMBOL_PATH=$work/empty:$work/tree names --root "$root")
expect "PROFCPU_SYMBOL_PATH build-id tree" "libdemo.so $internal: internal_helper\+0x4$" "$out"

# The target's /usr/lib/debug is searched in our own file system too: a path
# of the target's layout that exists only here.
side=$work/side
mkdir -p "$side" "$work/roots/own/$side"
cp "$built/libdemo.so" "$work/roots/own/$side/" && cp "$built/libdemo.so.dbg" "$side/"
out=$(lookup --root "$work/roots/own" "$side/libdemo.so" "$internal")
expect "beside, in the profiler's own file system" "internal_helper\+0x4$" "$out"

# Without a target root: our own file system.
cp "$built/libdemo.so" "$side/"
out=$(lookup "$side/libdemo.so" "$internal")
expect "no target root" "internal_helper\+0x4$" "$out"

# --- A debug file of another build is refused.
root=$(new_root mismatch)
cp "$work/build/other/libdemo.so.dbg" "$root/app/"
out=$(names --root "$root")
expect "mismatched build-id: refused with a reason" \
	"ignoring /app/libdemo.so.dbg \(in the target's root\): its build-id \([0-9a-f]+\) is not the one of /app/libdemo.so \($hex\)" "$out"
expect "mismatched build-id: internal function unnamed" "libdemo.so $internal: \?\?" "$out"

# --- No build-id: the debuglink CRC decides.
nb=$work/build/no_build_id
nb_internal=$(file_offset "$nb/libdemo.full.so" internal_helper)
mkdir -p "$work/roots/crc/app" "$work/roots/crc_bad/app"
cp "$nb/libdemo.so" "$nb/libdemo.so.dbg" "$work/roots/crc/app/"
out=$(lookup --root "$work/roots/crc" /app/libdemo.so "$nb_internal")
expect "no build-id, CRC matches: named" "internal_helper\+0x0$" "$out"
cp "$nb/libdemo.so" "$work/roots/crc_bad/app/"
cp "$nb/libdemo.so.dbg" "$work/roots/crc_bad/app/libdemo.so.dbg"
printf 'x' >>"$work/roots/crc_bad/app/libdemo.so.dbg"
out=$(lookup --root "$work/roots/crc_bad" /app/libdemo.so "$nb_internal")
expect "no build-id, CRC differs: refused" "ignoring .*CRC-32 differs" "$out"
refuse "no build-id, CRC differs: unnamed" "internal_helper" "$out"

# --- Inline frames from DWARF.
user=$(nm "$built/libdemo.full.so" | awk '$3 == "exported_inline_user" { print $1 }')
user_size=$(readelf -sW "$built/libdemo.full.so" | awk '$8 == "exported_inline_user" { print $3; exit }')
pairs=()
for ((delta = 0; delta < user_size; delta += 2)); do
	pairs+=(/app/libdemo.so "$(file_offset "$built/libdemo.full.so" exported_inline_user "$delta")")
done
out=$(lookup --inline --root "$work/roots/beside" "${pairs[@]}")
expect "inline frames: inlined function, then its caller" \
	": inlined_square\+0x[0-9a-f]+ \(inlined\); exported_inline_user\+0x[0-9a-f]+$" "$out"
out=$(lookup --root "$work/roots/beside" "${pairs[@]}")
refuse "no inline frames unless asked" "inlined" "$out"

# --- Source lines from the debug file's line table, as addr2line reads
# them: the innermost line alone, or with --inline each inlined call's line
# in its caller (addr2line -i).
lines_of() { grep -oE ' at [^ ;]+' | sed -E 's|.*/||' | paste -sd' '; }
ours=() theirs=()
start=$(nm "$built/libdemo.full.so" | awk '$3 == "exported_inline_user" { print $1 }')
for ((delta = 0; delta < user_size; delta += 2)); do
	ours+=("$("$tool" --inline --lines --root "$work/roots/beside" /app/libdemo.so \
		"$(file_offset "$built/libdemo.full.so" exported_inline_user "$delta")" 2>/dev/null |
		lines_of)")
	theirs+=("$(addr2line -i -e "$built/libdemo.full.so" "$(printf '%x' $((0x$start + delta)))" |
		sed -E 's|.*/||' | paste -sd' ')")
done
[[ "${ours[*]}" == "${theirs[*]}" && "${ours[0]}" == "demo.c:"*" demo.c:"* ]] &&
	pass "lines: inlined calls' lines as addr2line -i gives them" ||
	fail "lines: ours '${ours[*]}', addr2line's '${theirs[*]}'"
out=$(lookup --lines --root "$work/roots/beside" /app/libdemo.so "$internal")
expect "lines: the innermost line without --inline" \
	"internal_helper\+0x4 at [^ ]*/demo.c:$(addr2line -e "$built/libdemo.full.so" \
		"$(printf '%x' $((0x$(nm "$built/libdemo.full.so" | awk '$3 == "internal_helper" { print $1 }') + 4)))" |
		sed -E 's/.*://; s/ .*//')$" "$out"
out=$(lookup --lines --root "$(new_root lines_none)" /app/libdemo.so "$exported")
refuse "lines: none without DWARF" " at " "$out"

# --- C++: demangled names.
g++ -g -O1 -shared -fPIC -o "$work/libdemo_cpp.so" "$sources/demo.cpp"
spin=$(nm "$work/libdemo_cpp.so" | awk '$3 ~ /^_ZN4demo6WidgetIiE4spinEi$/ { print $3; exit }')
out=$(lookup "$work/libdemo_cpp.so" "$(file_offset "$work/libdemo_cpp.so" "$spin" 3)")
expect "C++: demangled" "demo::Widget<int>::spin\(int\)\+0x3$" "$out"

# --- Target-root escape: absolute and ".." symlinks inside the fake root
# must resolve inside it, never to the same path in our file system.
outside=$work/outside
mkdir -p "$outside" "$work/roots/escape/$outside" "$work/roots/escape/app"
gcc -shared -fPIC -DPLACE=outside_function -o "$outside/libplace.so" "$sources/place.c"
gcc -shared -fPIC -DPLACE=inside_function -o "$work/roots/escape/$outside/libplace.so" "$sources/place.c"
ln -s "$outside/libplace.so" "$work/roots/escape/app/absolute.so"
ln -s "../../../../../../../..$outside/libplace.so" "$work/roots/escape/app/dotdot.so"
offset=$(file_offset "$outside/libplace.so" outside_function)
out=$(lookup --root "$work/roots/escape" /app/absolute.so "$offset" /app/dotdot.so "$offset" \
	/../../..$outside/libplace.so "$offset")
refuse "escape: nothing resolved outside the root" "outside_function" "$out"
expect "escape: absolute symlink resolved inside the root" "absolute.so $offset: inside_function" "$out"
expect "escape: .. symlink resolved inside the root" "dotdot.so $offset: inside_function" "$out"

# --- Malformed ELF files: no names, no crash.
bad=$work/bad
mkdir -p "$bad"
head -c 3000 "$built/libdemo.full.so" >"$bad/truncated.so"
head -c 4096 /dev/urandom >"$bad/garbage.so"
printf '\177ELF' | cat - <(head -c 4096 /dev/urandom) >"$bad/garbage_magic.so"
mkfifo "$bad/fifo.so"
python3 - "$built/libdemo.full.so" "$bad" <<'PY'
import random, struct, sys
data = open(sys.argv[1], "rb").read()
def write(name, blob):
    open(f"{sys.argv[2]}/{name}", "wb").write(blob)
# e_shnum (offset 60) and e_phnum (56) at their maximum, e_shoff past the end.
huge = bytearray(data); struct.pack_into("<H", huge, 60, 0xFFFF); write("huge_shnum.so", huge)
huge = bytearray(data); struct.pack_into("<H", huge, 56, 0xFFFF); write("huge_phnum.so", huge)
huge = bytearray(data); struct.pack_into("<Q", huge, 40, len(data) - 8); write("shoff_at_end.so", huge)
# e_shnum 0: the count comes from section 0's sh_size, set huge.
huge = bytearray(data); shoff = struct.unpack_from("<Q", data, 40)[0]
struct.pack_into("<H", huge, 60, 0); struct.pack_into("<Q", huge, shoff + 32, 1 << 40)
write("shnum_in_section0.so", huge)
random.seed(7)
for i in range(60):
    mutated = bytearray(data)
    for _ in range(random.randint(1, 40)):
        mutated[random.randrange(len(mutated))] = random.randrange(256)
    write(f"mutated{i}.so", mutated)
PY
pairs=()
for file in "$bad"/*.so; do pairs+=("$file" "$internal" "$file" 0); done
out=$(timeout 60 "$tool" "${pairs[@]}" 2>&1)
status=$?
expect "malformed: the tool finished" "truncated.so" "$out"
[[ $status == 0 ]] && pass "malformed: no crash" || fail "malformed: exit status $status"
expect "malformed: FIFO not read" "fifo.so .*: \?\?" "$out"
expect "malformed: garbage unnamed" "garbage.so $internal: \?\?" "$out"

# --- The machine's libcoreclr.so: exported names, build-id, missing .dbg.
coreclr=$(ls /usr/share/dotnet/shared/Microsoft.NETCore.App/*/libcoreclr.so \
	/usr/lib/dotnet/shared/Microsoft.NETCore.App/*/libcoreclr.so 2>/dev/null | head -1)
if [[ -n $coreclr ]]; then
	symbol=$(readelf -sW --dyn-syms "$coreclr" | awk '$8 ~ /^coreclr_initialize/ { print $2; exit }')
	size=$(readelf -lW "$coreclr")
	offset=
	while read -r type file_start virtual physical file_size rest; do
		[[ $type == LOAD ]] || continue
		address=$((16#$symbol + 16))
		((address >= virtual && address < virtual + file_size)) &&
			offset=$(printf '%x' $((address - virtual + file_start)))
	done <<<"$size"
	out=$(lookup "$coreclr" "$offset")
	expect "libcoreclr.so: exported function named" "coreclr_initialize\+0x10$" "$out"
	expect "libcoreclr.so: build-id read, missing .dbg and how to get it" \
		"libcoreclr.so \(build-id $(build_id_of "$coreclr")\) has no debug information: libcoreclr.so.dbg was not found.*dotnet-symbol --symbols -o DIR" "$out"
else
	echo "skip: no libcoreclr.so on this machine"
fi

# --- Kernel symbols.
kernel=$(awk '$2 == "T" && $1 !~ /^0+$/ { print $1, $3; exit }' /proc/kallsyms)
if [[ -n $kernel ]]; then
	out=$(lookup --kernel "$(printf '%x' $((16#${kernel%% *} + 0)))")
	expect "kernel: named from kallsyms" ": ${kernel#* }\+0x0$|: [A-Za-z_].*\+0x0$" "$out"
fi

# --- Symbol server on 127.0.0.1: Microsoft key layout, then debuginfod's.
# serve FOLDER: python's HTTP server over FOLDER, in place of a real symbol
# server, which this machine cannot reach; /moved/PATH answers 302 to /PATH,
# with a body of its own; /short/PATH promises 1000 bytes and sends 14.
# Sets $port.
serve() {
	port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	python3 - "$port" "$1" >/dev/null 2>&1 <<'PY' &
import functools, http.server, sys

class Handler(http.server.SimpleHTTPRequestHandler):
    def do_GET(self):
        if self.path.startswith("/short/"):
            self.send_response(200)
            self.send_header("Content-Length", "1000")
            self.end_headers()
            return self.wfile.write(b"\x7fELF cut short")
        if not self.path.startswith("/moved/"):
            return super().do_GET()
        body = b"moved: this is not the file"
        self.send_response(302)
        self.send_header("Location", self.path[len("/moved"):])
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

handler = functools.partial(Handler, directory=sys.argv[2])
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), handler).serve_forever()
PY
	server_pid=$!
	for _ in $(seq 50); do
		python3 -c "import socket; socket.create_connection(('127.0.0.1', $port), 0.1)" 2>/dev/null && return
		sleep 0.1
	done
}
served=$work/served
mkdir -p "$served/_.debug/elf-buildid-sym-$hex"
cp "$built/libdemo.so.dbg" "$served/_.debug/elf-buildid-sym-$hex/_.debug"
serve "$served"
root=$(new_root served)
check_found "symbol server download" --root "$root" --symbol-server "http://127.0.0.1:$port/" --cache "$work/cache"
expect "symbol server: download logged" "downloaded its debug file from http://127.0.0.1:$port" "$out"
[[ -f $work/cache/_.debug/elf-buildid-sym-$hex/_.debug ]] && pass "symbol server: cached" ||
	fail "symbol server: nothing in the cache"
check_found "symbol server redirect" --root "$root" --symbol-server "http://127.0.0.1:$port/moved" \
	--cache "$work/redirected"
cmp -s "$work/redirected/_.debug/elf-buildid-sym-$hex/_.debug" "$built/libdemo.so.dbg" &&
	pass "symbol server redirect: the file itself cached" ||
	fail "symbol server redirect: the cached file is not the debug file"
out=$(names --root "$root" --symbol-server "http://127.0.0.1:$port/short" --cache "$work/short")
expect "symbol server cut short: said" "no debug file .* \(the answer was cut short after 14 of 1000 bytes" "$out"
[[ ! -e $work/short/_.debug/elf-buildid-sym-$hex/_.debug ]] && pass "symbol server cut short: not cached" ||
	fail "symbol server cut short: a partial file was cached"
other_root=$(new_root served_404)
cp "$work/build/other/libdemo.so" "$other_root/app/libdemo.so"
out=$(lookup --root "$other_root" --symbol-server "http://127.0.0.1:$port" --cache "$work/cache" /app/libdemo.so 0)
expect "symbol server 404: one log line" "no debug file for build-id [0-9a-f]+ on http://127.0.0.1:$port \(HTTP 404\)" "$out"
kill "$server_pid" && wait "$server_pid" 2>/dev/null
server_pid=
check_found "symbol server stopped: cache used" --root "$root" --symbol-server "http://127.0.0.1:$port" --cache "$work/cache"
refuse "symbol server stopped: no request made" "no debug file" "$out"
out=$(names --root "$root" --symbol-server "http://127.0.0.1:$port" --cache "$work/empty-cache")
expect "symbol server unreachable: one log line" "no debug file .* on http://127.0.0.1:$port \(.*not asked again" "$out"
[[ $(grep -c 'no debug file' <<<"$out") == 1 ]] && pass "symbol server unreachable: said once" ||
	fail "symbol server unreachable: said $(grep -c 'no debug file' <<<"$out") times"

mkdir -p "$served/buildid/$hex"
cp "$built/libdemo.so.dbg" "$served/buildid/$hex/debuginfo"
rm -r "$served/_.debug"
serve "$served"
out=$(DEBUGINFOD_URLS="http://127.0.0.1:$port" names --root "$root")
expect "DEBUGINFOD_URLS: debuginfod layout" "libdemo.so $internal: internal_helper\+0x4$" "$out"
[[ -f $XDG_CACHE_HOME/profcpu/symbols/_.debug/elf-buildid-sym-$hex/_.debug ]] &&
	pass "DEBUGINFOD_URLS: default cache folder" || fail "DEBUGINFOD_URLS: not cached"

echo "native_symbols: $failures failed"
((failures == 0))
