#!/usr/bin/env python3
"""A stand-in for a Pyroscope server, which cannot run on this machine: it
takes POST /ingest as Pyroscope's HTTP ingest API does (query parameters
name, from, until, sampleRate, format; the pprof profile in the multipart
field "profile") and keeps each request in OUT_DIR: N.query (the decoded
query, one key=value a line; then connection=K: the request came on the
Kth connection the receiver accepted, received=SECONDS: when, as Unix
time, and the headers that carry credentials or were added by the user:
authorization=, tenant= (X-Scope-OrgID), header.NAME= for X-* headers)
and N.pb.gz (the profile). The test
decodes the profiles with `go tool pprof`. It speaks HTTP/1.1 and keeps a
connection open for the next request, as Pyroscope's server does.

usage: pyroscope_receiver.py PORT OUT_DIR MODE [AUTHORIZATION]
MODE: ok (answers 200), close (answers 200 and closes the connection
without saying so, as a server whose idle timeout has passed), slow
(answers after 10 s), error (answers 500).
AUTHORIZATION: the Authorization header a request must carry, as
Grafana Cloud checks its basic auth; any other gets 401 (and is still
kept, to show what came).
Serves until killed; writes OUT_DIR/ready once it listens.
"""
import email.parser
import http.server
import itertools
import os
import sys
import threading
import time
import urllib.parse

port, out_dir, mode = int(sys.argv[1]), sys.argv[2], sys.argv[3]
required_authorization = sys.argv[4] if len(sys.argv) > 4 else None


class Ingest(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    requests = itertools.count(1)
    connections = itertools.count(1)
    lock = threading.Lock()

    def setup(self):
        super().setup()
        with Ingest.lock:
            self.connection_number = next(Ingest.connections)

    def do_POST(self):
        url = urllib.parse.urlsplit(self.path)
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with Ingest.lock:
            number = next(Ingest.requests)
        query = urllib.parse.parse_qs(url.query)
        with open(os.path.join(out_dir, f"{number}.query"), "w") as out:
            out.write(f"path={url.path}\n")
            for key, values in query.items():
                out.write(f"{key}={values[0]}\n")
            out.write(f"connection={self.connection_number}\n")
            out.write(f"received={time.time():.3f}\n")
            if "Authorization" in self.headers:
                out.write(f"authorization={self.headers['Authorization']}\n")
            if "X-Scope-OrgID" in self.headers:
                out.write(f"tenant={self.headers['X-Scope-OrgID']}\n")
            for name, value in self.headers.items():
                if name.lower().startswith("x-") and name.lower() != "x-scope-orgid":
                    out.write(f"header.{name}={value}\n")
        message = email.parser.BytesParser().parsebytes(
            b"Content-Type: " + self.headers["Content-Type"].encode() + b"\r\n\r\n" + body)
        for part in message.walk():
            if part.get_param("name", header="content-disposition") == "profile":
                with open(os.path.join(out_dir, f"{number}.pb.gz"), "wb") as out:
                    out.write(part.get_payload(decode=True))
        if mode == "slow":
            time.sleep(10)
        code, answer = (500, b"ingester unavailable\n") if mode == "error" else (200, b"")
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


server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Ingest)
open(os.path.join(out_dir, "ready"), "w").close()
server.serve_forever()
