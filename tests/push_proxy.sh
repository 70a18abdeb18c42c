#!/usr/bin/env bash
# Pushes go through the proxy the environment names, as company egress
# needs: http_proxy for http:// (the request sent to the proxy with its
# absolute URL), https_proxy for https:// (a CONNECT tunnel, TLS to the
# server inside it, its certificate checked as without a proxy), in lower
# or upper case; no_proxy's hosts and domains go direct. A proxy on
# loopback (forward_proxy.py) logs what it relays; the Pyroscope stand-in
# (pyroscope_receiver.py) speaks HTTPS with a certificate of the test's own
# CA, which profcpu trusts in a mount namespace where it is the system's.
source "$(dirname "$0")/lib.sh"
command -v openssl >/dev/null || skip "openssl is not installed"
unset http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY

start "$WORKLOAD_SPLIT" 60
"$PROFCPU" collect -pid "$started_pid" -duration 1 -o "$workdir/capture" 2>/dev/null

proxy_port=$(free_port)
start python3 "$tests_dir/forward_proxy.py" "$proxy_port" "$workdir/proxy.log"
until [[ -e $workdir/proxy.log ]]; do sleep 0.1; done
proxy=http://127.0.0.1:$proxy_port

# receiver NAME [tls]: a Pyroscope stand-in in $workdir/received-NAME; its port in $port.
receiver() {
	port=$(free_port)
	mkdir -p "$workdir/received-$1"
	if [[ ${2:-} == tls ]]; then
		RECEIVER_TLS_CERT=$workdir/server.pem RECEIVER_TLS_KEY=$workdir/server-key.pem \
			start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received-$1" ok
	else
		start python3 "$tests_dir/pyroscope_receiver.py" "$port" "$workdir/received-$1" ok
	fi
	until [[ -e $workdir/received-$1/ready ]]; do sleep 0.1; done
}
# pushed NAME: whether the receiver NAME got the capture's profile.
pushed() { compgen -G "$workdir/received-$1/*.pb.gz" >/dev/null; }
proxied() { grep -c "$1" "$workdir/proxy.log" || true; }

echo "--- http:// through http_proxy, then HTTP_PROXY"
receiver http
http_proxy=$proxy "$PROFCPU" push "$workdir/capture" "http://127.0.0.1:$port"
pushed http || fail "the push through http_proxy did not arrive"
(($(proxied "^POST http://127.0.0.1:$port/push.v1.PusherService/Push ") == 1)) ||
	fail "the push did not go through the proxy: $(cat "$workdir/proxy.log")"
HTTP_PROXY=$proxy "$PROFCPU" push "$workdir/capture" "http://127.0.0.1:$port"
(($(proxied "^POST http://127.0.0.1:$port/") == 2)) || fail "HTTP_PROXY was not used"

echo "--- no_proxy: direct"
receiver direct
http_proxy=$proxy no_proxy=localhost,127.0.0.1 "$PROFCPU" push "$workdir/capture" "http://127.0.0.1:$port"
pushed direct || fail "the push with no_proxy did not arrive"
(($(proxied ":$port/") == 0)) || fail "no_proxy's host went through the proxy"

echo "--- https:// through https_proxy: CONNECT"
openssl req -x509 -newkey rsa:2048 -nodes -days 1 -subj /CN=profcpu-test-ca \
	-keyout "$workdir/ca-key.pem" -out "$workdir/ca.pem" 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=127.0.0.1 -keyout "$workdir/server-key.pem" \
	-out "$workdir/server.csr" 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\n' >"$workdir/san.ext"
openssl x509 -req -in "$workdir/server.csr" -CA "$workdir/ca.pem" -CAkey "$workdir/ca-key.pem" \
	-CAcreateserial -days 1 -extfile "$workdir/san.ext" -out "$workdir/server.pem" 2>/dev/null
receiver https tls
# trusting ENV...: the command with the test's CA as the system's CA certificates.
trusting() {
	unshare --mount bash -c 'mount --bind "$1" /etc/ssl/certs/ca-certificates.crt && shift && exec env "$@"' \
		trusting "$workdir/ca.pem" "$@"
}
trusting https_proxy=$proxy "$PROFCPU" push "$workdir/capture" "https://127.0.0.1:$port"
pushed https || fail "the push through https_proxy did not arrive"
(($(proxied "^CONNECT 127.0.0.1:$port ") == 1)) || fail "no CONNECT tunnel: $(cat "$workdir/proxy.log")"
trusting HTTPS_PROXY=127.0.0.1:$proxy_port "$PROFCPU" push "$workdir/capture" "https://127.0.0.1:$port"
(($(proxied "^CONNECT 127.0.0.1:$port ") == 2)) || fail "HTTPS_PROXY without a scheme was not used"
# The server's certificate is checked inside the tunnel as without it.
trusted_pushes=$(compgen -G "$workdir/received-https/*.pb.gz" | wc -l)
if https_proxy=$proxy "$PROFCPU" push "$workdir/capture" "https://127.0.0.1:$port" 2>"$workdir/untrusted.err"; then
	fail "a server whose certificate is not trusted took the push through the tunnel"
fi
cat "$workdir/untrusted.err"
grep -q "certificate of 127.0.0.1 is not trusted" "$workdir/untrusted.err" || fail "no one line on the untrusted certificate"
(($(compgen -G "$workdir/received-https/*.pb.gz" | wc -l) == trusted_pushes)) ||
	fail "the untrusted server got a profile"
tunnels=$(proxied "^CONNECT ")
trusting https_proxy=$proxy NO_PROXY=example.com,127.0.0.1 "$PROFCPU" push "$workdir/capture" "https://127.0.0.1:$port"
(($(proxied "^CONNECT ") == tunnels)) || fail "NO_PROXY's host went through the proxy"

echo "--- a proxy that is down: one line"
down=$(free_port)
https_proxy=http://127.0.0.1:$down "$PROFCPU" push "$workdir/capture" "https://127.0.0.1:$port" 2>"$workdir/down.err" &&
	fail "a push through a proxy that is down succeeded"
cat "$workdir/down.err"
grep -q "cannot connect to the proxy 127.0.0.1:$down (https_proxy)" "$workdir/down.err" ||
	fail "no one line naming the proxy that is down"
echo "ok: pushes go through http_proxy and https_proxy, no_proxy's hosts direct"
