#!/usr/bin/env bash
# perfcollect's command lines from its documentation run unchanged against
# the perfcollect link: collect until Ctrl-C, -nolttng, -collectsec, view,
# install, setenv; its options in any case; unknown options only warn; the
# options profcpu cannot honour say so; bad traces give one line.
source "$(dirname "$0")/lib.sh"

cd "$workdir"
# A name no other test on this machine uses (comm keeps 15 characters).
busy=busy-$$
ln -s "$WORKLOAD_SPLIT" "$workdir/$busy"
start "$workdir/$busy" 60
pid=$started_pid

# collect NAME -pid N: until Ctrl-C.
interrupt_after() {
	local seconds=$1
	shift
	"$@" 2>"$workdir/stderr" &
	local collector=$!
	sleep "$seconds"
	kill -INT "$collector"
	wait "$collector" || fail "$* ended with status $? after Ctrl-C"
}
interrupt_after 2 "$PERFCOLLECT" collect sample -pid "$pid"
[[ -s sample.trace.zip ]] || fail "collect sample -pid N wrote no sample.trace.zip"
interrupt_after 2 "$PERFCOLLECT" collect sample2 -nolttng -pid "$pid"
[[ -s sample2.trace.zip ]] || fail "collect sample -nolttng -pid N wrote no zip"
"$PERFCOLLECT" collect timed -PID "$pid" -CollectSec 1 -NoLTTng
# perfcollect samples at 1000 Hz: each sample's period (CPU time between two
# samples, in ns) is then 1 ms, against 10 ms at 99 Hz. The period says the
# rate whatever CPU time a loaded machine gives the target; a count of
# samples would not.
period=$(unzip -p timed.trace.zip '*/perf.data.txt' |
	awk '/ cpu-clock: *$/ {for (i = 1; i <= NF; i++) if ($i == "cpu-clock:") print $(i - 1)}' |
	sort -n | awk '{p[NR] = $1} END {print NR ? p[int((NR + 1) / 2)] : 0}')
echo "median period: $period ns"
((period > 0 && period <= 2000000)) ||
	fail "-collectsec 1: a sample every $period ns of CPU time, not perfcollect's 1000 Hz"

"$PERFCOLLECT" view sample.trace.zip | tee view.out
grep -q '^top functions by self samples:' view.out || fail "view prints no top functions"
grep -qE '^ +[0-9.]+% +[0-9.]+% +workload_split!spin_sixty$' view.out || fail "view lacks spin_sixty"
grep -q '^top stacks' view.out || fail "view prints no stacks"
"$PROFCPU" view sample.trace.zip -processfilter nobody 2>err && fail "a filter matching nothing must fail"
grep -q 'holds no samples of that -processfilter' err || fail "unclear message: $(cat err)"

# install and setenv change nothing; setenv's output is for eval.
"$PERFCOLLECT" install | tee install.out
grep -q 'nothing to install' install.out || fail "install does not say nothing is needed"
(eval "$("$PERFCOLLECT" setenv)" && [[ $DOTNET_PerfMapEnabled == 1 ]]) ||
	fail "eval \"\$(perfcollect setenv)\" does not set DOTNET_PerfMapEnabled=1"

# Unknown options warn, as perfcollect's "Unknown arg ..., ignored".
"$PERFCOLLECT" collect unknown -pid "$pid" -collectsec 1 -graphtype caller 2>err
grep -q "ignoring unknown option '-graphtype'" err || fail "no warning for -graphtype"
[[ -s unknown.trace.zip ]] || fail "an unknown option stopped the collection"

# -threadtime and -offcpu record the scheduler's switches, through the
# tracepoint where tracefs is readable and the context-switches event where
# it is not (this host as it is: nothing mounted for the test); what profcpu
# cannot honour is said, on stderr and in the log.
"$PERFCOLLECT" collect limits -pid "$pid" -collectsec 1 -threadtime -offcpu -hwevents 2>err || true
cat err
unzip -p limits.trace.zip limits.trace/perfcollect.log >limits.log
if [[ -r /sys/kernel/tracing/events/sched/sched_switch/id ]]; then
	route='sched:sched_switch'
else
	route='context-switches'
fi
grep -q "^off-CPU: $route" limits.log || fail "-threadtime recorded no scheduler switches through $route"
if grep -q -- '-hwevents: this machine cannot sample CPU cycles' err; then
	grep -q '^event: cpu-clock' limits.log || fail "-hwevents fell back but the log says otherwise"
	grep -q 'warning: -hwevents' limits.log || fail "perfcollect.log lacks the -hwevents warning"
else
	grep -q '^event: cycles' limits.log || fail "-hwevents neither sampled cycles nor warned"
fi

# -buffersize as perf --mmap-pages: pages or a size; a power of two.
"$PERFCOLLECT" collect sized -pid "$pid" -collectsec 0.5 -buffersize 1M 2>/dev/null
grep -q ', 256 ring buffer pages per CPU' <(unzip -p sized.trace.zip sized.trace/perfcollect.log) ||
	fail "-buffersize 1M is not 256 pages"
"$PERFCOLLECT" collect sized -pid "$pid" -collectsec 0.5 -buffersize 100 2>err
grep -q 'rounded up to 128 pages' err || fail "-buffersize 100 not rounded up to 128 pages"
"$PERFCOLLECT" collect sized -pid "$pid" -buffersize lots 2>err && fail "-buffersize lots accepted"

# -processfilter NAME picks the one process of that name.
"$PERFCOLLECT" collect named -processfilter "$busy" -collectsec 1 2>err
grep -qx "comms $busy" <(reader summary named.trace.zip) || fail "-processfilter sampled another process"
! grep -q 'is ignored' err || fail "-processfilter alone chose the pid, yet: $(grep 'is ignored' err)"
start "$workdir/$busy" 60
until (($(pgrep -xc "$busy") >= 2)); do sleep 0.1; done # past the fork, into its exec
"$PERFCOLLECT" collect named -processfilter "$busy" -collectsec 1 2>err && fail "two $busy processes: must refuse"
grep -q "2 processes are named '$busy'" err || fail "unclear message: $(cat err)"

# Bad input: one line, non-zero, no crash.
expect_failure() {
	local expected=$1
	shift
	if "$@" >out 2>err; then fail "$* succeeded"; fi
	(($(wc -l <err) == 1)) || fail "$* printed more than one line: $(cat err)"
	grep -q "$expected" err || fail "$*: expected '$expected', got: $(cat err)"
}
expect_failure 'cannot open missing.trace.zip' "$PERFCOLLECT" view missing.trace.zip
head -c 4096 /dev/urandom >noise.trace.zip
expect_failure 'is not a zip archive' "$PERFCOLLECT" view noise.trace.zip
(cd "$workdir" && echo text >note.txt && python3 -c "import zipfile; zipfile.ZipFile('other.trace.zip', 'w').write('note.txt')")
expect_failure 'holds no \*.data.txt' "$PERFCOLLECT" view other.trace.zip
# Scramble the deflated perf.data.txt.
python3 - sample.trace.zip damaged.trace.zip <<'PY'
import sys, zipfile
data = bytearray(open(sys.argv[1], "rb").read())
entry = zipfile.ZipFile(sys.argv[1]).getinfo("sample.trace/perf.data.txt")
start = entry.header_offset + 30 + len(entry.filename) + 200
data[start:start + 400] = bytes(range(200)) * 2
open(sys.argv[2], "wb").write(data)
PY
expect_failure 'damaged.trace.zip' "$PERFCOLLECT" view damaged.trace.zip
expect_failure 'needs a trace name' "$PERFCOLLECT" collect -pid "$pid"
expect_failure 'LTTng events only' "$PERFCOLLECT" start sample
echo ok
