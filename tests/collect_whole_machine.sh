#!/usr/bin/env bash
# profcpu collect -a: two unrelated processes, a C workload and a .NET app,
# each named in its own stacks (the .NET one from its own perf map, found
# through its root; a second one without a perf map from its runtime's
# memory), folded under NAME-PID, in shares that follow the CPU
# time each used while sampling (the machine is shared: wide margins). On
# the machine left idle, the idle task and kernel threads count as rooted.
source "$(dirname "$0")/lib.sh"

build_hotloop
start_hotloop DOTNET_PerfMapEnabled=1
dotnet_pid=$started_pid
start "$WORKLOAD_SPLIT" 60
split_pid=$started_pid
# A second .NET app with no perf map, in a cgroup of its own so that
# --enable-perfmaps below talks to no process but the test's.
make_test_cgroup
start_hotloop sh -c "echo \$\$ >'$test_cgroup/cgroup.procs' && exec \"\$0\" \"\$@\""
quiet_pid=$started_pid
sleep 1 # let tiered compilation settle

dotnet_before=$(cpu_ticks "$dotnet_pid")
split_before=$(cpu_ticks "$split_pid")
"$PROFCPU" collect -a -duration 5 -F 199 -o "$workdir/out" 2>"$workdir/stderr" ||
	{ cat "$workdir/stderr"; fail "profcpu collect -a failed"; }
dotnet_ticks=$(($(cpu_ticks "$dotnet_pid") - dotnet_before))
split_ticks=$(($(cpu_ticks "$split_pid") - split_before))
grep -q "sampling every CPU" "$workdir/stderr" || fail "no 'sampling every CPU' line"

out=$workdir/out/folded_stacks.out
folded top "$out" 6
dotnet_samples=$(folded count "$out" "^dotnet-$dotnet_pid;")
split_samples=$(folded count "$out" "^workload_split-$split_pid;")
echo "samples: dotnet $dotnet_samples, workload_split $split_samples;" \
	"CPU ticks: dotnet $dotnet_ticks, workload_split $split_ticks"
((dotnet_samples >= 20 && split_samples >= 20)) || fail "a process is missing from the capture"
# Each named in its own stacks: the JIT method from its perf map, the C
# functions from its ELF symbols.
hot=$(folded count "$out" "^dotnet-$dotnet_pid;(.*;)?hotloop!Demo\.Program::Main;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)")
((2 * hot >= dotnet_samples)) || fail "only $hot of $dotnet_samples .NET samples name HotMethod under Main"
spin=$(folded count "$out" "^workload_split-$split_pid;.*;worker;path_[abc];spin_(sixty|thirty|ten)$")
((2 * spin >= split_samples)) || fail "only $spin of $split_samples C samples name worker;path;spin"
# The ratio of samples follows the ratio of CPU time (within a factor 1.5).
python3 -c "
samples = $split_samples / $dotnet_samples
cpu = $split_ticks / max($dotnet_ticks, 1)
print(f'samples ratio {samples:.2f}, CPU ratio {cpu:.2f}')
raise SystemExit(0 if cpu / 1.5 <= samples <= cpu * 1.5 else 1)" ||
	fail "the samples of the two processes do not follow their CPU time"
# Perf maps stay as the processes have them unless asked for: the .NET
# app without one is named from its runtime's memory, nothing written in it.
quiet_hot="^dotnet-$quiet_pid;(.*;)?hotloop!Demo\.Program::HotMethod(;|$)"
[[ ! -e /tmp/perf-$quiet_pid.map && ! -e /tmp/jit-$quiet_pid.dump ]] ||
	fail "a .NET app without a perf map got one without --enable-perfmaps"
quiet_samples=$(folded count "$out" "^dotnet-$quiet_pid;")
quiet_named=$(folded count "$out" "$quiet_hot")
echo "from its runtime's memory: $quiet_named of $quiet_samples samples of pid $quiet_pid name HotMethod"
((quiet_samples > 0 && 2 * quiet_named >= quiet_samples)) ||
	fail "the .NET app without a perf map is not named from its runtime's memory"
"$PROFCPU" collect --cgroup "$test_cgroup" --enable-perfmaps -duration 2 -F 199 -o "$workdir/enabled" 2>"$workdir/enabled.err" ||
	{ cat "$workdir/enabled.err"; fail "profcpu collect --cgroup --enable-perfmaps failed"; }
grep "turned on the perf map" "$workdir/enabled.err" || fail "--enable-perfmaps did not say what it did"
quiet_samples=$(folded count "$workdir/enabled/folded_stacks.out" "^dotnet-$quiet_pid;")
quiet_named=$(folded count "$workdir/enabled/folded_stacks.out" "$quiet_hot")
echo "--enable-perfmaps: $quiet_named of $quiet_samples samples of pid $quiet_pid name HotMethod"
((quiet_samples > 0 && 2 * quiet_named >= quiet_samples)) || fail "--enable-perfmaps did not name the JIT frames"

# The idle task and kernel threads: named as perf names them, and their
# stacks, which start where each CPU's idle task or a kernel thread starts,
# count as reaching a thread root. With the workloads stopped, most of the
# machine's samples are theirs, unless other work keeps every CPU busy (the
# suite's other tests): then only the kernel threads' are checked.
kill "$dotnet_pid" "$split_pid" "$quiet_pid"
"$PROFCPU" collect -a -duration 3 -F 199 -o "$workdir/idle" 2>"$workdir/idle.err" ||
	{ cat "$workdir/idle.err"; fail "profcpu collect -a on an idle machine failed"; }
cat "$workdir/idle.err"
idle=$workdir/idle/folded_stacks.out
folded top "$idle" 5
(($(folded count "$idle" '^\[unknown\]-0;') == 0)) || fail "the idle task is named [unknown]-0, not swapper"
idle_task=$(folded count "$idle" '^swapper-0;')
kernel_roots='common_startup_64|secondary_startup_64(_no_verify)?|ret_from_fork(_asm)?'
user_roots='start_thread|__libc_start_call_main|__libc_start_main|_start|__clone3?|clone3?'
starting_at_root=$(folded count "$idle" "^[^;]+;($kernel_roots|$user_roots)(;|\$)")
read -r rooted total < <(awk '/^stacks:/ {print $2, $4}' "$workdir/idle/profcpu.log")
echo "idle task: $idle_task samples; $starting_at_root of $total start at a thread root; profcpu counts $rooted as rooted"
((idle_task > 0)) || echo "no sample of the idle task: every CPU was busy for 3 s"
((rooted >= starting_at_root)) ||
	fail "$starting_at_root stacks start at a thread root, profcpu says $rooted reach one"

# perfcollect's runbook line without -pid records the whole machine too.
(cd "$workdir" && "$PERFCOLLECT" collect machine -collectsec 2 2>"$workdir/perfcollect.err") ||
	{ cat "$workdir/perfcollect.err"; fail "perfcollect collect NAME without -pid failed"; }
grep -q "sampling every CPU" "$workdir/perfcollect.err" || fail "perfcollect collect NAME did not sample every CPU"
# Listed first, then searched: grep -q stops reading at the match, and a long
# listing (every process's perf map) then fails unzip with SIGPIPE.
listing=$(unzip -l "$workdir/machine.trace.zip")
grep -q "perf.data.txt" <<<"$listing" || fail "machine.trace.zip lacks perf.data.txt"

# Refused: one line with what it needs.
if command -v setpriv >/dev/null && (($(id -u) == 0)) && (($(cat /proc/sys/kernel/perf_event_paranoid) > 0)); then
	status=0
	mkdir -m 777 "$workdir/nobody"
	chmod 755 "$workdir"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$PROFCPU" collect -a -duration 1 \
		-o "$workdir/nobody/out" 2>"$workdir/refused.err" || status=$?
	cat "$workdir/refused.err"
	((status == 1)) || fail "an unprivileged collect -a exited $status"
	grep -q "perf_event_paranoid <= 0" "$workdir/refused.err" || fail "the refusal does not say what -a needs"
fi
echo "ok"
