"""An HTTP(S) server for the download tests, with faults injected on demand.
Python 3 standard library only (TLS certificates come from the `openssl`
command-line tool). It listens on 127.0.0.1 only.

    srv = FaultServer({"/cudnn/a.tar.xz": data})       # tls=TlsFiles(dir)
    with srv:                                           # start() / stop()
        srv.fault("/cudnn/a.tar.xz", "reset:1000")      # next request only
        srv.always("/cudnn/a.tar.xz", "drip:200")       # every request
        url = srv.url("/cudnn/a.tar.xz")
        ...
        srv.requests    # [Request(path, range, status, sent, fault)]

Faults (a path with none queued behaves as "ok"):

  ok              200, or 206 for "Range: bytes=S-" (416 past the end)
  reset:N         full Content-Length, N body bytes, then a TCP reset
  truncate:N      full Content-Length, N body bytes, then a clean close
  ignore_range    200 with the whole body even to a range request
  bad_range:K     206 whose Content-Range starts K bytes after the asked start
  flip:OFF        the body with the byte at offset OFF changed
  status:CODE     that status with an HTML body (404, 500, ...)
  retry_after:S   503 with "Retry-After: S" and an HTML body
  drip:BPS        the body at BPS bytes per second
  stall_after:N   N bytes at once, then 1 byte per second
  gate:N          N body bytes, then the rest once srv.gate is set (the
                  tests of install while downloading: what happened while
                  the server held the last bytes back)
  redirect:URL    302 to URL
  endless         200 without Content-Length, bytes until the client leaves
  html200         200 with an HTML page instead of the file

Run alone to serve a folder: python3 httpfault.py DIR [--port N]
[--tls CERT KEY] [--fault /path=SPEC ...]
"""

import http.server
import os
import shutil
import socket
import socketserver
import ssl
import struct
import subprocess
import sys
import threading
import time

class Request(object):
    """One request, recorded when it arrives (so the log is in arrival
    order) and completed as it is answered."""

    def __init__(self, path, rng, fault):
        self.path, self.range, self.fault = path, rng, fault
        self.status, self.sent = None, 0

    def __repr__(self):
        return "Request(%r, range=%r, status=%r, sent=%r, fault=%r)" % (
            self.path, self.range, self.status, self.sent, self.fault)

HTML = (b"<!DOCTYPE html><html><head><title>%d</title></head><body>"
        b"<h1>%d</h1><p>This page is not the archive.</p></body></html>\n")


def openssl_problem():
    """None when the openssl command can make certificates, else why not."""
    if not shutil.which("openssl"):
        return "the openssl command is not installed (scripts/install-deps.sh)"
    return None


class TlsFiles(object):
    """A self-signed certificate for 127.0.0.1, made now by `openssl req`
    (a fresh key every time: nothing secret is committed)."""

    def __init__(self, folder):
        os.makedirs(folder, exist_ok=True)
        self.cert = os.path.join(folder, "cert.pem")
        self.key = os.path.join(folder, "key.pem")
        subprocess.run(
            ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt",
             "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2",
             "-subj", "/CN=127.0.0.1",
             "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
             "-keyout", self.key, "-out", self.cert],
            check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            timeout=60)


class _Reset(Exception):
    """Raised by a handler after it has reset its connection."""


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "httpfault/1"

    def log_message(self, fmt, *args):
        pass

    def setup(self):
        self.request.settimeout(15)
        if isinstance(self.request, ssl.SSLSocket):
            # Handshake here, in this request's thread: a client that
            # refuses our certificate fails only itself.
            self.request.do_handshake()
        http.server.BaseHTTPRequestHandler.setup(self)

    def finish(self):
        try:
            http.server.BaseHTTPRequestHandler.finish(self)
        except OSError:
            pass

    # -- helpers -----------------------------------------------------------


    def _head(self, status, length=None, extra=()):
        self._req_status(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/octet-stream")
        if length is not None:
            self.send_header("Content-Length", str(length))
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True

    def _html(self, status, extra=()):
        self._req_status(status)
        body = HTML % (status, status)
        self.send_response(status)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Connection", "close")
        self.end_headers()
        self.close_connection = True
        self.wfile.write(body)
        return len(body)

    def _req_status(self, status):
        self._current.status = status

    def _reset(self):
        self.wfile.flush()
        self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                struct.pack("ii", 1, 0))
        self.request.close()
        raise _Reset()

    def _slow(self, data, bps, stopping):
        """Write data at about bps bytes per second; returns bytes sent."""
        step, pause = (bps // 10, 0.1) if bps >= 10 else (1, 1.0 / max(bps, 1))
        sent = 0
        while sent < len(data) and not stopping.is_set():
            chunk = data[sent:sent + step]
            self.wfile.write(chunk)
            self.wfile.flush()
            sent += len(chunk)
            stopping.wait(pause)
        return sent

    # -- the request -------------------------------------------------------

    def do_GET(self):
        owner = self.server.owner
        data = owner.files.get(self.path)
        fault = owner._next_fault(self.path)
        kind, _, arg = fault.partition(":")
        rng = self.headers.get("Range")
        req = self._current = owner._begin(Request(self.path, rng, fault))
        start = None
        if rng and rng.startswith("bytes=") and rng[6:].split("-")[0].isdigit():
            start = int(rng[6:].split("-")[0])
        sent, status = 0, None
        try:
            if kind == "redirect":
                status = 302
                self._req_status(302)
                self.send_response(302)
                self.send_header("Location", arg)
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True
                return
            if kind == "status":
                status = int(arg)
                sent = self._html(status)
                return
            if kind == "retry_after":
                status = 503
                sent = self._html(503, [("Retry-After", arg)])
                return
            if kind == "html200":
                status = 200
                sent = self._html(200)
                return
            if data is None:
                status = 404
                sent = self._html(404)
                return
            if kind == "endless":
                status = 200
                self._head(200)
                block = b"\0" * 65536
                while not owner.stopping.is_set():
                    self.wfile.write(block)
                    sent += len(block)
                return
            if kind == "flip":
                off = int(arg)
                b = bytearray(data)
                b[off] ^= 0x5A
                data = bytes(b)
            if kind == "bad_range":
                k = int(arg)
                s = (start or 0) + k
                status = 206
                self._head(206, len(data) - s, [
                    ("Content-Range", "bytes %d-%d/%d" % (s, len(data) - 1,
                                                          len(data)))])
                self.wfile.write(data[s:])
                sent = len(data) - s
                return
            if start is not None and kind != "ignore_range":
                if start >= len(data):
                    status = 416
                    sent = self._html(416, [("Content-Range",
                                             "bytes */%d" % len(data))])
                    return
                body = data[start:]
                status = 206
                self._head(206, len(body), [
                    ("Content-Range", "bytes %d-%d/%d" % (start, len(data) - 1,
                                                          len(data)))])
            else:
                body = data
                status = 200
                self._head(200, len(body))
            if kind in ("reset", "truncate"):
                n = min(int(arg), len(body))
                self.wfile.write(body[:n])
                sent = n
                if kind == "reset":
                    self._reset()
                self.wfile.flush()
                return
            if kind == "drip":
                sent = self._slow(body, int(arg), owner.stopping)
                return
            if kind == "gate":
                n = min(int(arg), len(body))
                self.wfile.write(body[:n])
                self.wfile.flush()
                sent = n
                while not owner.gate.wait(0.05):
                    if owner.stopping.is_set():
                        return
                self.wfile.write(body[n:])
                sent = len(body)
                return
            if kind == "stall_after":
                n = min(int(arg), len(body))
                self.wfile.write(body[:n])
                self.wfile.flush()
                sent = n + self._slow(body[n:], 1, owner.stopping)
                return
            self.wfile.write(body)
            sent = len(body)
        except (_Reset, OSError):
            pass
        finally:
            req.status, req.sent = status, sent
            owner._end(req)


class _Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def get_request(self):
        sock, addr = self.socket.accept()
        if self.ssl_ctx is not None:
            sock = self.ssl_ctx.wrap_socket(sock, server_side=True,
                                            do_handshake_on_connect=False)
        return sock, addr

    def handle_error(self, request, client_address):
        # Clients that refuse our certificate or hang up are the point of
        # these tests: no tracebacks.
        pass


class FaultServer(object):
    """files: {url path: bytes}. tls: a TlsFiles, or None for plain http."""

    def __init__(self, files=None, tls=None, port=0):
        self.files = dict(files or {})
        self.tls = tls
        self.want_port = port
        self._requests = []
        self._active = 0
        self._gen = 0
        self.stopping = threading.Event()
        self.gate = threading.Event()
        self._faults = {}
        self._always = {}
        self._lock = threading.Lock()
        self._srv = None
        self._thread = None

    # -- control -------------------------------------------------------------

    def start(self):
        srv = _Server(("127.0.0.1", self.want_port), _Handler)
        srv.owner = self
        srv.ssl_ctx = None
        if self.tls:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(self.tls.cert, self.tls.key)
            srv.ssl_ctx = ctx
        self._srv = srv
        self._thread = threading.Thread(target=srv.serve_forever,
                                        kwargs={"poll_interval": 0.05},
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._srv is None:
            return
        self.stopping.set()
        self._srv.shutdown()
        self._srv.server_close()
        self._thread.join(5)
        self._srv = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def port(self):
        return self._srv.server_address[1]

    @property
    def base(self):
        return "%s://127.0.0.1:%d" % ("https" if self.tls else "http",
                                      self.port)

    def url(self, path):
        return self.base + path

    def add(self, path, data):
        self.files[path] = data

    def fault(self, path, *specs):
        """Queue faults for the next requests of path, in order."""
        with self._lock:
            self._faults.setdefault(path, []).extend(specs)

    def always(self, path, spec):
        """Every request of path (after queued faults) gets spec; None
        clears."""
        with self._lock:
            if spec is None:
                self._always.pop(path, None)
            else:
                self._always[path] = spec

    def clear(self):
        """Forget faults and the request log; answers still in flight from
        before are not logged."""
        self.gate.set()
        self.settle()
        self.gate.clear()
        with self._lock:
            self._faults.clear()
            self._always.clear()
            self._requests = []
            self._gen += 1

    def settle(self, timeout=5.0):
        """Wait (a little) until no request is being answered."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self._lock:
                if self._active == 0:
                    return True
            time.sleep(0.01)
        return False

    @property
    def requests(self):
        """The requests since the last clear(), in arrival order, once the
        answers in flight are finished."""
        self.settle()
        with self._lock:
            return list(self._requests)

    # -- used by the handler -------------------------------------------------

    def _next_fault(self, path):
        with self._lock:
            q = self._faults.get(path)
            if q:
                return q.pop(0)
            return self._always.get(path, "ok")

    def _begin(self, req):
        with self._lock:
            req.gen = self._gen
            self._active += 1
            self._requests.append(req)
        return req

    def _end(self, req):
        with self._lock:
            self._active -= 1
            if req.gen != self._gen and req in self._requests:
                self._requests.remove(req)


def main(argv):
    import argparse
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--fault", action="append", default=[])
    a = ap.parse_args(argv)
    files = {}
    for dp, _, fns in os.walk(a.dir):
        for fn in fns:
            p = os.path.join(dp, fn)
            with open(p, "rb") as f:
                files["/" + os.path.relpath(p, a.dir).replace(os.sep, "/")] = f.read()
    tls = None
    if a.tls:
        tls = TlsFiles.__new__(TlsFiles)
        tls.cert, tls.key = a.tls
    srv = FaultServer(files, tls, a.port)
    for spec in a.fault:
        path, _, f = spec.partition("=")
        srv.always(path, f)
    srv.start()
    print("serving %d files on %s" % (len(files), srv.base), flush=True)
    try:
        while True:
            time.sleep(3600)
    except KeyboardInterrupt:
        srv.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
