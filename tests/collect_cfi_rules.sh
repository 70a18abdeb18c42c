#!/usr/bin/env bash
# Whole stacks through every kind of CFI rule, the same on every CPU: C
# programs built without frame pointers, profiled with the default hybrid
# walk, each beside perf record --call-graph dwarf's share in the same run.
# - OpenSSL's hand-written SHA-512, SHA-256, AES-GCM and ChaCha20 code, its
#   path forced with OPENSSL_ia32cap (docs/UNWINDING.md): with SHA-NI and
#   AVX2 off (SSSE3 and AES-NI bodies, CFA in rax, r11, rdi, rsi and DWARF
#   expressions), and with SHA-NI off alone (the AVX2 SHA bodies, whose CFI
#   keeps the CFA below the stack pointer, outside any sample's stack copy:
#   found from the realigned frame's first copy, realigned_frame.h).
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

# The AVX2 bodies of SHA-256 and SHA-512 (SHA-NI off): their CFI gives the
# CFA at [rsp - 8] for most of their loop, where perf's unwinder stops.
capture avx2 OPENSSL_ia32cap=":~0x20000000" -- "$WORKLOAD_OPENSSL_HASHES"
assert_share "$workdir/avx2/folded_stacks.out" "$openssl_path" 97 100
perf_share avx2 "$openssl_path"
for function in hash_sha512 hash_sha256; do
	assert_share "$workdir/avx2/folded_stacks.out" "main;$function;" 2 100
done
assert_share "$workdir/avx2/folded_stacks.out" '\[unknown\]' 0 0

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
