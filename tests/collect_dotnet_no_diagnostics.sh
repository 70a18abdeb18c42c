#!/usr/bin/env bash
# A .NET app started with DOTNET_EnableDiagnostics=0 (no diagnostics IPC,
# no perf map, no jitdump), as hardened images run: collect names its JIT
# frames from the runtime's memory as it samples (memory_perfmap.h), with
# no [JIT] leaf beyond 1% of the samples and the hot method's share that of
# the same app named through its IPC; the app is left with no file written.
# WebMix (ASP.NET Core under load) the same way: no [JIT] leaf beyond 1%.
# (.NET 10 only: the machine has no .NET 9 runtime to run it on.)
source "$(dirname "$0")/lib.sh"

build_hotloop

# until_past_tier_up PID: until the app has run 3 s of CPU. In its first
# second HotMethod runs as tier-0 and OSR code, whose samples skip Caller:
# the complete stacks' shares of two runs agree only past it.
until_past_tier_up() {
	until (($(cpu_ticks "$1") >= 3 * $(getconf CLK_TCK))); do
		kill -0 "$1" 2>/dev/null || fail "the app exited"
		sleep 0.2
	done
}

# The second opinion: the IPC's perf map and jitdump.
start_hotloop
until_past_tier_up "$started_pid"
"$PROFCPU" collect -pid "$started_pid" -duration 4 -o "$workdir/ipc" >/dev/null 2>&1 ||
	fail "collect failed on the app with its IPC"
kill "$started_pid"

start_hotloop DOTNET_EnableDiagnostics=0
pid=$started_pid
compgen -G "/tmp/dotnet-diagnostic-$pid-*" >/dev/null &&
	fail "the app opened its diagnostics IPC despite DOTNET_EnableDiagnostics=0"
until_past_tier_up "$pid"
"$PROFCPU" collect -pid "$pid" -duration 4 -o "$workdir/memory" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "collect failed on the app without diagnostics"; }
cat "$workdir/stderr"
grep -q "naming the JIT frames of .NET pid $pid from its runtime's memory" "$workdir/stderr" ||
	fail "collect did not say it names JIT frames from the runtime's memory"
grep "names from the runtime's memory" "$workdir/memory/profcpu.log"

folded top "$workdir/memory/folded_stacks.out" 5
assert_share "$workdir/memory/folded_stacks.out" '\[JIT\]' 0 1
assert_shares_agree ipc "$workdir/ipc/folded_stacks.out" memory "$workdir/memory/folded_stacks.out" 5 \
	';hotloop!Demo\.Program::HotMethod(;|$)' \
	';hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::Caller;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)'
# perf script's text as the perf map route writes it: the runtime's form of
# the name, the capture's map as the frame's DSO.
grep -qP '\t +[0-9a-f]+ .*\[hotloop\] Demo\.Program::HotMethod\(int32\) \(/tmp/perf-[0-9]+\.map\)$' \
	"$workdir/memory/perf_script.out" || fail "perf_script.out lacks HotMethod with its perf map DSO"

# postprocess reads the capture's map alone: the same names after the app exits.
kill "$pid"
wait "$pid" 2>/dev/null || true
rm "$workdir/memory/folded_stacks.out"
"$PROFCPU" postprocess -dir "$workdir/memory" >/dev/null 2>&1 || fail "postprocess of the capture failed"
assert_share "$workdir/memory/folded_stacks.out" '\[JIT\]' 0 1
assert_share "$workdir/memory/folded_stacks.out" ';hotloop!Demo\.Program::HotMethod(;|$)' 80 100

# Read, not asked: the app wrote no perf map or jitdump.
for file in "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump"; do
	[[ ! -e $file ]] || fail "$file appeared in an app named from its memory"
done

# A framework-heavy service under load (ASP.NET Core, tests/dotnet/WebMix):
# frames the kernel's frame-pointer chain skips but the walk finds are named
# too (4.4% of samples held a [JIT] frame when only the kernel's chain was
# looked up); what is left unnamed is stubs (not looked up yet).
build_dotnet_app WebMix
DOTNET_EnableDiagnostics=0 start_dotnet_app "$workdir/WebMix/webmix.dll" "http://127.0.0.1:$(free_port)" 40
sleep 3 # past start-up, into the steady load
"$PROFCPU" collect -pid "$started_pid" -duration 8 -F 199 -o "$workdir/web" >/dev/null 2>&1 ||
	fail "collect failed on WebMix without diagnostics"
grep "names from the runtime's memory" "$workdir/web/profcpu.log"
python3 - "$workdir/web/perf_script.out" <<'PY' || fail "more than 1% of WebMix's samples have a [JIT] leaf"
import sys
samples = jit_leaves = 0
leaf = True
for line in open(sys.argv[1]):
    if not line.startswith("\t"):
        leaf = True
        continue
    if leaf:
        samples += 1
        jit_leaves += "[JIT] ([JIT])" in line
    leaf = False
print(f"WebMix: {jit_leaves} of {samples} samples with a [JIT] leaf")
sys.exit(0 if samples >= 100 and jit_leaves <= 0.01 * samples else 1)
PY
assert_share "$workdir/web/folded_stacks.out" '\[JIT\]' 0 2
kill "$started_pid"

# --names perfmap keeps the old route: no names from memory, [JIT] leaves.
start_hotloop DOTNET_EnableDiagnostics=0
"$PROFCPU" collect -pid "$started_pid" -duration 2 --names perfmap -o "$workdir/perfmap" >/dev/null 2>&1 ||
	fail "collect --names perfmap failed"
assert_share "$workdir/perfmap/folded_stacks.out" '\[JIT\]' 50 100
"$PROFCPU" collect -pid "$started_pid" --names other -duration 1 -o "$workdir/bad" 2>"$workdir/bad-names" &&
	fail "collect accepted --names other"
grep -q "invalid --names other: give perfmap, memory or auto" "$workdir/bad-names" ||
	fail "the error does not say which routes there are: $(cat "$workdir/bad-names")"
echo PASS
