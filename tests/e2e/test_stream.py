"""End-to-end tests of install while downloading (issue 20, docs/fetch.md):
`install` with a pinned download reads the cache's .part as it arrives and
stages from it; nothing is committed before the whole archive's sha256
matched the pin. Against the loopback server of test_fetch.py (httpfault.py).

Each case compares with the old path (`--no-stream`: download, then
install) or asserts the exact failure: exit code, tree untouched, cache as
it must be. The overlap is asserted on the order of events, never on time:
the server holds the archive's last bytes back (fault "gate") until the
test has seen a staged file in the tree's stage.
"""

import json
import lzma
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import httpfault  # noqa: E402
from test_fetch import BASE_ENV, sha256  # noqa: E402

# Volatile receipt members: when and by which transaction, where the tree is.
VOLATILE = ("transaction", "installed_at", "target")


def receipt_essence(tree):
    with open(os.path.join(tree, cddtest.RECEIPT)) as f:
        doc = json.load(f)
    for k in VOLATILE:
        doc.pop(k, None)
    for e in doc.get("files", []):
        for k in list(e):
            if "mtime" in k:
                del e[k]
    return doc


def big_zip(root):
    """A zip large enough that its members stream (3 MB DLLs)."""
    top, entries = cddtest.windows_entries(big=True)
    return cddtest.Fixture(os.path.join(root, "windows_big"), cddtest.WINDOWS,
                           "8.5.0.96", 11, top, entries)


class StreamTest(cddtest.CddTestCase):

    @classmethod
    def setUpClass(cls):
        cddtest.CddTestCase.setUpClass()
        cls.fixtures = {
            "txz": cddtest.FIX.linux, "zip": cddtest.FIX.windows,
            "txz_big": cddtest.FIX.linux_big,
            "zip_big": big_zip(os.path.join(cddtest.WORK_ROOT, "fixtures"))}
        cls.data = {}
        files = {}
        for k, fx in cls.fixtures.items():
            with open(fx.path, "rb") as f:
                cls.data[k] = f.read()
            files["/%s/%s" % (k, fx.filename)] = cls.data[k]
        # The big tar.xz again as a multi-block stream (xz -T2
        # --block-size): the threaded decoder's case, streamed.
        xz = shutil.which("xz")
        if xz:
            cls.fixtures["txz_mb"] = cls.fixtures["txz_big"]
            cls.data["txz_mb"] = subprocess.run(
                [xz, "-1", "-T2", "--block-size=64KiB", "-c"],
                input=lzma.decompress(cls.data["txz_big"]),
                stdout=subprocess.PIPE, check=True).stdout
            files["/txz_mb/%s" % cls.fixtures["txz_mb"].filename] = \
                cls.data["txz_mb"]
        cls.http = httpfault.FaultServer(files)
        cls.http.start()
        cls.addClassCleanup(cls.http.stop)

    def setUp(self):
        self.http.clear()
        self.dir = self.scratch("files")
        self.cache = os.path.join(self.dir, "cache")

    # -- helpers ---------------------------------------------------------------

    def path(self, kind):
        return "/%s/%s" % (kind, self.fixtures[kind].filename)

    def manifest(self, kind, name="m.json"):
        fx = self.fixtures[kind]
        url = self.http.url(self.path(kind))
        data = self.data[kind]
        # (a repacked archive: its own pin; the files inside are the same)
        return fx.manifest_variant(
            os.path.join(self.dir, name),
            lambda d: d["archive"].update(url=[url], sha256=sha256(data),
                                          size=len(data)))

    def ws(self, kind, name="ws"):
        fx = self.fixtures[kind]
        return self.workspace(name, platform=fx.platform)

    def install_args(self, ws, manifest, *extra, **kw):
        return (["install"] + ws.target_args
                + ["--manifest", manifest, "--no-verify", "--verbose",
                   "--cache-dir", kw.get("cache", self.cache)]
                + [str(x) for x in extra])

    def install(self, ws, manifest, *extra, **kw):
        env = dict(BASE_ENV)
        env.update(kw.pop("env", {}))
        return cddtest.run_json(self.install_args(ws, manifest, *extra, **kw),
                                env=env, expect=kw.pop("expect", None),
                                timeout=120)

    def cache_files(self, cache=None):
        out = {}
        root = cache or self.cache
        for dp, dn, fn in os.walk(root):
            for f in fn:
                if f != ".lock":
                    p = os.path.join(dp, f)
                    out[os.path.relpath(p, root)] = os.path.getsize(p)
        return out

    def entry(self, kind, suffix=""):
        return os.path.join(sha256(self.data[kind]),
                            self.fixtures[kind].filename + suffix)

    def assert_cached(self, kind, cache=None):
        self.assertEqual(self.cache_files(cache),
                         {self.entry(kind): len(self.data[kind])})

    def assert_untouched(self, ws, before):
        self.assertSameTree(before, ws.snap(), "the tree changed")
        self.assertOutsideUntouched(ws)
        self.assertNoLeftovers(ws.tree)

    def same_as_download_first(self, kind):
        """Streamed and --no-stream installs of one download: the same tree
        (receipt included, up to its time and transaction)."""
        fx, m = self.fixtures[kind], self.manifest(kind)
        a, b = self.ws(kind, "streamed"), self.ws(kind, "first")
        before = a.snap()
        ja = self.install(a, m, expect=0)
        self.assertTrue(ja.doc["streamed"], ja.err)
        self.assertInstalled(a, fx, before)
        self.assertReceiptMatches(a, fx)
        self.assert_cached(kind)
        streamed_requests = self.http.requests
        jb = self.install(b, m, "--no-stream", expect=0,
                          cache=os.path.join(self.dir, "cache2"))
        self.assertFalse(jb.doc["streamed"])
        self.assert_cached(kind, os.path.join(self.dir, "cache2"))
        self.assertEqual(cddtest.comparable_state(a.tree),
                         cddtest.comparable_state(b.tree))
        self.assertEqual(receipt_essence(a.tree), receipt_essence(b.tree))
        for k in ("archive_sha256", "archive_size", "pin", "changed"):
            self.assertEqual(ja.doc[k], jb.doc[k], k)
        return ja, streamed_requests

    def wait_staged(self, ws, deadline_s=60):
        """True once a regular file exists in the tree's stage (or after
        deadline_s without one: False)."""
        state = os.path.join(ws.tree, cddtest.STATE)
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            for dp, dn, fn in os.walk(state):
                if "stage" in os.path.relpath(dp, state) and any(
                        os.path.isfile(os.path.join(dp, f)) for f in fn):
                    return True
            time.sleep(0.02)
        return False

    # -- same result as download-then-install ----------------------------------

    def test_txz_same_tree_and_receipt_as_download_first(self):
        j, reqs = self.same_as_download_first("txz")
        # One request, the whole file in order.
        self.assertEqual([(r.status, r.range) for r in reqs], [(200, None)])

    @unittest.skipUnless(shutil.which("xz"), "needs xz")
    def test_multi_block_txz_same_tree_as_download_first(self):
        """Streamed on the threaded decoder (--jobs 4), which starts
        without the block count the index at the file's end would give."""
        fx, m = self.fixtures["txz_mb"], self.manifest("txz_mb")
        a, b = self.ws("txz_mb", "mb-streamed"), self.ws("txz_mb", "mb-first")
        before = a.snap()
        ja = self.install(a, m, "--jobs", 4, expect=0)
        self.assertTrue(ja.doc["streamed"], ja.err)
        self.assertInstalled(a, fx, before)
        self.assert_cached("txz_mb")
        self.install(b, m, "--no-stream", "--jobs", 4, expect=0,
                     cache=os.path.join(self.dir, "cache2"))
        self.assertEqual(cddtest.comparable_state(a.tree),
                         cddtest.comparable_state(b.tree))
        self.assertEqual(receipt_essence(a.tree), receipt_essence(b.tree))

    def test_zip_same_tree_and_receipt_as_download_first(self):
        j, reqs = self.same_as_download_first("zip")
        size = len(self.data["zip"])
        # The zip's tail first (its central directory), then the body.
        self.assertEqual([r.status for r in reqs], [206, 200])
        self.assertTrue(reqs[0].range.startswith("bytes="))
        tail_from = int(reqs[0].range[6:].rstrip("-"))
        self.assertGreater(tail_from, 0)
        self.assertEqual(reqs[0].sent, size - tail_from)
        self.assertIsNone(reqs[1].range)
        self.assertEqual(j.doc["downloaded_bytes"], size + reqs[0].sent)

    def test_big_zip_parallel_members_same_as_download_first(self):
        self.same_as_download_first("zip_big")

    # -- wrong bytes, cut connections, servers without Range -------------------

    def failing(self, kind, fault, *extra, **kw):
        m = self.manifest(kind)
        ws = self.ws(kind, kind)
        before = ws.snap()
        # A zip's first request is for its tail: the fault is the body's.
        self.http.fault(self.path(kind),
                        *(["ok", fault] if kind.startswith("zip") else [fault]))
        j = self.install(ws, m, *extra)
        self.assertError(j, kw["rc"], kw["codes"])
        self.assert_untouched(ws, before)
        return ws, m, j

    def test_wrong_byte_in_the_middle_exit_3_tree_and_cache_clean(self):
        for kind in ("txz_big", "zip_big"):
            with self.subTest(kind=kind):
                self.setUp()
                mid = len(self.data[kind]) // 2
                ws, m, j = self.failing(kind, "flip:%d" % mid, "--retries",
                                        "0", rc=3, codes="CHECKSUM")
                self.assertTrue(j.doc["streamed"] is not False)
                # Wrong bytes are kept nowhere, not even as a .part.
                self.assertEqual(self.cache_files(), {})

    def test_connection_cut_in_the_middle_then_resumed(self):
        for kind in ("txz_big", "zip_big"):
            with self.subTest(kind=kind):
                self.setUp()
                data = self.data[kind]
                half = len(data) // 2
                ws, m, j = self.failing(kind, "truncate:%d" % half, "--retries",
                                        "0", rc=4, codes="NETWORK")
                self.assertIn(self.http.url(self.path(kind)),
                              j.doc["error"]["message"])
                self.assertEqual(self.cache_files(),
                                 {self.entry(kind, ".part"): half})
                # The next run continues the .part, and streams it.
                before = ws.snap()
                n = len(self.http.requests)
                j = self.install(ws, m, expect=0)
                self.assertTrue(j.doc["streamed"])
                self.assertInstalled(ws, self.fixtures[kind], before)
                body = [r for r in self.http.requests[n:] if r.status == 206
                        and r.range == "bytes=%d-" % half]
                self.assertEqual(len(body), 1, self.http.requests[n:])
                self.assertEqual(body[0].sent, len(data) - half)
                self.assert_cached(kind)

    def test_zip_server_without_range_falls_back(self):
        kind = "zip_big"
        m = self.manifest(kind)
        ws = self.ws(kind)
        before = ws.snap()
        self.http.always(self.path(kind), "ignore_range")
        j = self.install(ws, m, expect=0)
        self.assertFalse(j.doc["streamed"])
        self.assertInstalled(ws, self.fixtures[kind], before)
        self.assert_cached(kind)
        self.assertIn("ignores Range", j.err)
        # The tail request answered 200, then one whole download.
        self.assertEqual([r.status for r in self.http.requests], [200, 200])

    def test_server_restarting_from_zero_mid_stream_installs_from_cache(self):
        """A .part kept from before, and a server that ignores the range on
        resume: the file starts again from zero under the reader, which
        stops; the install then comes from the finished download."""
        kind = "txz_big"
        data = self.data[kind]
        part = os.path.join(self.cache, self.entry(kind, ".part"))
        os.makedirs(os.path.dirname(part))
        with open(part, "wb") as f:
            f.write(data[:len(data) // 3])
        m = self.manifest(kind)
        ws = self.ws(kind)
        before = ws.snap()
        self.http.always(self.path(kind), "ignore_range")
        j = self.install(ws, m, expect=0)
        self.assertInstalled(ws, self.fixtures[kind], before)
        self.assert_cached(kind)

    def test_no_stream_option_and_environment(self):
        for extra, env in ((["--no-stream"], {}),
                           ([], {"CUDNN_DEPLOY_NO_STREAM": "1"})):
            with self.subTest(extra=extra, env=env):
                self.setUp()
                m = self.manifest("txz")
                ws = self.ws("txz", "ws%d" % len(env))
                self.http.always(self.path("txz"), "gate:%d"
                                 % (len(self.data["txz"]) // 2))
                p = cddtest.spawn(self.install_args(ws, m, "--json", *extra),
                                  env=dict(BASE_ENV, **env))
                try:
                    # Nothing staged while the download is incomplete.
                    self.assertFalse(self.wait_staged(ws, 2))
                finally:
                    self.http.gate.set()
                out, err = p.communicate(timeout=60)
                self.assertEqual(p.returncode, 0, err)
                self.assertFalse(json.loads(out)["streamed"])

    # -- the overlap -----------------------------------------------------------

    def test_staging_starts_before_the_last_byte_is_served(self):
        """The server holds the last quarter back until the test has seen a
        staged file: without streaming that never happens (the test would
        fail after its deadline)."""
        for kind in ("txz_big", "zip_big", "txz_mb"):
            if kind not in self.data:
                continue  # no xz to make the multi-block one
            with self.subTest(kind=kind):
                self.setUp()
                data = self.data[kind]
                m = self.manifest(kind)
                ws = self.ws(kind, kind)
                before = ws.snap()
                self.http.always(self.path(kind),
                                 "gate:%d" % (len(data) * 3 // 4))
                p = cddtest.spawn(self.install_args(ws, m, "--json",
                                                    "--jobs", 4),
                                  env=dict(BASE_ENV))
                try:
                    staged = self.wait_staged(ws)
                    # Nothing reached the tree itself yet.
                    self.assertSameTree(cddtest.without_state(before),
                                        cddtest.without_state(ws.snap()))
                    # The body's answer is still open (held at the gate).
                    self.assertTrue(any(r.range is None and r.sent == 0
                                        for r in self.http.requests))
                finally:
                    self.http.gate.set()
                out, err = p.communicate(timeout=120)
                self.assertEqual(p.returncode, 0, err)
                self.assertTrue(staged, "nothing was staged before the "
                                "server sent the archive's last bytes")
                self.assertTrue(json.loads(out)["streamed"])
                self.assertInstalled(ws, self.fixtures[kind], before)
                self.assert_cached(kind)



class HostileStreamed(cddtest.CddTestCase):
    """The attacker is the server: every hostile zip of the case table (and
    the tar.xz ones that are no bomb), pinned and served, is refused by the
    streamed install as by the one from a local file (exit 3), the tree
    and what lies beside it untouched. A zip's local headers are checked as
    the reader reaches them here (zipcd.c), not all at open."""

    @classmethod
    def setUpClass(cls):
        cddtest.CddTestCase.setUpClass()
        cls.http = httpfault.FaultServer({})
        cls.http.start()
        cls.addClassCleanup(cls.http.stop)

    def run_case(self, case):
        fx = case.fixture()
        ws = self.workspace(platform=fx.platform)
        before = ws.snap()
        folder = self.scratch("archive")
        archive, manifest, _ = case.build(folder, ws.outside)
        with open(archive, "rb") as f:
            data = f.read()
        path = "/%s/%s" % (case.name, fx.filename)
        self.http.add(path, data)
        with open(manifest) as f:
            doc = json.load(f)
        doc["archive"]["url"] = [self.http.url(path)]
        m = cddtest.write_json(os.path.join(folder, "streamed.json"), doc)
        j = cddtest.run_json(
            ["install"] + ws.target_args
            + ["--manifest", m, "--no-verify", "--retries", "0",
               "--cache-dir", os.path.join(folder, "cache")],
            env=dict(BASE_ENV), timeout=120)
        self.assertError(j, 3, case.codes, "%s (%s):" % (case.name, case.why))
        self.assertTrue(j.doc.get("streamed"), "not streamed: %s" % j.err)
        self.assertSameTree(before, ws.snap(), "the tree changed")
        self.assertOutsideUntouched(ws)
        self.assertNoLeftovers(ws.tree)


def _add_hostile():
    import hostile_cases
    for case in hostile_cases.CASES:
        if case.bomb or not (case.base == "windows" or case.group in (
                "escapes", "links", "differentials", "broken")):
            continue
        def t(self, case=case):
            self.run_case(case)
        t.__name__ = "test_" + case.name
        t.__doc__ = "%s: %s" % (case.name, case.why)
        setattr(HostileStreamed, t.__name__, t)


_add_hostile()

if __name__ == "__main__":
    cddtest.main()
