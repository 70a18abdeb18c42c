#!/usr/bin/env bash
# profcpu agent --otlp URL: each period's profiles as one OTLP/HTTP
# ExportProfilesServiceRequest (opentelemetry-proto profiles/v1development)
# to URL/v1development/profiles, gzip-compressed, with the
# OTLP-Profiles-Development-Version header: a ResourceProfiles per process with the attributes the
# OpenTelemetry eBPF profiler and the k8sattributes processor set
# (service.name, k8s.namespace.name, k8s.pod.name, process.pid,
# process.executable.name), one Profile each (samples/count, period
# cpu/nanoseconds), and one dictionary whose tables start with their zero
# value, each location with its profile.frame.type. A "pod" stands in for
# Kubernetes' (a mount namespace with the pod's hostname and namespace
# file). Each request is decoded by hand (tests/protobuf_wire.py) against
# the field numbers of opentelemetry-proto; with $OTLP_PROTO_DIR (a
# checkout of open-telemetry/opentelemetry-proto) `protoc-c --decode` reads
# it too.
#
# The agent runs in a PID namespace of its own. No OpenTelemetry Collector
# can be installed here: the receiver is the tests' stand-in
# (tests/pyroscope_receiver.py).
if [[ ${AGENT_OTLP_INSIDE:-} != 1 ]]; then
	AGENT_OTLP_INSIDE=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
source "$(dirname "$0")/lib.sh"

echo shop-7c6d9b5f8-x2k4q >"$workdir/hostname"
start unshare --mount bash -c 'mount --bind "$1" /etc/hostname && mount -t tmpfs pod /run &&
	mkdir -p /run/secrets/kubernetes.io/serviceaccount &&
	echo shop >/run/secrets/kubernetes.io/serviceaccount/namespace || exit 1
	end=$((SECONDS + 60)); while ((SECONDS < end)); do :; done' pod "$workdir/hostname"
pod_pid=$started_pid

port=$(free_port)
mkdir -p "$workdir/received"
start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received" ok
until [[ -e $workdir/received/ready ]]; do sleep 0.1; done
start "$PROFCPU" agent --otlp "http://127.0.0.1:$port" --push-interval 2 --spool "$workdir/spool" \
	--header 'X-Team: payments' 2>"$workdir/agent.err"
agent_pid=$started_pid
until [[ -e $workdir/received/2.otlp ]]; do
	kill -0 "$agent_pid" 2>/dev/null || { cat "$workdir/agent.err"; fail "the agent stopped"; }
	sleep 0.2
done
kill -INT "$agent_pid"
wait "$agent_pid" || fail "the agent exited with status $?"
cat "$workdir/agent.err"
cat "$workdir/received/1.query"
grep -qx 'path=/v1development/profiles' "$workdir/received/1.query" || fail "not POST /v1development/profiles"
grep -qx 'content_type=application/x-protobuf' "$workdir/received/1.query" || fail "not application/x-protobuf"
grep -qx 'version=1' "$workdir/received/1.query" || fail "no OTLP-Profiles-Development-Version: 1"
grep -qx 'content_encoding=gzip' "$workdir/received/1.query" || fail "the request is not gzip-compressed"
grep -qx 'header.X-Team=payments' "$workdir/received/1.query" || fail "no X-Team header"

python3 - "$workdir/received" "$pod_pid" "$tests_dir" <<'PY' || fail "the OTLP requests do not hold what they should"
import glob, sys
sys.path.insert(0, sys.argv[3])
from protobuf_wire import fields, message, packed

def any_value(data):
    value = dict(fields(data))
    return value[1].decode() if 1 in value else value.get(3)

pod_seen = False
for path in sorted(glob.glob(sys.argv[1] + "/*.otlp")):
    request = message(open(path, "rb").read())
    dictionary = message(request[2][0])
    strings = [text.decode() for text in dictionary[5]]
    for table in (1, 2, 3, 4, 6, 7):
        assert dictionary[table][0] == b"", f"table {table} does not start with its zero value"
    assert strings[0] == "", "string_table[0] is not empty"
    attributes = [dict(fields(entry)) for entry in dictionary[6]]
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
    processes = 0
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
        processes += 1
        if resource.get("process.pid") == int(sys.argv[2]):
            pod_seen = True
            assert resource == {"service.name": "shop/shop", "k8s.namespace.name": "shop",
                                "k8s.pod.name": "shop-7c6d9b5f8-x2k4q",
                                "process.pid": int(sys.argv[2]),
                                "process.executable.name": "bash"}, resource
    print(f"{path}: {processes} processes, {len(strings)} strings, frame types {sorted(frame_types)}")
assert pod_seen, "the pod's process was not exported"
PY

if [[ -n ${OTLP_PROTO_DIR:-} ]]; then
	protoc-c --proto_path="$OTLP_PROTO_DIR" \
		--decode=opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto \
		<"$workdir/received/1.otlp" >"$workdir/decoded.txt" || fail "protoc-c cannot decode the request"
	grep -c 'resource_profiles {' "$workdir/decoded.txt"
	grep -q 'string_value: "shop/shop"' "$workdir/decoded.txt" || fail "protoc-c does not see the pod's service"
fi
echo "ok: OTLP profiles with their resources, dictionary and frame types"
