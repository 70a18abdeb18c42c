#!/usr/bin/env bash
# profcpu agent pushes a .NET process's lock contention, exceptions and
# allocations as profiles of their own beside its CPU profile, named as
# Pyroscope's .NET profiler names them (__name__ lock, exception, memory)
# with the series labels of its CPU profile. The app (tests/dotnet/EventStacks,
# as tests/collect_runtime_profiles.sh runs it) waits twice as long on LockA
# (WaitOnA, two threads) as on LockB (WaitOnB), throws twice as many
# exceptions from ThrowA as from ThrowB and allocates twice the bytes in
# AllocateA as in AllocateB, over several periods of 2 s. Summed over the
# periods pushed, each profile splits 2:1 within 10%, the exceptions counted
# are exactly those the app caught (each period's session overlaps the
# next; an event belongs to the one its time falls in), at least 95% of each
# profile's weight lies under named frames, and go tool pprof reads them.
# With --otlp, the same events come as Profiles of the app's resource, one a
# sample type (contentions, delay, exceptions, alloc_objects, alloc_space),
# the exceptions exactly the app's. Then --api ingest names them
# APP.lock{...}, APP.exception{...}.
#
# The agent runs in a PID namespace of its own, with the app. No Pyroscope
# server can be installed on this machine: the receiver is the tests'
# stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_RUNTIME_INSIDE:-} != 1 ]]; then
	AGENT_RUNTIME_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || skip "go (Debian's golang-go) is not installed: no go tool pprof"
build_dotnet_app EventStacks

# periods SPOOL: how many periods the agent has sent.
periods() {
	local count
	count=$(grep -c "named and encoded" "$1/agent.log" 2>/dev/null)
	echo "${count:-0}"
}

# start_receiver NAME PORT: the stand-in receiver on PORT, keeping what it
# gets in $workdir/NAME.
start_receiver() {
	mkdir -p "$workdir/$1"
	start python3 "$tests_dir/pyroscope_receiver.py" "$2" "$workdir/$1" ok
	until [[ -e $workdir/$1/ready ]]; do sleep 0.1; done
}

# start_agent NAME PORT OPTION...: an agent with OPTIONS pushing every 2 s to
# PORT (and OTLP there too), its spool $workdir/spool-NAME, its pid in
# $agent_pid; returns once it has sent a period.
start_agent() {
	local name=$1 port=$2
	shift 2
	start "$PROFCPU" agent --push "http://127.0.0.1:$port" --otlp "http://127.0.0.1:$port" \
		--push-interval 2 --push-timeout 60 --spool "$workdir/spool-$name" "$@" 2>"$workdir/$name.err"
	agent_pid=$started_pid
	wait_periods "$name" 1
}

# wait_periods NAME N: until the agent NAME has sent N periods.
wait_periods() {
	until (($(periods "$workdir/spool-$1") >= $2)); do
		kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/$1.err"; fail "$1: the agent stopped"; }
		sleep 0.2
	done
}

# start_app NAME ROUNDS: the app started once the agent NAME runs (its start
# is sampled, so the agent turns on its perf map and its session), its
# ROUNDS rounds begun once its session runs; its pid in $app_pid, its
# output in $app_output.
start_app() {
	local name=$1 rounds=$2
	start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go-$name" "$rounds"
	app_pid=$started_pid app_output=$started_output
	until grep -q "EventPipe session .*/runtime-$app_pid-" "$workdir/spool-$name/agent.log" 2>/dev/null; do
		kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/$name.err"; fail "$name: the agent stopped"; }
		sleep 0.2
	done
	touch "$workdir/go-$name"
}

# finish_app NAME: once the app is done, two periods more; the app killed.
finish_app() {
	until grep -q done "$app_output"; do
		kill -0 "$app_pid" 2>/dev/null || { cat "$app_output"; fail "the app exited"; }
		sleep 0.2
	done
	wait_periods "$1" $(($(periods "$workdir/spool-$1") + 2))
	kill "$app_pid"
	cat "$app_output"
}

stop_agent() {
	kill -INT "$agent_pid"
	wait "$agent_pid" || { cat "$workdir/$1.err"; fail "$1: the agent exited with status $?"; }
}

# run_agent NAME ROUNDS OPTION...: ROUNDS rounds of the app under an agent
# with OPTIONS, pushing to a receiver in $workdir/NAME.
run_agent() {
	local name=$1 rounds=$2 port
	shift 2
	port=$(free_port)
	start_receiver "$name" "$port"
	start_agent "$name" "$port" "$@"
	start_app "$name" "$rounds"
	finish_app "$name"
	stop_agent "$name"
	echo "$name: pid $app_pid"
}

began=$(date +%s)
run_agent push 100 --events contention,exceptions,alloc
ended=$(date +%s)
caught=$(awk '$1 == "exceptions" {print $2}' "$app_output")

python3 - "$workdir/push" "$app_pid" "$caught" "$tests_dir" "$began" "$ended" <<'PY' || fail "the runtime profiles pushed are not what the app did"
import collections, glob, re, sys
sys.path.insert(0, sys.argv[4])
from protobuf_wire import pprof_samples

received, pid, caught = sys.argv[1], sys.argv[2], int(sys.argv[3])
began, ended = int(sys.argv[5]), int(sys.argv[6])
# Every push dated within the run (from the events' and samples' clock).
for query_path in glob.glob(received + "/*.query"):
    query = dict(line.rstrip("\n").split("=", 1) for line in open(query_path) if "=" in line)
    if "from" in query:
        span = int(query["from"]), int(query["until"])
        assert began <= span[0] <= span[1] <= ended + 1, \
            f"{query['name']} dated {span}, the run was {began}..{ended}"
# The pushes of the app's pid: {__name__: [(series, samples)]}.
pushes = collections.defaultdict(list)
for query_path in sorted(glob.glob(received + "/*.query")):
    query = dict(line.rstrip("\n").split("=", 1) for line in open(query_path) if "=" in line)
    if "label.__name__" not in query:
        continue  # an OTLP request, read below
    samples = [sample for sample in pprof_samples(open(query_path[:-6] + ".pb.gz", "rb").read())
               if sample[0].get("pid") == pid]
    if samples:
        pushes[query["label.__name__"]].append((query["name"], samples))
print({name: len(found) for name, found in pushes.items()})
for name in ("process_cpu", "lock", "exception", "memory"):
    assert pushes[name], f"no {name} profile of pid {pid} was pushed"

# The same series labels as the app's CPU profile.
def labels(series):
    return re.sub(r"^([^{]*)\.[a-z_]+\{", r"\1{", series)
cpu_series = {labels(series) for series, _ in pushes["process_cpu"]}
for name in ("lock", "exception", "memory"):
    for series, _ in pushes[name]:
        assert series.split("{")[0].endswith("." + name), f"{series}: not named .{name}"
        assert labels(series) in cpu_series, f"{series}: not a series of the CPU profile {cpu_series}"

def total(name, index, frame=None, leaf=None):
    """The sum of value `index` of the samples of profile `name` under a
    frame matching `frame` (and whose leaf matches `leaf`)."""
    return sum(values[index] for _, samples in pushes[name] for _, values, names in samples
               if (frame is None or any(re.search(frame, n) for n in names))
               and (leaf is None or (names and re.search(leaf, names[0]))))

def two_to_one(what, a, b):
    print(f"{what}: {a} against {b}")
    assert b > 0 and 1.8 <= a / b <= 2.2, f"{what}: {a} against {b} is not 2:1 within 10%"

two_to_one("time waited in WaitOnA and WaitOnB (ns)",
           total("lock", 1, r"Demo\.Program::WaitOnA$"), total("lock", 1, r"Demo\.Program::WaitOnB$"))
two_to_one("waits in WaitOnA and WaitOnB",
           total("lock", 0, r"Demo\.Program::WaitOnA$"), total("lock", 0, r"Demo\.Program::WaitOnB$"))
two_to_one("exceptions from ThrowA and ThrowB",
           total("exception", 0, r"Demo\.Program::ThrowA$"), total("exception", 0, r"Demo\.Program::ThrowB$"))
two_to_one("bytes allocated in AllocateA and AllocateB",
           total("memory", 1, r"Demo\.Program::AllocateA$", r"^System\.Byte\[\]$"),
           total("memory", 1, r"Demo\.Program::AllocateB$", r"^System\.Byte\[\]$"))
counted = total("exception", 0, None, r"^Demo\.KnownException$")
print(f"exceptions: {counted} pushed, the app caught {caught}")
assert counted == caught, f"{counted} Demo.KnownException pushed, the app caught {caught}"
# The app waited about 20 ms a round in each of three threads.
waited = total("lock", 1, r"Demo\.Program::WaitOn[AB]$")
assert waited > 100 * 3 * 15 * 1000000, f"only {waited} ns waited in WaitOnA and WaitOnB"

# At least 95% of each profile's weight under a named frame (a managed
# method's; the type's leaf frame aside).
for name, index in (("lock", 1), ("exception", 0), ("memory", 1)):
    all_weight = total(name, index)
    named = sum(values[index] for _, samples in pushes[name] for _, values, names in samples
                if any("::" in n for n in names[1 if name != "lock" else 0:]))
    print(f"{name}: {100 * named / all_weight:.1f}% of the weight under named frames")
    assert named >= 0.95 * all_weight, f"{name}: only {named} of {all_weight} under named frames"
PY

# --otlp: the same events as Profiles of the app's resource beside its CPU
# one, one a value: every exception the app caught, each wait's delay.
python3 - "$workdir/push" "$app_pid" "$caught" "$tests_dir" <<'PY' || fail "the OTLP requests do not hold the runtime profiles"
import collections, glob, sys
sys.path.insert(0, sys.argv[4])
from protobuf_wire import fields, message, packed

received, pid, caught = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
totals = collections.Counter()
for path in glob.glob(received + "/*.otlp"):
    request = message(open(path, "rb").read())
    strings = [text.decode() for text in message(request[2][0])[5]]
    for resource_profiles in request[1]:
        resource_profiles = message(resource_profiles)
        resource = {}
        for pair in message(resource_profiles[1][0]).get(1, []):
            pair = dict(fields(pair))
            resource[pair[1].decode()] = dict(fields(pair[2])).get(3)
        if resource.get("process.pid") != pid:
            continue
        for profile in message(resource_profiles[2][0]).get(2, []):
            profile = message(profile)
            sample_type = dict(fields(profile[1][0]))
            kind = (strings[sample_type[1]], strings[sample_type[2]])
            totals[kind] += sum(packed(message(sample)[4][0])[0] for sample in profile.get(2, []))
print(dict(totals))
for kind in (("samples", "count"), ("contentions", "count"), ("delay", "nanoseconds"),
             ("exceptions", "count"), ("alloc_objects", "count"), ("alloc_space", "bytes")):
    assert totals[kind] > 0, f"no {kind} Profile of pid {pid}"
assert totals[("exceptions", "count")] == caught, \
    f"{totals[('exceptions', 'count')]} exceptions exported, the app caught {caught}"
assert totals[("delay", "nanoseconds")] > 100 * 3 * 15 * 1000000, "too little delay exported"
PY

# go tool pprof reads each with its sample types.
check_pprof() {
	local name=$1 index=$2 file
	file=$(grep -l "^label.__name__=$name$" "$workdir"/push/*.query | head -1)
	file=${file%.query}.pb.gz
	go tool pprof -top -sample_index="$index" "$file" >"$file.top" 2>&1 || { cat "$file.top"; fail "go tool pprof cannot read $file"; }
	grep -q "^Type: $index$" "$file.top" || { cat "$file.top"; fail "the $name profile has no sample type $index"; }
}
check_pprof lock delay
check_pprof lock contentions
check_pprof exception exceptions
check_pprof memory alloc_space
check_pprof memory alloc_objects

# The ingest API: SERVICE.lock{LABELS} and SERVICE.exception{LABELS}, no
# allocations (not asked for).
run_agent ingest 10 --api ingest
grep -h '^name=' "$workdir"/ingest/*.query | sort -u >"$workdir/ingest.series"
cat "$workdir/ingest.series"
grep -q '^name=dotnet\.lock{node=' "$workdir/ingest.series" || fail "--api ingest pushed no APP.lock{...}"
grep -q '^name=dotnet\.exception{node=' "$workdir/ingest.series" || fail "--api ingest pushed no APP.exception{...}"
! grep -q '\.memory{' "$workdir/ingest.series" || fail "allocations were pushed without --events alloc"

# exceptions_pushed NAME PID: the exceptions of PID in the exception
# profiles the receiver NAME got.
exceptions_pushed() {
	python3 - "$workdir/$1" "$2" "$tests_dir" <<'PY'
import glob, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import pprof_samples
total = 0
for path in glob.glob(sys.argv[1] + "/*.query"):
    if "label.__name__=exception\n" in open(path).read():
        total += sum(values[0] for labels, values, _ in pprof_samples(open(path[:-6] + ".pb.gz", "rb").read())
                     if labels.get("pid") == sys.argv[2])
print(total)
PY
}

echo "--- --no-events: no session, CPU profiles alone"
port=$(free_port)
start_receiver none "$port"
start_agent none "$port" --no-events
start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go-none" 10
app_pid=$started_pid app_output=$started_output
touch "$workdir/go-none"
finish_app none
stop_agent none
! grep -q "EventPipe session" "$workdir/spool-none/agent.log" || fail "--no-events opened a session"
grep -q "^label.__name__=process_cpu$" "$workdir"/none/*.query || fail "--no-events pushed no CPU profile"
! grep -q "^label.__name__=\(lock\|exception\|memory\)$" "$workdir"/none/*.query ||
	fail "--no-events pushed a runtime profile"

echo "--- the receiver down while the app runs: its runtime profiles wait in the spool"
port=$(free_port)
start_agent kept "$port"
start_app kept 10
finish_app kept
grep -q "cannot push to" "$workdir/kept.err" || fail "the agent did not say the receiver was down"
start_receiver kept "$port"
until grep -q "takes profiles again" "$workdir/kept.err"; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/kept.err"; fail "kept: the agent stopped"; }
	sleep 0.2
done
wait_periods kept $(($(periods "$workdir/spool-kept") + 2))
stop_agent kept
kept_caught=$(awk '$1 == "exceptions" {print $2}' "$app_output")
kept_pushed=$(exceptions_pushed kept "$app_pid")
echo "kept: $kept_pushed exceptions pushed once the receiver came back, the app caught $kept_caught"
((kept_pushed == kept_caught)) || fail "$kept_pushed exceptions pushed from the spool, the app caught $kept_caught"

echo "--- a stopped app: its diagnostics socket answers nothing, the periods go on"
port=$(free_port)
start_receiver stalled "$port"
start_agent stalled "$port"
start_app stalled 100000
kill -STOP "$app_pid"
stopped_at=$(periods "$workdir/spool-stalled")
# The app's thread that cuts its sessions waits on it for the runtime's
# answer, then for its events' end; the periods are sent meanwhile (the
# first one waits a few seconds for the cut). What it costs a running
# neighbour: tests/agent_stopped_neighbour.sh.
wait_periods stalled $((stopped_at + 4))
kill -CONT "$app_pid"
kill "$app_pid"
stop_agent stalled
cat "$workdir/stalled.err"
grep -q "named and encoded" "$workdir/spool-stalled/agent.log" || fail "no period was sent"

echo "ok: lock contention, exceptions and allocations pushed as profiles of their own, 2:1 and named; $caught exceptions"
