#!/usr/bin/env python3
"""A stand-in for a Pyroscope server, which cannot run on this machine: it
takes both of Pyroscope's push APIs and keeps each profile it gets in
OUT_DIR as N.pb.gz (the gzipped pprof profile) and N.query (one key=value
a line):

- POST /push.v1.PusherService/Push (Connect, Content-Type
  application/proto): a push.v1.PushRequest, decoded by hand
  (protobuf_wire.py); each series' labels as label.NAME= lines, in their
  order, and its sample's ID as id=. So that the tests read both APIs
  alike, name= writes the series as the ingest API names it
  (SERVICE.KIND{KEY=VALUE,...}: KIND cpu for __name__ process_cpu, else
  the __name__ itself, one of those Pyroscope's .NET profiler sends;
  service_name first, __name__ left out) and
  from=, until=, sampleRate= come from the profile itself.
- POST /ingest (the legacy API): the query parameters name, from, until,
  sampleRate, format; the pprof profile in the multipart field "profile".
- POST /v1development/profiles, as an OpenTelemetry Collector's OTLP/HTTP
  receiver takes profiles: the body, gunzipped when its Content-Encoding
  says gzip, as N.otlp (an ExportProfilesServiceRequest); content_type=,
  content_encoding= and version= (the OTLP-Profiles-Development-Version
  header) in N.query.

Every N.query also holds path=, connection=K (the request came on the Kth
connection the receiver accepted), received=SECONDS (when, as Unix time),
and the headers that carry credentials or were added by the user:
authorization=, tenant= (X-Scope-OrgID), header.NAME= for X-* headers.
It speaks HTTP/1.1 and keeps a connection open for the next request, as
Pyroscope's server does.

usage: pyroscope_receiver.py PORT OUT_DIR MODE [AUTHORIZATION]
MODE: ok (answers 200), close (answers 200 and closes the connection
without saying so, as a server whose idle timeout has passed), slow
(answers after 10 s), error (answers 500), reject (answers 400), limited
(answers 429, as a server over its tenant's limits).
AUTHORIZATION: the Authorization header a request must carry, as
Grafana Cloud checks its basic auth; any other gets 401 (and is still
kept, to show what came).
Serves until killed; writes OUT_DIR/ready once it listens.
"""
import email.parser
import gzip
import http.server
import itertools
import os
import sys
import threading
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from protobuf_wire import fields  # noqa: E402

port, out_dir, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
required_authorization = sys.argv[4] if len(sys.argv) > 4 else None
PUSH_PATH = "/push.v1.PusherService/Push"
OTLP_PATH = "/v1development/profiles"
# The profile names (__name__) a series may have, and what the ingest API
# calls each in its name= (SERVICE.KIND): CPU, and the runtime events'
# profiles as Pyroscope's .NET profiler names them.
PROFILE_KINDS = {"process_cpu": "cpu", "memory": "memory", "lock": "lock",
                 "exception": "exception", "wait": "wait"}


def profile_span(gzipped):
    """from, until (Unix seconds) and the sample rate of a pprof profile."""
    profile = dict(fields(gzip.decompress(gzipped)))
    start, duration, period = profile.get(9, 0), profile.get(10, 0), profile.get(12, 0)
    return {"from": start // 10**9, "until": -(-(start + duration) // 10**9),
            "sampleRate": round(1e9 / period) if period else 0}


def push_request_series(body):
    """[(labels [(name, value)], [(raw profile, id)])] of a PushRequest."""
    found = []
    for number, series in fields(body):
        if number != 1:
            continue
        labels, samples = [], []
        for field, value in fields(series):
            if field == 1:
                pair = dict(fields(value))
                labels.append((pair.get(1, b"").decode(), pair.get(2, b"").decode()))
            elif field == 2:
                sample = dict(fields(value))
                samples.append((sample.get(1, b""), sample.get(2, b"").decode()))
        found.append((labels, samples))
    return found


class Receiver(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = itertools.count(1)
    connections = itertools.count(1)
    lock = threading.Lock()

    def setup(self):
        super().setup()
        with Receiver.lock:
            self.connection_number = next(Receiver.connections)

    def keep(self, path, query, profile, suffix=".pb.gz"):
        """Writes N.query and N.pb.gz (or N.SUFFIX)."""
        with Receiver.lock:
            number = next(Receiver.requests)
        with open(os.path.join(out_dir, f"{number}.query"), "w") as out:
            out.write(f"path={path}\n")
            for key, value in query:
                out.write(f"{key}={value}\n")
            out.write(f"connection={self.connection_number}\n")
            out.write(f"received={time.time():.3f}\n")
            if "Authorization" in self.headers:
                out.write(f"authorization={self.headers['Authorization']}\n")
            if "X-Scope-OrgID" in self.headers:
                out.write(f"tenant={self.headers['X-Scope-OrgID']}\n")
            for name, value in self.headers.items():
                if name.lower().startswith("x-") and name.lower() != "x-scope-orgid":
                    out.write(f"header.{name}={value}\n")
        if profile is not None:
            with open(os.path.join(out_dir, f"{number}{suffix}"), "wb") as out:
                out.write(profile)

    def take_push(self, body):
        """A PushRequest: each series' profiles kept; an error or None."""
        if self.headers.get("Content-Type") != "application/proto":
            return 415, b'{"code":"invalid_argument","message":"not application/proto"}'
        for labels, samples in push_request_series(body):
            names = dict(labels)
            if "service_name" not in names or names.get("__name__") not in PROFILE_KINDS:
                return 400, b'{"code":"invalid_argument","message":"no service_name"}'
            series = ",".join(f"{key}={value}" for key, value in labels
                              if key not in ("__name__", "service_name"))
            kind = PROFILE_KINDS[names["__name__"]]
            for raw_profile, sample_id in samples:
                query = [("name", f"{names['service_name']}.{kind}{{{series}}}"), ("id", sample_id)]
                query += [(f"label.{key}", value) for key, value in labels]
                query += list(profile_span(raw_profile).items())
                self.keep(self.path, query, raw_profile)
        return None

    def take_ingest(self, url, body):
        query = [(key, values[0]) for key, values in urllib.parse.parse_qs(url.query).items()]
        message = email.parser.BytesParser().parsebytes(
            b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
        profile = None
        for part in message.walk():
            if part.get_param("name", header="content-disposition") == "profile":
                profile = part.get_payload(decode=True)
        self.keep(url.path, query, profile)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        refused = None
        if url.path == PUSH_PATH:
            refused = self.take_push(body)
        elif url.path == OTLP_PATH:
            encoding = self.headers.get("Content-Encoding", "")
            self.keep(url.path, [("content_type", self.headers.get("Content-Type")),
                                 ("content_encoding", encoding),
                                 ("version", self.headers.get("OTLP-Profiles-Development-Version"))],
                      gzip.decompress(body) if encoding == "gzip" else body, ".otlp")
        else:
            self.take_ingest(url, body)
        if mode == "slow":
            time.sleep(10)
        code, answer = {
            "error": (500, b"ingester unavailable\n"),
            "reject": (400, b'{"code":"invalid_argument","message":"bad profile"}'),
            "limited": (429, b'{"code":"resource_exhausted","message":"ingestion limit"}'),
        }.get(mode, (200, b""))
        if refused:
            code, answer = refused
        if required_authorization and self.headers.get("Authorization") != required_authorization:
            code, answer = 401, b"invalid credentials\n"
        try:
            self.send_response(code)
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
        except BrokenPipeError:  # the client gave up waiting, as it should
            pass
        if mode == "close":
            self.close_connection = True

    def log_message(self, *args):
        pass


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Receiver)
# HTTPS with the certificate and key these variables name (tests/push_proxy.sh).
if os.environ.get("RECEIVER_TLS_CERT"):
    import ssl
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.environ["RECEIVER_TLS_CERT"], os.environ["RECEIVER_TLS_KEY"])
    server.socket = context.wrap_socket(server.socket, server_side=True)
open(os.path.join(out_dir, "ready"), "w").close()
server.serve_forever()
