#!/usr/bin/env python3
"""Benchmark (by hand): install while downloading (issue 20, docs/fetch.md).

A local HTTP server sends the look-alike archives of bench.py (same
generators, imported) throttled to a rate on one connection, with Range
support. For each archive and rate, interleaved rounds of:

  curl         curl -o /dev/null URL            (the download alone)
  stream       install --url URL, cold cache    (installed as it arrives)
  no-stream    install --url URL --no-stream    (download, then install)

for the zip, the single-block tar.xz and a multi-block one (xz -T0 blocks:
the threaded decoder decodes it while it arrives),

each with a fresh cache and a fresh tree. Medians (min-max) in seconds and
each as a multiple of curl's, and the CPU seconds (user + system) the
install took. Never a timed unit test.

--pin CPUS (e.g. 0,1) runs curl and the tool on those CPUs only and the
server on the others: the server stands for the network, and pinning the
whole bench (taskset around it) would make the two cores under test also
send the 200 MB/s.

usage: bench_stream.py BIN [--rate 50 --rate 200] [--scale 0.25]
                       [--xz-scale 0.05] [--xz-block-size 8MiB] [--rounds 3]
                       [--work DIR] [--md FILE] [--pin CPUS]
"""
import argparse
import http.server
import os
import resource
import shutil
import socketserver
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import bench  # noqa: E402  (its generators; bench.py has a main guard)

MB = 1000 * 1000
CHUNK = 64 * 1024


class Throttled(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, fmt, *args):
        pass

    def do_GET(self):
        srv = self.server
        path = srv.files.get(self.path)
        if path is None:
            self.send_error(404)
            return
        size = os.path.getsize(path)
        start, end = 0, size - 1
        rng = self.headers.get("Range")
        if rng and rng.startswith("bytes="):
            a, _, b = rng[6:].partition("-")
            start = int(a) if a else max(0, size - int(b))
            end = int(b) if a and b else size - 1
            self.send_response(206)
            self.send_header("Content-Range",
                             "bytes %d-%d/%d" % (start, end, size))
        else:
            self.send_response(200)
        n = end - start + 1
        self.send_header("Content-Length", str(n))
        self.end_headers()
        rate = srv.rate
        t0 = time.perf_counter()
        sent = 0
        try:
            with open(path, "rb") as f:
                f.seek(start)
                while sent < n:
                    b = f.read(min(CHUNK, n - sent))
                    if not b:
                        break
                    self.wfile.write(b)
                    sent += len(b)
                    ahead = sent / rate - (time.perf_counter() - t0)
                    if ahead > 0:
                        time.sleep(ahead)
        except (BrokenPipeError, ConnectionResetError):
            pass


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


PIN = None  # the CPUs the timed programs run on (--pin), or None


def pin_child():
    if PIN:
        os.sched_setaffinity(0, PIN)


def cpu_children():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(cmd, env=None, cpu=None):
    """Wall seconds of cmd; its CPU seconds appended to the list cpu."""
    c0 = cpu_children()
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, env=env,
                       preexec_fn=pin_child if PIN else None)
    dt = time.perf_counter() - t0
    if cpu is not None:
        cpu.append(cpu_children() - c0)
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                          p.stderr.decode(errors="replace")))
    return dt


def med(v):
    return "%.2f (%.2f-%.2f)" % (statistics.median(v), min(v), max(v))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("--rate", type=float, action="append",
                    help="MB/s on the one connection (repeat; default 50, 200)")
    ap.add_argument("--scale", type=float, default=0.25,
                    help="zip look-alike size (bench.py's unit; 0: skip)")
    ap.add_argument("--xz-scale", type=float, default=0.05,
                    help="tar.xz look-alike size (0: skip)")
    ap.add_argument("--xz-block-size", default="8MiB",
                    help="also a multi-block tar.xz (the xz tool's blocks of "
                    "this size: the threaded decoder's shape; empty: skip)")
    ap.add_argument("--no-single-block", action="store_true",
                    help="skip the single-block tar.xz (keep the multi-block)")
    ap.add_argument("--xz", default=shutil.which("xz") or "xz")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default=None)
    ap.add_argument("--curl", default=shutil.which("curl"))
    ap.add_argument("--md", help="also write the table here")
    ap.add_argument("--pin", help="CPUs for curl and the tool (e.g. 0,1); "
                    "the server runs on the others")
    a = ap.parse_args()
    global PIN
    if a.pin:
        PIN = {int(c) for c in a.pin.split(",")}
        rest = set(os.sched_getaffinity(0)) - PIN
        if not rest:
            sys.exit("--pin %s leaves no CPU for the server" % a.pin)
        os.sched_setaffinity(0, rest)
    a.bin = os.path.abspath(a.bin)
    a.rate = a.rate or [50.0, 200.0]
    if a.work is None:
        import tempfile
        a.work = tempfile.mkdtemp(prefix="cdd-bench-stream.")
    os.makedirs(a.work, exist_ok=True)
    os.environ.setdefault("CDD_TEST_TMP", a.work)
    if not a.curl:
        sys.exit("no curl (give --curl PATH)")
    archives = []
    if a.scale:
        p, m = bench.make_zip(a.work, a.scale)
        archives.append(("zip x%g" % a.scale, p, m, "windows"))
    if a.xz_scale:
        if not a.no_single_block:
            p, m = bench.make_txz(a.work, a.xz_scale)
            archives.append(("tar.xz x%g" % a.xz_scale, p, m, "linux"))
        if a.xz_block_size:
            p, m = bench.make_txz(a.work, a.xz_scale, a.xz_block_size, a.xz)
            archives.append(("tar.xz x%g, %s blocks of %s" % (
                a.xz_scale, bench.xz_blocks(a.xz, p), a.xz_block_size),
                p, m, "linux"))
    srv = Server(("127.0.0.1", 0), Throttled)
    # One folder per archive: the two tar.xz share NVIDIA's file name.
    srv.files = {"/%d/%s" % (i, os.path.basename(p)): p
                 for i, (_, p, _, _) in enumerate(archives)}
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    base = "http://127.0.0.1:%d" % srv.server_address[1]
    env = dict(os.environ)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY",
              "ALL_PROXY", "all_proxy", "CUDNN_DEPLOY_NO_STREAM"):
        env.pop(k, None)
    rows = []
    for i, (name, path, mpath, plat) in enumerate(archives):
        url = "%s/%d/%s" % (base, i, os.path.basename(path))
        mb = os.path.getsize(path) / MB
        for rate in a.rate:
            srv.rate = rate * MB
            t = {"curl": [], "stream": [], "no-stream": []}
            cpu = {"stream": [], "no-stream": []}
            for rnd in range(a.rounds):
                for case in t:
                    if case == "curl":
                        t[case].append(timed([a.curl, "-s", "-o", os.devnull,
                                              url]))
                        continue
                    d = os.path.join(a.work, "run")
                    shutil.rmtree(d, ignore_errors=True)
                    os.makedirs(d)
                    tree = bench.cuda_tree(os.path.join(d, "tree"),
                                           platform_of(plat))
                    cmd = [a.bin, "install", "--cuda-root", tree,
                           "--manifest", mpath, "--url", url, "--no-verify",
                           "--quiet", "--cache-dir", os.path.join(d, "cache")]
                    if case == "no-stream":
                        cmd.append("--no-stream")
                    t[case].append(timed(cmd, env, cpu[case]))
                print("%s @ %g MB/s round %d: %s" % (
                    name, rate, rnd + 1,
                    " ".join("%s %.2f" % (k, v[-1]) for k, v in t.items())),
                    flush=True)
            c = statistics.median(t["curl"])
            rows.append((name, mb, rate, t, c, cpu))
    lines = ["| archive | MB | rate MB/s | curl -o /dev/null s | install "
             "(streamed) s | x curl | CPU s | install --no-stream s | x curl "
             "| CPU s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for name, mb, rate, t, c, cpu in rows:
        s, n = statistics.median(t["stream"]), statistics.median(t["no-stream"])
        lines.append("| %s | %.1f | %g | %s | %s | %.2fx | %.2f | %s | %.2fx "
                     "| %.2f |" % (
                         name, mb, rate, med(t["curl"]), med(t["stream"]),
                         s / c, statistics.median(cpu["stream"]),
                         med(t["no-stream"]), n / c,
                         statistics.median(cpu["no-stream"])))
    load = "%.2f %.2f %.2f" % os.getloadavg()
    out = "\n".join(lines) + "\n\n%d rounds, interleaved; load average at " \
        "the end: %s; %d CPUs%s\n" % (
            a.rounds, load, os.cpu_count() or 1,
            "; curl and the tool on CPUs %s, the server on the others" % a.pin
            if a.pin else "")
    print(out)
    if a.md:
        with open(a.md, "w") as f:
            f.write(out)
    srv.shutdown()


def platform_of(plat):
    sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
    import cddtest
    return cddtest.LINUX if plat == "linux" else cddtest.WINDOWS


if __name__ == "__main__":
    main()
