"""A loopback HTTP proxy for the proxy tests: forwards plain requests
(absolute-URI GET/HEAD) and tunnels CONNECT, as squid would. Python 3
standard library only; listens on 127.0.0.1.

    with Proxy() as px:
        px.alias("mirror.invalid", "127.0.0.1")   # names only it resolves
        env = {"https_proxy": px.url, "http_proxy": px.url}
        ...
        px.requests     # ["GET http://mirror.invalid:port/x", "CONNECT h:p"]
"""

import http.client
import select
import socket
import socketserver
import threading
import urllib.parse


class _Handler(socketserver.StreamRequestHandler):

    def handle(self):
        px = self.server.owner
        line = self.rfile.readline(65536).decode("latin-1").rstrip("\r\n")
        if not line:
            return
        headers = []
        while True:
            h = self.rfile.readline(65536).decode("latin-1")
            if h in ("\r\n", "\n", ""):
                break
            headers.append(h.rstrip("\r\n"))
        with px.lock:
            px._requests.append(line)
        method, target, _ = (line.split(" ", 2) + ["", ""])[:3]
        if method == "CONNECT":
            host, _, port = target.rpartition(":")
            self.tunnel(px.resolve(host), int(port))
        else:
            self.forward(method, target, headers)

    def tunnel(self, host, port):
        try:
            up = socket.create_connection((host, port), timeout=10)
        except OSError:
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\n\r\n")
            return
        self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        self.wfile.flush()
        socks = [self.connection, up]
        try:
            while True:
                r, _, _ = select.select(socks, [], [], 10)
                if not r:
                    return
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    (up if s is self.connection else self.connection
                     ).sendall(data)
        finally:
            up.close()

    def forward(self, method, target, headers):
        u = urllib.parse.urlsplit(target)
        px = self.server.owner
        if u.scheme != "http" or not u.hostname:
            self.wfile.write(b"HTTP/1.1 400 Bad Request\r\n"
                             b"Content-Length: 0\r\n\r\n")
            return
        conn = http.client.HTTPConnection(px.resolve(u.hostname),
                                          u.port or 80, timeout=10)
        path = u.path + ("?" + u.query if u.query else "")
        fwd = {}
        for h in headers:
            k, _, v = h.partition(":")
            if k.strip().lower() not in ("proxy-connection", "connection",
                                         "proxy-authorization"):
                fwd[k.strip()] = v.strip()
        try:
            conn.request(method, path or "/", headers=fwd)
            resp = conn.getresponse()
        except OSError:
            self.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\n"
                             b"Content-Length: 0\r\n\r\n")
            return
        out = ["HTTP/1.1 %d %s" % (resp.status, resp.reason)]
        for k, v in resp.getheaders():
            if k.lower() not in ("connection", "transfer-encoding"):
                out.append("%s: %s" % (k, v))
        body_len = resp.getheader("Content-Length")
        out.append("Connection: close")
        self.wfile.write(("\r\n".join(out) + "\r\n\r\n").encode("latin-1"))
        while method != "HEAD":
            chunk = resp.read(65536)
            if not chunk:
                break
            self.wfile.write(chunk)
        del body_len
        conn.close()


class _Server(socketserver.ThreadingMixIn, socketserver.TCPServer):
    daemon_threads = True
    allow_reuse_address = True


class Proxy(object):

    def __init__(self):
        self.lock = threading.Lock()
        self._requests = []
        self._alias = {}
        self._srv = None

    def alias(self, name, addr):
        self._alias[name] = addr

    def resolve(self, host):
        return self._alias.get(host, host)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self._srv.server_address[1]

    @property
    def requests(self):
        with self.lock:
            return list(self._requests)

    def __enter__(self):
        self._srv = _Server(("127.0.0.1", 0), _Handler)
        self._srv.owner = self
        t = threading.Thread(target=self._srv.serve_forever,
                             kwargs={"poll_interval": 0.05}, daemon=True)
        t.start()
        return self

    def __exit__(self, *exc):
        self._srv.shutdown()
        self._srv.server_close()
