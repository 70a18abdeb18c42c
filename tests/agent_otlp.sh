#!/usr/bin/env bash
# profcpu agent --otlp URL: each period's profiles as one OTLP/HTTP
# ExportProfilesServiceRequest (opentelemetry-proto profiles/v1development,
# as of its v1.10.0) to URL/v1development/profiles, gzip-compressed, with
# the OTLP-Profiles-Development-Version header: a ResourceProfiles per
# process with the attributes the OpenTelemetry eBPF profiler and the
# k8sattributes processor set (service.name, k8s.namespace.name,
# k8s.pod.name, process.pid, process.executable.name), one Profile each
# (samples/count, period cpu/nanoseconds), and one dictionary whose tables
# start with their zero value, each location with its profile.frame.type.
# A "pod" stands in for Kubernetes' (a mount namespace with the pod's
# hostname and namespace file).
#
# OTLP on its own terms, beside --push: each receiver gets its own
# credentials and headers and none of the other's (the Pyroscope one a
# bearer token, a tenant and a header; the OTLP one basic auth, which it
# requires, and a header of its own). The OTLP receiver is down for the
# first periods: their requests wait in the spool and arrive once it is up,
# each period's exactly once, while the Pyroscope receiver, up all along,
# gets each profile once; a kept request that cannot be read (a link
# planted in its place) is said to be unreadable, naming it, and dropped.
# The other way round, Pyroscope down for three periods: the OTLP receiver
# gets each period's request once, when it is made, and Pyroscope each
# period's profile of the pod once it is back.
#
# Each request is decoded by hand (tests/protobuf_wire.py) against the field
# numbers of opentelemetry-proto, and its common and resource parts
# (Resource, InstrumentationScope, the attribute values) by the decoder the
# OpenTelemetry JS SDK generated from opentelemetry-proto
# (tests/browser/otlp_transformer_decode.mjs), which must agree. No package
# that Debian (bookworm), npm or NuGet serves here carries
# profiles/v1development: npm's @opentelemetry/otlp-transformer generates
# only trace, metrics and logs (and from 0.218.0 on ships no generated
# decoder at all), NuGet serves no OpenTelemetry.Proto, Debian's
# libopentelemetry-proto-dev is not in bookworm (and its 1.5.0 and 1.8.0
# predate the field numbers of 1.10.0 that we write).
#
# Then a period whose perf.data cannot be read (replaced while it is
# sampled) still exports a .NET app's runtime events: its request holds the
# app's exception profiles and no CPU profile (they were dropped with the
# samples).
#
# The agent runs in a PID namespace of its own. No OpenTelemetry Collector
# nor Pyroscope can be installed here: the receivers are the tests'
# stand-in (tests/pyroscope_receiver.py).
if [[ ${AGENT_OTLP_INSIDE:-} != 1 ]]; then
	AGENT_OTLP_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

command -v node >/dev/null || fail "node is not installed: scripts/install-deps installs it"
if [[ ! -d $tests_dir/browser/node_modules/@opentelemetry/otlp-transformer ]]; then
	(cd "$tests_dir/browser" && npm ci --no-audit --no-fund >/dev/null) ||
		fail "npm ci failed in tests/browser: no OpenTelemetry decoder"
fi

echo "--- a receiver's credentials without that receiver: refused at the start"
# misplaced NAME EXPECTED OPTION...: the agent with OPTIONS stops at once,
# with EXPECTED in its one line.
misplaced() {
	local name=$1 expected=$2 status=0
	shift 2
	"$PROFCPU" agent "$@" --spool "$workdir/spool-$name" 2>"$workdir/$name.err" || status=$?
	cat "$workdir/$name.err"
	((status == 2)) || fail "$name: exit status $status, expected 2"
	grep -qF "$expected" "$workdir/$name.err" || fail "$name: the agent did not say: $expected"
	(($(wc -l <"$workdir/$name.err") == 1)) || fail "$name: more than one line"
}
misplaced header-to-otlp "are the --push receiver's: give --push URL, or --otlp-header" \
	--otlp http://127.0.0.1:9 --header 'X-Team: payments'
misplaced otlp-header-to-push "are the --otlp receiver's: give --otlp URL" \
	--push http://127.0.0.1:9 --otlp-header 'X-Team: payments'

echo shop-7c6d9b5f8-x2k4q >"$workdir/hostname"
start unshare --mount bash -c 'mount --bind "$1" /etc/hostname && mount -t tmpfs pod /run &&
	mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
	echo shop >/run/secrets/kubernetes.io/serviceaccount/namespace || exit 1
	end=$((SECONDS + 600)); while ((SECONDS < end)); do :; done' pod "$workdir/hostname"
pod_pid=$started_pid

echo pyroscope-secret >"$workdir/pyroscope-token"
printf otlp-secret >"$workdir/otlp-password"
otlp_authorization="Basic $(printf otel:otlp-secret | base64)"
pyroscope_port=$(free_port) otlp_port=$(free_port)
mkdir -p "$workdir/pyroscope" "$workdir/otlp"
start python3 "$tests_dir/pyroscope_receiver.py" "$pyroscope_port" "$workdir/pyroscope" ok
until [[ -e $workdir/pyroscope/ready ]]; do sleep 0.1; done
spool=$workdir/spool
start "$PROFCPU" agent --push "http://127.0.0.1:$pyroscope_port" --otlp "http://127.0.0.1:$otlp_port" \
	--push-interval 2 --spool "$spool" --no-events \
	--bearer-token-file "$workdir/pyroscope-token" --tenant team-a --header 'X-Team: payments' \
	--otlp-basic-auth-user otel --otlp-basic-auth-password-file "$workdir/otlp-password" \
	--otlp-header 'X-Otlp-Team: observability' 2>"$workdir/agent.err"
agent_pid=$started_pid

# until CONDITION...: waits while the agent runs.
until_agent() {
	until "$@"; do
		kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
		sleep 0.2
	done
}
kept_requests() { find "$spool" -name otlp-request.pb 2>/dev/null | sort; }
encoded() {
	local count
	count=$(grep -c "named and encoded" "$spool/agent.log" 2>/dev/null)
	echo "${count:-0}"
}
three_kept() {
	(($(encoded) < 6)) || fail "$(encoded) periods read while the OTLP receiver was down, $(kept_requests | wc -l) of their requests kept"
	(($(kept_requests | wc -l) >= 3))
}

echo "--- the OTLP receiver down: its requests wait in the spool"
until_agent three_kept
grep -q "cannot export OTLP profiles to http://127.0.0.1:$otlp_port: .*; keeping up to 40 periods in $spool" \
	"$workdir/agent.err" || { cat "$workdir/agent.err"; fail "the outage was not said"; }
# The oldest kept request made unreadable: a link (to nothing), which the
# agent does not follow.
unreadable=$(kept_requests | head -1)
ln -s "$workdir/nowhere" "$workdir/planted-link"
mv -T "$workdir/planted-link" "$unreadable"
echo "kept: $(kept_requests | wc -l) requests; $unreadable made a link"

echo "--- the OTLP receiver up, requiring its basic auth"
start python3 "$tests_dir/pyroscope_receiver.py" "$otlp_port" "$workdir/otlp" ok "$otlp_authorization"
otlp_after() { [[ -z $(kept_requests) ]] && (($(ls "$workdir/otlp" | grep -c '\.otlp$') >= $1)); }
until_agent otlp_after 3
first_after=$(ls "$workdir/otlp" | grep -c '\.otlp$')
until_agent otlp_after $((first_after + 2))
kill -INT "$agent_pid"
wait "$agent_pid" || fail "the agent exited with status $?"
cat "$workdir/agent.err"
grep -q "takes OTLP profiles again" "$workdir/agent.err" || fail "the OTLP receiver's return was not said"
grep -qx "profcpu: cannot read $unreadable: Too many levels of symbolic links; that OTLP request is dropped" \
	"$workdir/agent.err" || fail "the unreadable kept request was not said to be unreadable, with its file"
! grep -q "receiver refused" "$workdir/agent.err" || fail "a receiver was said to refuse"

echo "--- each receiver's credentials and headers, and none of the other's"
for query in "$workdir"/pyroscope/*.query; do
	grep -qx 'authorization=Bearer pyroscope-secret' "$query" || fail "$query: not the Pyroscope token"
	grep -qx 'tenant=team-a' "$query" || fail "$query: no tenant"
	grep -qx 'header.X-Team=payments' "$query" || fail "$query: no X-Team header"
	! grep -qiE '^header.X-Otlp-Team=|^authorization=Basic' "$query" ||
		fail "$query: the OTLP receiver's credentials went to Pyroscope"
done
for query in "$workdir"/otlp/*.query; do
	grep -qxF "authorization=$otlp_authorization" "$query" || fail "$query: not the OTLP basic auth"
	grep -qx 'header.X-Otlp-Team=observability' "$query" || fail "$query: no X-Otlp-Team header"
	! grep -qi 'tenant=\|x-team=\|pyroscope-secret' "$query" ||
		fail "$query: Pyroscope's credentials went to the OTLP receiver"
	grep -qx 'path=/v1development/profiles' "$query" || fail "not POST /v1development/profiles"
	grep -qx 'content_type=application/x-protobuf' "$query" || fail "not application/x-protobuf"
	grep -qx 'version=1' "$query" || fail "no OTLP-Profiles-Development-Version: 1"
	grep -qx 'content_encoding=gzip' "$query" || fail "the request is not gzip-compressed"
done
echo "$(ls "$workdir"/pyroscope/*.query | wc -l) pushes and $(ls "$workdir"/otlp/*.query | wc -l) OTLP requests, each with its own credentials"

echo "--- every period once: Pyroscope's profiles not sent again, OTLP's each arrived"
# The periods read with some process in them (a request each), less the one
# whose kept request was unreadable.
periods=$(grep -cE 'samples of [1-9][0-9]* processes' "$spool/agent.log")
(($(ls "$workdir"/pyroscope/*.pb.gz | xargs md5sum | awk '{print $1}' | sort | uniq -d | wc -l) == 0)) ||
	fail "a profile was pushed to Pyroscope twice"
(($(ls "$workdir"/otlp/*.otlp | xargs md5sum | awk '{print $1}' | sort | uniq -d | wc -l) == 0)) ||
	fail "an OTLP request was sent twice"
otlp_requests=$(ls "$workdir"/otlp/*.otlp | wc -l)
echo "$periods periods with processes; $otlp_requests OTLP requests"
((otlp_requests == periods - 1)) || fail "$otlp_requests OTLP requests for $periods periods, one dropped"

node "$tests_dir/browser/otlp_transformer_decode.mjs" "$workdir"/otlp/*.otlp >"$workdir/decoded.jsonl" ||
	fail "the OpenTelemetry decoder cannot read the requests"
python3 - "$workdir/otlp" "$pod_pid" "$tests_dir" "$workdir/decoded.jsonl" <<'PY' || fail "the OTLP requests do not hold what they should"
import glob, json, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import fields, message, packed

def any_value(data):
    value = dict(fields(data))
    if 1 in value:
        return value[1].decode()
    number = value.get(3)  # int_value, an int64 on the wire as a varint
    return number - (1 << 64) if number is not None and number >= 1 << 63 else number

decoded = {line["file"]: line for line in map(json.loads, open(sys.argv[4]))}
pod_seen, pod_times = 0, set()
for path in sorted(glob.glob(sys.argv[1] + "/*.otlp")):
    request = message(open(path, "rb").read())
    dictionary = message(request[2][0])
    strings = [text.decode() for text in dictionary[5]]
    for table in (1, 2, 3, 4, 6, 7):
        assert dictionary[table][0] == b"", f"table {table} does not start with its zero value"
    assert strings[0] == "", "string_table[0] is not empty"
    attributes = [dict(fields(entry)) for entry in dictionary[6]]
    assert [any_value(entry[2]) for entry in attributes[1:]] == decoded[path]["attribute_values"], \
        "the attribute values decoded by hand and by the OpenTelemetry decoder differ"
    def attribute(index):
        entry = attributes[index]
        return strings[entry[1]], any_value(entry[2])
    frame_types = set()
    for location in dictionary[2][1:]:
        for index in packed(message(location).get(4, [b""])[0]):
            key, value = attribute(index)
            assert key == "profile.frame.type", key
            frame_types.add(value)
    assert frame_types <= {"native", "kernel", "dotnet"} and frame_types, frame_types
    processes = []
    for resource_profiles in request[1]:
        resource_profiles = message(resource_profiles)
        resource = {}
        for pair in message(resource_profiles[1][0]).get(1, []):
            pair = dict(fields(pair))
            resource[pair[1].decode()] = any_value(pair[2])
        scope = message(resource_profiles[2][0])
        assert dict(fields(scope[1][0]))[1] == b"profcpu", "the scope is not profcpu"
        profile = message(scope[2][0])
        sample_type, period_type = dict(fields(profile[1][0])), dict(fields(profile[5][0]))
        assert (strings[sample_type[1]], strings[sample_type[2]]) == ("samples", "count")
        assert (strings[period_type[1]], strings[period_type[2]]) == ("cpu", "nanoseconds")
        assert profile[6][0] > 0 and profile[4][0] > 0, "no period or duration"
        for sample in profile.get(2, []):
            sample = message(sample)
            assert 0 < sample[1][0] < len(dictionary[7]), "a stack index outside the table"
            assert packed(sample[4][0])[0] > 0, "a sample without a count"
            assert attribute(packed(sample[2][0])[0])[0] == "thread.name"
        assert resource["process.pid"] > 0, f"a resource of no process: {resource}"
        processes.append({"attributes": resource, "scope": {"name": "profcpu"}})
        if resource.get("process.pid") == int(sys.argv[2]):
            pod_seen += 1
            pod_times.add(profile[3][0])
            assert resource == {"service.name": "shop/shop", "k8s.namespace.name": "shop",
                                "k8s.pod.name": "shop-7c6d9b5f8-x2k4q",
                                "process.pid": int(sys.argv[2]),
                                "process.executable.name": "bash"}, resource
    real = decoded[path]["resources"]
    for resource in real:
        assert resource["scope"]["version"], "the scope has no version"
        del resource["scope"]["version"]
    assert real == processes, f"by hand {processes}, by the OpenTelemetry decoder {real}"
    print(f"{path}: {len(processes)} processes, {len(strings)} strings, frame types {sorted(frame_types)}")
assert pod_seen, "the pod's process was not exported"
assert len(pod_times) == pod_seen, "a period of the pod's process was exported twice"
PY

echo "--- the other way round: Pyroscope down, OTLP up"
pyroscope_port=$(free_port) otlp_port=$(free_port) spool=$workdir/spool-reverse
mkdir -p "$workdir/reverse-pyroscope" "$workdir/reverse-otlp"
start python3 "$tests_dir/pyroscope_receiver.py" "$otlp_port" "$workdir/reverse-otlp" ok
until [[ -e $workdir/reverse-otlp/ready ]]; do sleep 0.1; done
start "$PROFCPU" agent --push "http://127.0.0.1:$pyroscope_port" --otlp "http://127.0.0.1:$otlp_port" \
	--push-interval 2 --spool "$spool" --no-events 2>"$workdir/agent.err"
agent_pid=$started_pid
kept_series() { find "$spool" -name 'series-*.labels' 2>/dev/null | sort; }
three_periods_kept() {
	(($(encoded) < 6)) || fail "$(encoded) periods read while Pyroscope was down, $(kept_series | wc -l) series kept"
	(($(kept_series | sed 's|/series-.*||' | sort -u | wc -l) >= 3))
}
until_agent three_periods_kept
start python3 "$tests_dir/pyroscope_receiver.py" "$pyroscope_port" "$workdir/reverse-pyroscope" ok
pyroscope_took() { [[ -z $(kept_series) && -e $workdir/reverse-pyroscope/1.query ]]; }
until_agent pyroscope_took
after=$(($(encoded) + 1))
one_more() { (($(encoded) >= after)); }
until_agent one_more
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
cat "$workdir/agent.err"
grep -q "takes profiles again" "$workdir/agent.err" || fail "Pyroscope's return was not said"
! grep -q "cannot export OTLP" "$workdir/agent.err" || fail "the OTLP receiver was said to be down"
periods=$(grep -cE 'samples of [1-9][0-9]* processes' "$spool/agent.log")
otlp_requests=$(ls "$workdir"/reverse-otlp/*.otlp | wc -l)
echo "$periods periods with processes; $otlp_requests OTLP requests; $(ls "$workdir"/reverse-pyroscope/*.pb.gz | wc -l) pushes"
((otlp_requests == periods)) || fail "$otlp_requests OTLP requests for $periods periods"
(($(ls "$workdir"/reverse-otlp/*.otlp | xargs md5sum | awk '{print $1}' | sort | uniq -d | wc -l) == 0)) ||
	fail "an OTLP request was sent twice while Pyroscope was down"
(($(ls "$workdir"/reverse-pyroscope/*.pb.gz | xargs md5sum | awk '{print $1}' | sort | uniq -d | wc -l) == 0)) ||
	fail "a profile was pushed to Pyroscope twice"
# The periods with the pod's samples, as the OTLP requests (each once) hold them.
pod_periods=$(python3 - "$workdir/reverse-otlp" "$pod_pid" "$tests_dir" <<'PY'
import glob, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import fields, message

def pids(path):
    for resource_profiles in message(open(path, "rb").read())[1]:
        for pair in message(message(resource_profiles)[1][0]).get(1, []):
            pair = dict(fields(pair))
            if pair[1] == b"process.pid":
                yield dict(fields(pair[2]))[3]
print(sum(int(sys.argv[2]) in set(pids(path)) for path in glob.glob(sys.argv[1] + "/*.otlp")))
PY
)
pod_pushes=$(grep -l 'label.service_name=shop/shop' "$workdir"/reverse-pyroscope/*.query | wc -l)
((pod_pushes == pod_periods)) || fail "$pod_pushes pushes of the pod for $pod_periods periods with its samples"

echo "--- a period whose perf.data cannot be read: its runtime events still go"
build_dotnet_app EventStacks
events_port=$(free_port) spool=$workdir/spool-events
mkdir -p "$workdir/events"
start python3 "$tests_dir/pyroscope_receiver.py" "$events_port" "$workdir/events" ok
until [[ -e $workdir/events/ready ]]; do sleep 0.1; done
start "$PROFCPU" agent --otlp "http://127.0.0.1:$events_port" --push-interval 2 --spool "$spool" \
	--events exceptions 2>"$workdir/agent.err"
agent_pid=$started_pid
until_agent test -e "$spool/agent.log"
start_dotnet_app "$workdir/EventStacks/eventstacks.dll" "$workdir/go" 100
app_pid=$started_pid app_output=$started_output
session_runs() { grep -q "EventPipe session .*/runtime-$app_pid-" "$spool/agent.log"; }
until_agent session_runs
touch "$workdir/go"
# The period being sampled, just begun (its folder the newest): its
# perf.data replaced by bytes that are no perf.data.
newest_period() { find "$spool" -maxdepth 1 -name 'period-*' | sort | tail -1; }
before=$(newest_period)
period_changed() { [[ $(newest_period) != "$before" && -e $(newest_period)/perf.data ]]; }
until_agent period_changed
sabotaged=$(newest_period)
echo "not a perf.data" >"$workdir/garbage"
mv -T "$workdir/garbage" "$sabotaged/perf.data"
# Said once its request was sent.
sabotaged_read() { grep -q "^$sabotaged: 0 samples of 0 processes" "$spool/agent.log"; }
until_agent sabotaged_read
# The app stopped two periods before the agent: the last, cut short by the
# stop, has neither its events nor (maybe) any sample.
kill "$app_pid"
after=$(($(encoded) + 2))
two_more() { (($(encoded) >= after)); }
until_agent two_more
kill -INT "$agent_pid"
wait "$agent_pid" || { cat "$workdir/agent.err"; fail "the agent exited with status $?"; }
python3 - "$workdir/events" "$app_pid" "$tests_dir" <<'PY' || fail "the runtime events of the unreadable period were not exported"
import glob, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import fields, message

found = False
for path in sorted(glob.glob(sys.argv[1] + "/*.otlp")):
    request = message(open(path, "rb").read())
    strings = [text.decode() for text in message(request[2][0])[5]]
    types, app_types = set(), set()
    for resource_profiles in request[1]:
        resource_profiles = message(resource_profiles)
        pid = None
        for pair in message(resource_profiles[1][0]).get(1, []):
            pair = dict(fields(pair))
            if pair[1] == b"process.pid":
                pid = dict(fields(pair[2]))[3]
        for profile in message(resource_profiles[2][0]).get(2, []):
            sample_type = dict(fields(message(profile)[1][0]))
            kind = (strings[sample_type[1]], strings[sample_type[2]])
            types.add(kind)
            if pid == int(sys.argv[2]):
                app_types.add(kind)
    print(f"{path}: {sorted(types)}")
    if ("samples", "count") not in types and ("exceptions", "count") in app_types:
        found = True
assert found, "no request with the app's exceptions and no CPU profile"
PY
echo "ok: OTLP profiles with their resources, dictionary and frame types, its own credentials, kept while its receiver was down; runtime events exported without their period's samples"
