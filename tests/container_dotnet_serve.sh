#!/usr/bin/env bash
# The sidecar image beside a .NET app in real containers under podman: the
# image stays small, `profcpu ps` in the sidecar shows the app with its
# runtime and container, and `profcpu serve` in the sidecar answers curl from
# the host through a published port: list, capture, the SVG and the zip,
# the refusal of a second capture, a token as soon as it listens beyond
# loopback, and nothing reachable from outside on loopback alone.
#
# The serving sidecars run on podman's default bridge network (rootful
# podman's CNI bridge works here), so that `-p 127.0.0.1:PORT:7071` publishes
# their port to the host as a pod's port is reached in a cluster; the other
# containers keep --network=none.
source "$(dirname "$0")/lib.sh"
source "$tests_dir/podman.sh"
command -v curl >/dev/null || skip "curl is not installed"

# The sidecar image: profcpu with every output, libmicrohttpd and libwget
# on one GnuTLS, what they load, busybox. Unpacked it was 61.6 MB with ICU,
# 23 MB with libcurl; see docs/BENCHMARKS.md. Packed is what a registry
# stores and a node pulls.
"$tests_dir/../container/build-image" localhost/profcpu-test -- "${podman_options[@]}"
size=$(podman image inspect --format '{{.Size}}' localhost/profcpu-test)
packed=$(podman save localhost/profcpu-test 2>/dev/null | gzip | wc -c)
echo "sidecar image: $size bytes unpacked, $packed bytes packed"
((size < 15000000)) || fail "the sidecar image weighs $size bytes unpacked"
((packed < 8000000)) || fail "the sidecar image weighs $packed bytes packed"

# The .NET app image: the runtime folder, the libraries it loads, HotLoop.
build_hotloop
import_dotnet_app localhost/dotnet-app "$workdir/bin"

app=dotnet-app-$$
run -d --name "$app" -e DOTNET_SYSTEM_GLOBALIZATION_INVARIANT=1 localhost/dotnet-app \
	"$dotnet_root/dotnet" /app/hotloop.dll 600 >/dev/null || skip "podman cannot run containers here"
until podman logs "$app" 2>&1 | grep -q ready; do
	podman container exists "$app" && [[ $(podman inspect -f '{{.State.Running}}' "$app") == true ]] ||
		{ podman logs "$app"; fail "the .NET app container stopped"; }
	sleep 0.2
done
app_id=$(podman inspect -f '{{.Id}}' "$app")
privileges=(--cap-add PERFMON --cap-add SYS_PTRACE --security-opt seccomp=unconfined)

# profcpu ps in the sidecar: the app is pid 1 there, .NET with its version,
# in its container.
run --rm --pid=container:"$app" "${privileges[@]}" localhost/profcpu-test profcpu ps |
	tee "$workdir/ps.txt"
grep -qE "^ +1 +1  dotnet +\.NET 1[0-9]\.[0-9]+\.[0-9]+ .* ${app_id:0:12} " "$workdir/ps.txt" ||
	fail "profcpu ps in the sidecar does not list the .NET app as pid 1 of its container"

# profcpu serve in the sidecar, on its own network, through a published port:
# beyond its loopback, so with a token.
mkdir -m 777 "$workdir/out"
port=$(free_port)
token=$(python3 -c 'import secrets; print(secrets.token_hex(16))')
serve=(--pid=container:"$app" "${privileges[@]}" -v "$workdir/out:/profilings" localhost/profcpu-test)
podman run -d --name "serve-$$" -p "127.0.0.1:$port:7071" -e PROFCPU_SERVE_TOKEN="$token" \
	"${serve[@]}" profcpu serve -address 0.0.0.0 -o /profilings >/dev/null
url=http://127.0.0.1:$port
api() { curl -H "Authorization: Bearer $token" "$@"; }
until api -sf "$url/processes" -o "$workdir/processes.json"; do
	[[ $(podman inspect -f '{{.State.Running}}' "serve-$$") == true ]] ||
		{ podman logs "serve-$$"; fail "profcpu serve stopped"; }
	sleep 0.2
done
python3 - "$workdir/processes.json" <<'PY' || fail "/processes does not list the .NET app"
import json, sys
processes = json.load(open(sys.argv[1]))["processes"]
app = [p for p in processes if p["pid"] == 1]
print(app)
assert app and app[0]["runtime"] == ".NET" and app[0]["runtime_version"].startswith("1"), processes
PY

# Every request needs the token.
[[ $(curl -s -o /dev/null -w '%{http_code}' "$url/processes") == 401 ]] ||
	fail "a request without the token was not refused with 401"
[[ $(curl -s -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer wrong' "$url/processes") == 401 ]] ||
	fail "a wrong token was accepted"

# A capture, its flame graph; a second capture at the same time is refused.
api -sf -X POST -D "$workdir/headers" -o "$workdir/flame.svg" "$url/captures?pid=1&seconds=4" &
first_capture=$!
sleep 1.5
code=$(api -s -X POST -D "$workdir/refused-headers" -o "$workdir/refused.json" -w '%{http_code}' \
	"$url/captures?pid=1&seconds=1")
cat "$workdir/refused.json"
[[ $code == 409 ]] || fail "a second capture got $code, not 409"
grep -qi '^Retry-After: [0-9]' "$workdir/refused-headers" || fail "the 409 has no Retry-After"
grep -q '"error": "a capture is already running' "$workdir/refused.json" || fail "the 409 does not say why"
wait "$first_capture" || fail "the capture request failed"
grep -q 'Demo.Program::HotMethod' "$workdir/flame.svg" || fail "the SVG does not name HotMethod"
capture=$(tr -d '\r' <"$workdir/headers" | awk -F': ' 'tolower($1) == "x-profcpu-capture" {print $2}')
echo "capture: $capture"

# Its zip, downloaded afterwards: perfcollect's layout for PerfView.
api -sf -o "$workdir/capture.zip" "$url/captures/$capture/zip" || fail "no zip for $capture"
unzip -l "$workdir/capture.zip" >"$workdir/zip.txt"
grep -q 'perf.data.txt' "$workdir/zip.txt" || fail "the zip has no perf.data.txt"
assert_file "$workdir/out/$capture/flamegraph.svg"

# A client that goes away: the capture still ends in the output folder.
before=$(ls "$workdir/out")
api -s -X POST --max-time 1 "$url/captures?pid=1&seconds=3" >/dev/null || true
for attempt in {1..60}; do
	kept=$(comm -13 <(echo "$before") <(ls "$workdir/out"))
	[[ -n $kept && -s $workdir/out/$kept/flamegraph.svg ]] && break
	sleep 0.5
done
[[ -n $kept && -s $workdir/out/$kept/flamegraph.svg ]] || fail "the capture of a client that went away is lost"

# Bad requests get JSON errors.
code=$(api -s -o "$workdir/bad.json" -w '%{http_code}' -X POST "$url/captures?pid=1&seconds=forever")
cat "$workdir/bad.json"
[[ $code == 400 ]] && grep -q '"error": "seconds must be' "$workdir/bad.json" || fail "a bad duration got $code"
podman rm -f -t 0 "serve-$$" >/dev/null

# Without a token, serve refuses to listen beyond loopback.
status=0
podman run --rm "${serve[@]}" profcpu serve -address 0.0.0.0 2>"$workdir/stderr" || status=$?
cat "$workdir/stderr"
((status == 2)) && grep -q 'set a token' "$workdir/stderr" || fail "serve on 0.0.0.0 started without a token"

# On loopback (the default), it answers inside its network namespace only:
# the published port reaches nothing.
podman run -d --name "loopback-$$" -p "127.0.0.1:$port:7071" "${serve[@]}" \
	profcpu serve -o /profilings >/dev/null
until podman exec "loopback-$$" busybox wget -q -O "/profilings/inside.json" \
	http://127.0.0.1:7071/processes 2>/dev/null; do
	[[ $(podman inspect -f '{{.State.Running}}' "loopback-$$") == true ]] ||
		{ podman logs "loopback-$$"; fail "profcpu serve on loopback stopped"; }
	sleep 0.2
done
grep -q '"runtime": ".NET"' "$workdir/out/inside.json" || fail "serve on loopback does not answer inside"
if curl -s -m 5 -o /dev/null "$url/processes"; then
	fail "serve on loopback answered through the published port"
fi
