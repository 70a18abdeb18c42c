#!/usr/bin/env python3
"""A company's egress proxy, as profcpu's pushes meet it: CONNECT HOST:PORT
tunnels (HTTPS) and requests to absolute URLs (HTTP), each relayed to its
server. Each request line it takes is appended to LOG.
usage: forward_proxy.py PORT LOG"""
import select
import socket
import socketserver
import sys
import urllib.parse

port, log = int(sys.argv[1]), sys.argv[2]


def relay(a, b):
    sockets = [a, b]
    while True:
        readable, _, _ = select.select(sockets, [], [], 60)
        if not readable:
            return
        for source in readable:
            try:
                data = source.recv(65536)
                if data:
                    (b if source is a else a).sendall(data)
            except OSError:  # a client that gave up (an untrusted certificate)
                data = b""
            if not data:
                return


class Proxy(socketserver.StreamRequestHandler):
    def handle(self):
        line = self.rfile.readline().decode("latin-1").rstrip("\r\n")
        with open(log, "a") as out:
            out.write(line + "\n")
        method, target, _ = line.split(" ", 2)
        headers = []
        while True:
            header = self.rfile.readline()
            if header in (b"\r\n", b"\n", b""):
                break
            headers.append(header)
        if method == "CONNECT":
            host, _, server_port = target.rpartition(":")
            server = socket.create_connection((host, int(server_port)))
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
        else:
            url = urllib.parse.urlsplit(target)
            server = socket.create_connection((url.hostname, url.port or 80))
            path = url.path + ("?" + url.query if url.query else "")
            server.sendall(f"{method} {path} HTTP/1.1\r\n".encode() + b"".join(headers) + b"\r\n")
            pending = self.rfile.peek() if hasattr(self.rfile, "peek") else b""
            if pending:
                server.sendall(self.rfile.read(len(pending)))
        relay(self.connection, server)
        server.close()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


with Server(("127.0.0.1", port), Proxy) as server:
    open(log, "a").close()
    server.serve_forever()
