#!/usr/bin/env bash
# profcpu collect --push and profcpu push send profile.pb.gz to a Pyroscope
# server's ingest API. No Pyroscope server can run here: a local HTTP
# receiver on loopback (pyroscope_receiver.py) stands in for it, keeps what
# it gets, and `go tool pprof` decodes that. A server that is down, slow or
# failing gives one clear error, and the outputs are still written.
source "$(dirname "$0")/lib.sh"

command -v go >/dev/null || skip "go (golang-go) is not installed: scripts/install-deps installs it"
export HOME=$workdir GOCACHE=$workdir/gocache

# start_receiver MODE [AUTHORIZATION [NAME]]: a receiver in
# $workdir/received-NAME (default MODE) that wants AUTHORIZATION, if
# given; its URL in $url, its folder in $received.
start_receiver() {
	local port name=${3:-$1}
	port=$(free_port)
	mkdir -p "$workdir/received-$name"
	start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received-$name" "$1" ${2:+"$2"}
	until [[ -e $workdir/received-$name/ready ]]; do sleep 0.1; done
	url=http://127.0.0.1:$port
	received=$workdir/received-$name
}

# expect_push_failure NAME COMMAND...: COMMAND must exit 1; its stderr is
# kept in $workdir/NAME.err.
expect_push_failure() {
	local name=$1 status=0
	shift
	"$@" 2>"$workdir/$name.err" || status=$?
	cat "$workdir/$name.err"
	((status == 1)) || fail "$name: exit status $status, expected 1"
}

# query_value FILE KEY
query_value() {
	sed -n "s/^$2=//p" "$1"
}

start "$WORKLOAD_SPLIT" 120
pid=$started_pid

echo "--- collect --push: one profile, named and labelled from the target"
start_receiver ok
"$PROFCPU" collect -pid "$pid" -duration 2 -F 499 -o "$workdir/capture" --push "$url" --label env=test
received=$workdir/received-ok
[[ -s $received/1.pb.gz && ! -e $received/2.query ]] || fail "the receiver did not get exactly one profile"
cat "$received/1.query"
name=$(query_value "$received/1.query" name)
[[ $(query_value "$received/1.query" path) == /push.v1.PusherService/Push ]] ||
	fail "not POST /push.v1.PusherService/Push"
[[ $(query_value "$received/1.query" label.__name__) == process_cpu ]] || fail "__name__ is not process_cpu"
[[ $(query_value "$received/1.query" label.service_name) == workload_split ]] ||
	fail "service_name is not the process name"
[[ $(query_value "$received/1.query" sampleRate) == 499 ]] || fail "sampleRate is not 499"
[[ $name == "workload_split.cpu{process=workload_split,hostname=$(hostname),env=test}" ]] ||
	fail "unexpected name: $name"
from=$(query_value "$received/1.query" from)
until=$(query_value "$received/1.query" until)
now=$(date +%s)
((from <= until && until <= now + 1 && now - from < 120)) || fail "from=$from until=$until is not the capture's time (now $now)"
total=$(folded total "$workdir/capture/folded_stacks.out")
go tool pprof -top -sample_index=samples "$received/1.pb.gz" >"$workdir/top.txt" 2>&1 ||
	{ cat "$workdir/top.txt"; fail "go tool pprof cannot read the pushed profile"; }
grep -q "Total samples = $total\b" "$workdir/top.txt" ||
	fail "the pushed profile holds $(grep -o 'Total samples = [0-9]*' "$workdir/top.txt"), folded $total"
grep -q 'spin_sixty' "$workdir/top.txt" || fail "the pushed profile does not name spin_sixty"

echo "--- profcpu push DIR URL --app"
"$PROFCPU" push "$workdir/capture" "$url" --app 'checkout api' --label 'team=a,b'
# The push API takes any text as a label's value: nothing to clean.
[[ $(query_value "$received/2.query" label.service_name) == "checkout api" ]] || fail "service_name is not --app"
[[ $(query_value "$received/2.query" label.team) == "a,b" ]] || fail "team is not a,b"
cmp -s "$received/2.pb.gz" "$workdir/capture/profile.pb.gz" || fail "push sent another file"

echo "--- --api ingest: the legacy API"
"$PROFCPU" push "$workdir/capture" "$url" --api ingest --app 'checkout api' --label 'team=a,b'
cat "$received/3.query"
[[ $(query_value "$received/3.query" path) == /ingest ]] || fail "not POST /ingest"
[[ $(query_value "$received/3.query" format) == pprof ]] || fail "format is not pprof"
[[ $(query_value "$received/3.query" sampleRate) == 499 ]] || fail "sampleRate is not 499"
name=$(query_value "$received/3.query" name)
[[ $name == "checkout_api.cpu{team=a_b}" ]] || fail "unexpected name: $name"
cmp -s "$received/3.pb.gz" "$workdir/capture/profile.pb.gz" || fail "push --api ingest sent another file"
status=0
"$PROFCPU" push "$workdir/capture" "$url" --api grpc 2>"$workdir/api.err" || status=$?
((status == 2)) && grep -q "unknown --api grpc: give push or ingest" "$workdir/api.err" ||
	fail "an unknown --api is not refused clearly"

echo "--- a receiver that refuses the request (400): one try; one over its limits (429): three"
start_receiver reject
expect_push_failure reject "$PROFCPU" push "$workdir/capture" "$url"
grep -q "the server answered HTTP 400: " "$workdir/reject.err" || fail "the 400 is not in the error"
[[ -e $received/1.query && ! -e $received/2.query ]] || fail "a 400 was tried again"
start_receiver limited
expect_push_failure limited "$PROFCPU" push "$workdir/capture" "$url"
grep -q "the server answered HTTP 429: " "$workdir/limited.err" || fail "the 429 is not in the error"
[[ -e $received/3.query && ! -e $received/4.query ]] || fail "a 429 was not tried three times"

echo "--- collect --push-interval: a profile each period"
start_receiver ok
periodic=$workdir/received-ok
rm -f "$periodic"/*.query "$periodic"/*.pb.gz
"$PROFCPU" collect -pid "$pid" -duration 3 -F 499 -o "$workdir/periodic" --push "$url" --push-interval 1
[[ -s $periodic/3.pb.gz && ! -e $periodic/4.query ]] || fail "three periods of 1 s did not push three profiles"
previous_until=0
for period in 1 2 3; do
	from=$(query_value "$periodic/$period.query" from)
	until=$(query_value "$periodic/$period.query" until)
	samples=$(go tool pprof -top -sample_index=samples "$periodic/$period.pb.gz" 2>&1 | grep -o 'Total samples = [0-9]*')
	echo "period $period: from $from until $until, $samples"
	((from <= until && from + 1 >= previous_until)) || fail "period $period is not after the one before"
	[[ $samples =~ [1-9] ]] || fail "period $period holds no samples"
	previous_until=$until
done

echo "--- server down"
down_url=http://127.0.0.1:$(free_port)
expect_push_failure down "$PROFCPU" collect -pid "$pid" -duration 1 -o "$workdir/down" --push "$down_url" \
	--push-timeout 2
grep -q "cannot push $workdir/down/profile.pb.gz to $down_url: .*onnect" "$workdir/down.err" ||
	fail "no clear error for a server that is down"
assert_file "$workdir/down/flamegraph.svg"
assert_file "$workdir/down/profile.pb.gz"

echo "--- server slow"
start_receiver slow
expect_push_failure slow "$PROFCPU" push "$workdir/capture" "$url" --push-timeout 1
grep -q "cannot push .*: no answer from 127.0.0.1 in 1.0 s" "$workdir/slow.err" || fail "no clear error for a slow server"
[[ -e $workdir/received-slow/3.query && ! -e $workdir/received-slow/4.query ]] ||
	fail "a slow server should get three tries"

echo "--- server failing"
start_receiver error
expect_push_failure error "$PROFCPU" push "$workdir/capture" "$url"
grep -q "the server answered HTTP 500: ingester unavailable" "$workdir/error.err" ||
	fail "the server's answer is not in the error"
[[ -e $workdir/received-error/3.query ]] || fail "a failing server should get three tries"
echo "--- credentials: basic auth from the URL, never printed"
start_receiver ok "Basic $(printf '%s' 'user 1:s3cret@!' | base64)" basic-url
"$PROFCPU" push "$workdir/capture" "http://user%201:s3cret%40%21@${url#http://}" >"$workdir/basic-url.out" 2>&1 ||
	{ cat "$workdir/basic-url.out"; fail "the push with the URL's credentials failed"; }
cat "$workdir/basic-url.out"
grep -q "pushed $workdir/capture/profile.pb.gz to $url\$" "$workdir/basic-url.out" ||
	fail "the push does not say where it went without the user info"
grep -q 's3cret' "$workdir/basic-url.out" && fail "the password was printed"

echo "--- credentials: password file, tenant and headers; a bearer token"
printf 'p4ss-from-file\n' >"$workdir/password"
start_receiver ok "Basic $(printf '%s' '123456:p4ss-from-file' | base64)" basic-file
"$PROFCPU" push "$workdir/capture" "$url" --basic-auth-user 123456 \
	--basic-auth-password-file "$workdir/password" --tenant team-a --header 'X-Team: payments'
cat "$received/1.query"
[[ $(query_value "$received/1.query" tenant) == team-a ]] || fail "no X-Scope-OrgID: team-a"
[[ $(query_value "$received/1.query" header.X-Team) == payments ]] || fail "no X-Team header"
start_receiver ok "Basic $(printf '%s' '123456:p4ss-from-env' | base64)" basic-env
PUSH_PASSWORD=p4ss-from-env "$PROFCPU" push "$workdir/capture" "$url" --basic-auth-user 123456 \
	--basic-auth-password-env PUSH_PASSWORD
printf 'eyJ0b2tlbi1mcm9tLWZpbGUifQ' >"$workdir/token"
start_receiver ok "Bearer eyJ0b2tlbi1mcm9tLWZpbGUifQ" bearer
"$PROFCPU" push "$workdir/capture" "$url" --bearer-token-file "$workdir/token"

echo "--- credentials refused: said which, once, no secret"
printf 'wrong-password' >"$workdir/wrong"
start_receiver ok "Basic $(printf '%s' '123456:right' | base64)" refused
expect_push_failure refused "$PROFCPU" push "$workdir/capture" "http://someone:url-secret@${url#http://}" \
	--basic-auth-user 123456 --basic-auth-password-file "$workdir/wrong"
grep -q "the server refused the basic auth of user 123456 (its password from $workdir/wrong): HTTP 401: invalid credentials" \
	"$workdir/refused.err" || fail "the refusal does not name the credential"
grep -q 'wrong-password\|url-secret\|someone' "$workdir/refused.err" && fail "a secret was printed"
[[ -e $received/1.query && ! -e $received/2.query ]] || fail "a refused credential was tried again"
expect_push_failure anonymous "$PROFCPU" push "$workdir/capture" "$url"
grep -q "the server wants credentials (HTTP 401: invalid credentials): give --basic-auth-user" \
	"$workdir/anonymous.err" || fail "no hint at the missing credentials"

echo "--- credentials that cannot be read: one line, before anything is sent"
status=0
"$PROFCPU" push "$workdir/capture" "$url" --basic-auth-user u \
	--basic-auth-password-file "$workdir/missing" 2>"$workdir/missing.err" || status=$?
cat "$workdir/missing.err"
((status == 2)) || fail "a missing password file: exit status $status, expected 2"
grep -q "cannot read --basic-auth-password-file $workdir/missing: No such file" "$workdir/missing.err" ||
	fail "no clear error for a missing password file"
status=0
"$PROFCPU" push "$workdir/capture" "$url" --header $'X-Evil: a\r\nHost: b' 2>"$workdir/header.err" || status=$?
((status == 2)) || fail "a header with a line break: exit status $status, expected 2"
[[ ! -e $received/3.query ]] || fail "a push went out with bad options"
echo "ok: pushed, named, labelled; down, slow and failing servers reported; credentials sent, refusals named, no secret printed"
