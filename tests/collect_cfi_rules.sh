#!/usr/bin/env bash
# Whole stacks through every kind of CFI rule, the same on every CPU: C
# programs built without frame pointers, profiled with the default hybrid
# walk, each beside perf record --call-graph dwarf's share in the same run.
# - OpenSSL's hand-written SHA-512, SHA-256, AES-GCM and ChaCha20 code, its
#   path forced with OPENSSL_ia32cap (docs/UNWINDING.md): with SHA-NI and
#   AVX2 off (SSSE3 and AES-NI bodies, CFA in rax, r11, rdi, rsi and DWARF
#   expressions), and with SHA-NI off alone (the AVX2 SHA bodies, whose CFI
#   keeps the CFA below the stack pointer, outside any sample's stack copy:
#   found from the realigned frame's first copy, realigned_frame.h), on
#   CPUs with AVX2 only (others run the SSSE3 bodies again: the case says
#   it is skipped), and checked to have sampled those rows.
# - Calls the dynamic loader resolves (LD_BIND_NOT=1): _dl_runtime_resolve's
#   CFA is in rbx, which _dl_fixup's frame saved: a callee-saved register
#   carried from frame to frame.
# - A signal handler: glibc's __restore_rt gives the interrupted state from
#   the ucontext on the stack, by DW_CFA_expression rules.
source "$(dirname "$0")/lib.sh"

perf record -q -o /dev/null -e cpu-clock true 2>/dev/null || perf_missing=1

# capture NAME SECONDS ENV... -- PROGRAM ARGS: profiles PROGRAM, started with
# the environment ENV, into $workdir/NAME, and perf record --call-graph
# dwarf the same process for the same time into $workdir/NAME.perf.folded.
capture() {
	local name=$1 environment=()
	shift
	while [[ $1 != -- ]]; do
		environment+=("$1")
		shift
	done
	shift
	start env "${environment[@]}" "$@" 30
	sleep 0.3
	if [[ -z ${perf_missing:-} ]]; then
		perf record -q --call-graph dwarf -F 199 -p "$started_pid" -o "$workdir/$name.perf.data" -- sleep 3 2>/dev/null &
		perf_pid=$!
	fi
	"$PROFCPU" collect -pid "$started_pid" -duration 3 -F 299 -o "$workdir/$name" >"$workdir/$name.stdout"
	[[ -z ${perf_missing:-} ]] && wait "$perf_pid"
	cp "/proc/$started_pid/maps" "$workdir/$name.maps"
	kill "$started_pid"
	cat "$workdir/$name.stdout"
	folded top "$workdir/$name/folded_stacks.out" 4
	if [[ -z ${perf_missing:-} ]]; then
		perf script -i "$workdir/$name.perf.data" 2>/dev/null |
			python3 "$tests_dir/stackcollapse_perf.py" --fold-only - >"$workdir/$name.perf.folded"
	fi
}

# perf_share NAME REGEX: perf's share of samples whose stack matches REGEX.
perf_share() {
	if [[ -n ${perf_missing:-} ]]; then
		echo "perf record cannot sample here"
	else
		echo "perf record --call-graph dwarf: $(folded share "$workdir/$1.perf.folded" "$2")%"
	fi
}

openssl_path='main;(hash_sha512|hash_sha256|seal_aes_gcm|seal_chacha20);(digest|seal);'

# SSSE3 and AES-NI bodies on every x86-64 machine: SHA-NI (leaf 7 EBX bit
# 29) and AVX2 (bit 5) off.
capture ssse3 OPENSSL_ia32cap=":~0x20000020" -- "$WORKLOAD_OPENSSL_HASHES"
assert_share "$workdir/ssse3/folded_stacks.out" "$openssl_path" 97 100
perf_share ssse3 "$openssl_path"
for function in hash_sha512 hash_sha256 seal_aes_gcm seal_chacha20; do
	assert_share "$workdir/ssse3/folded_stacks.out" "main;$function;" 2 100
done
assert_share "$workdir/ssse3/folded_stacks.out" '\[unknown\]' 0 0

# below_stack_pointer NAME: of the samples of capture NAME whose leaf is in
# libcrypto, those whose CFI row there gives the CFA by [rsp - N] (N > 0,
# below the stack pointer: only the realigned-frame rule finds it), and of
# those, the ones that reach main. Prints "ROWS REACHED LEAVES".
below_stack_pointer() {
	local library
	library=$(awk '/libcrypto\.so/ { print $6; exit }' "$workdir/$1.maps")
	readelf -wf "$library" >"$workdir/$1.libcrypto-cfi"
	python3 - "$workdir/$1.maps" "$workdir/$1/perf_script.out" "$workdir/$1.libcrypto-cfi" <<'PY'
import bisect, re, sys
maps, script, cfi = sys.argv[1:]
# The rows of each FDE, in order: "DW_CFA_advance_loc...: N to ADDRESS"
# moves the row, a DW_CFA_def_cfa* line sets its CFA.
below, start, location = [], None, 0
def close(at):
    global start
    if start is not None and at > start:
        below.append((start, at))
    start = None
for line in open(cfi):
    fde = re.search(r"FDE cie=\S+ pc=([0-9a-f]+)\.\.([0-9a-f]+)", line)
    if fde:
        close(location)
        location, end = int(fde.group(1), 16), int(fde.group(2), 16)
        continue
    advance = re.search(r"DW_CFA_advance_loc\S*: \d+ to ([0-9a-f]+)", line)
    if advance:
        location = int(advance.group(1), 16)
    elif "DW_CFA_def_cfa" in line:
        close(location)
        if re.search(r"DW_OP_breg7 \(rsp\): -\d+; DW_OP_deref", line):
            start = location
    elif not line.strip():
        close(end if start is not None else location)
below.sort()
ranges = []
for line in open(maps):
    fields = line.split()
    if len(fields) >= 6 and "libcrypto" in fields[5]:
        low, high = (int(x, 16) for x in fields[0].split("-"))
        ranges.append((low, high, int(fields[2], 16)))
leaves = rows = reached = 0
for sample in open(script).read().split("\n\n"):
    frames = [line.split() for line in sample.splitlines()[1:] if line.startswith("\t")]
    if not frames:
        continue
    address = int(frames[0][0], 16)
    for low, high, offset in ranges:
        if low <= address < high:
            leaves += 1
            # libcrypto's file offsets are its addresses (readelf -l)
            file_address = address - low + offset
            i = bisect.bisect_right(below, (file_address, float("inf"))) - 1
            if i >= 0 and below[i][0] <= file_address < below[i][1]:
                rows += 1
                reached += any(frame[1] == "main" for frame in frames)
print(rows, reached, leaves)
PY
}

# The AVX2 bodies of SHA-256 and SHA-512 (SHA-NI off): their CFI gives the
# CFA at [rsp - 8] for most of their loop, where perf's unwinder stops. A
# CPU without AVX2 runs the SSSE3 bodies of the case above instead.
if grep -qw avx2 /proc/cpuinfo; then
	capture avx2 OPENSSL_ia32cap=":~0x20000000" -- "$WORKLOAD_OPENSSL_HASHES"
	assert_share "$workdir/avx2/folded_stacks.out" "$openssl_path" 97 100
	perf_share avx2 "$openssl_path"
	for function in hash_sha512 hash_sha256; do
		assert_share "$workdir/avx2/folded_stacks.out" "main;$function;" 2 100
	done
	assert_share "$workdir/avx2/folded_stacks.out" '\[unknown\]' 0 0
	# The case holds only if the samples stopped in those rows: a fifth of
	# libcrypto's at least (the SHA loops are most of the hashing), and
	# nearly all of those reach main.
	read -r rows reached leaves < <(below_stack_pointer avx2)
	echo "avx2: $rows of $leaves samples in libcrypto stopped where the CFA is below the stack pointer; $reached of them reach main"
	((rows * 5 >= leaves && leaves > 0)) ||
		fail "avx2: $rows of $leaves samples in libcrypto were in the realigned frames' rows: the case did not run the AVX2 bodies"
	((reached * 100 >= rows * 97)) ||
		fail "avx2: only $reached of the $rows samples in the realigned frames' rows reach main"
else
	echo "skipped: the AVX2 case: this CPU has no AVX2 (OpenSSL would run the SSSE3 bodies of the case above)"
fi

# Every PLT call resolved anew by the dynamic loader.
plt_path='main;worker;call_through_plt(;|$)'
capture plt LD_BIND_NOT=1 -- "$WORKLOAD_PLT_CALLS"
assert_share "$workdir/plt/folded_stacks.out" "$plt_path" 97 100
assert_share "$workdir/plt/folded_stacks.out" "call_through_plt;_dl_runtime_resolve[a-z_]*;_dl_fixup" 3 100
perf_share plt "$plt_path"

# A signal handler's stack, through the signal frame to main.
signal_path='main;interrupted_loop;(.*;)?on_timer;spin_in_handler(;|$)'
capture signal -- "$WORKLOAD_SIGNAL_FRAMES"
assert_share "$workdir/signal/folded_stacks.out" "main;interrupted_loop(;|$)" 97 100
assert_share "$workdir/signal/folded_stacks.out" "$signal_path" 5 100
in_handler=$(folded share "$workdir/signal/folded_stacks.out" ';on_timer;spin_in_handler(;|$)')
[[ $in_handler == "$(folded share "$workdir/signal/folded_stacks.out" "$signal_path")" ]] ||
	fail "signal: only part of the handler's $in_handler% goes through the signal frame to main"
perf_share signal "$signal_path"
echo "ok"
