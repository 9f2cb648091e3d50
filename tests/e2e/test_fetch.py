"""End-to-end tests of downloads: `install` without --archive and `fetch`,
against a loopback HTTP(S) server with injected faults (httpfault.py).

Every failure case asserts the exit code, what the cache holds afterwards,
and that the target tree (and everything beside it) was not touched.
Timings are kept short through options (--retries, --low-speed-*), so the
whole file runs in well under a minute.
"""

import hashlib
import json
import os
import shutil
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import httpfault  # noqa: E402

NV_PREFIX = "https://developer.download.nvidia.com/compute/"

# Nothing may reach a real network or a proxy; no mirror unless a test sets
# one; no cache in the user's home.
BASE_ENV = {k: None for k in ("http_proxy", "https_proxy", "HTTP_PROXY",
                              "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
                              "CUDNN_DEPLOY_MIRROR", "XDG_CACHE_HOME")}
BASE_ENV["NO_PROXY"] = BASE_ENV["no_proxy"] = "127.0.0.1,localhost"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


class FetchTest(cddtest.CddTestCase):

    @classmethod
    def setUpClass(cls):
        cddtest.CddTestCase.setUpClass()
        cls.fx = cddtest.FIX.linux
        with open(cls.fx.path, "rb") as f:
            cls.data = f.read()
        cls.sha = sha256(cls.data)
        # The path NVIDIA's URL has, so that a mirror base works too.
        cls.rel = "cudnn/redist/cudnn/linux-x86_64/" + cls.fx.filename
        cls.path = "/" + cls.rel
        cls.http = httpfault.FaultServer({cls.path: cls.data})
        cls.http.start()
        cls.addClassCleanup(cls.http.stop)
        cls.https = None
        cls.tls = None
        if httpfault.openssl_problem() is None:
            cls.tls = httpfault.TlsFiles(os.path.join(cddtest.WORK_ROOT, "tls"))
            cls.https = httpfault.FaultServer({cls.path: cls.data}, cls.tls)
            cls.https.start()
            cls.addClassCleanup(cls.https.stop)

    def setUp(self):
        self.http.clear()
        if self.https:
            self.https.clear()
        self.dir = self.scratch("files")
        self.cache = os.path.join(self.dir, "cache")

    def need_tls(self):
        if not self.https:
            self.skipTest(httpfault.openssl_problem())

    # -- helpers ---------------------------------------------------------------

    def manifest(self, urls=(), pinned=True, sized=True, redistrib_url=None,
                 name="m.json"):
        """The fixture's manifest with archive.url = urls (none when
        empty), its sha256/size kept or null, and redistrib_url."""
        def edit(doc):
            if urls:
                doc["archive"]["url"] = list(urls)
            else:
                doc["archive"].pop("url", None)
            if not pinned:
                doc["archive"]["sha256"] = None
            if not sized:
                doc["archive"]["size"] = None
            if redistrib_url:
                doc["redistrib_url"] = redistrib_url
        return self.fx.manifest_variant(os.path.join(self.dir, name), edit)

    def env(self, **extra):
        e = dict(BASE_ENV)
        e.update(extra)
        return e

    def install(self, ws, manifest, *extra, **kw):
        expect = kw.pop("expect", None)
        args = (["install"] + ws.target_args
                + ["--manifest", manifest, "--no-verify",
                   "--cache-dir", self.cache] + [str(x) for x in extra])
        return cddtest.run_json(args, env=kw.pop("env", self.env()),
                                expect=expect, timeout=kw.pop("timeout", 60))

    def fetch(self, manifest, *extra, **kw):
        expect = kw.pop("expect", None)
        args = (["fetch", "--manifest", manifest, "--cache-dir", self.cache]
                + [str(x) for x in extra])
        if kw.pop("json", True):
            return cddtest.run_json(args, env=kw.pop("env", self.env()),
                                    expect=expect)
        return cddtest.run(args, env=kw.pop("env", self.env()), expect=expect)

    def cache_files(self, cache=None):
        """{relative path: size} in the cache, lock files left out."""
        root = cache or self.cache
        out = {}
        for dp, dn, fn in os.walk(root):
            for f in fn:
                if f == ".lock":
                    continue
                p = os.path.join(dp, f)
                out[os.path.relpath(p, root).replace(os.sep, "/")] = os.path.getsize(p)
        return out

    def entry(self, suffix=""):
        return "%s/%s%s" % (self.sha, self.fx.filename, suffix)

    def cached_path(self):
        return os.path.join(self.cache, self.sha, self.fx.filename)

    def part_path(self):
        return self.cached_path() + ".part"

    def put_part(self, data):
        os.makedirs(os.path.dirname(self.part_path()), exist_ok=True)
        with open(self.part_path(), "wb") as f:
            f.write(data)

    def assert_cached_ok(self):
        self.assertEqual(self.cache_files(), {self.entry(): len(self.data)})
        self.assertEqual(cddtest.sha256_file(self.cached_path()), self.sha)

    def assert_untouched(self, ws, before):
        self.assertSameTree(before, ws.snap(), "the tree changed")
        self.assertOutsideUntouched(ws)
        self.assertNoLeftovers(ws.tree)

    def failing_install(self, manifest, *extra, **kw):
        """install that must fail: returns (JsonResult, error dict) after
        asserting the code and that the tree was not touched."""
        rc, codes = kw.pop("rc"), kw.pop("codes", None)
        ws = self.workspace()
        before = ws.snap()
        res = self.install(ws, manifest, *extra, **kw)
        err = self.assertError(res, rc, codes)
        self.assert_untouched(ws, before)
        return res, err

    def ok_install(self, manifest, *extra, **kw):
        ws = self.workspace()
        before = ws.snap()
        res = self.install(ws, manifest, *extra, expect=0, **kw)
        self.assertInstalled(ws, self.fx, before)
        self.assertReceiptMatches(ws, self.fx)
        return ws, res

    # -- success ---------------------------------------------------------------

    def test_plain_success(self):
        m = self.manifest([self.http.url(self.path)])
        ws, res = self.ok_install(m)
        self.assert_cached_ok()
        doc = res.doc
        self.assertEqual(doc["pin"], "manifest")
        self.assertFalse(doc["cache_hit"])
        self.assertEqual(doc["url"], self.http.url(self.path))
        self.assertEqual(doc["archive_sha256"], self.sha)
        self.assertTrue(doc["changed"])
        receipt = cddtest.read_receipt(ws.tree)
        self.assertEqual(receipt["archive"]["pin_source"], "manifest")
        self.assertTrue(receipt["archive"]["pinned"])
        self.assertEqual([r.status for r in self.http.requests], [200])

    def test_end_to_end_through_mirror(self):
        """The fixture's manifest unchanged (NVIDIA's URL), a reachable test
        server as CUDNN_DEPLOY_MIRROR: install works end to end."""
        ws, res = self.ok_install(
            self.fx.manifest_path,
            env=self.env(CUDNN_DEPLOY_MIRROR=self.http.base + "/"))
        self.assertEqual(res.doc["url"], self.http.url(self.path))
        self.assert_cached_ok()

    def test_mirrors_tried_in_order(self):
        m = self.manifest([self.http.url(self.path)])
        missing = self.http.url("/nothing/here.tar.xz")
        ws, res = self.ok_install(m, "--url", missing)
        self.assertEqual([(r.path, r.status) for r in self.http.requests],
                         [("/nothing/here.tar.xz", 404), (self.path, 200)])
        self.assert_cached_ok()

    def test_fetch_prints_path_and_cache_hit_uses_no_network(self):
        m = self.manifest([self.http.url(self.path)])
        res = self.fetch(m, json=False, expect=0)
        self.assertEqual(res.out, self.cached_path() + "\n")
        self.assertEqual(len(self.http.requests), 1)
        # Second run: the cache answers; a dead URL proves nothing is asked.
        dead = self.manifest(["http://127.0.0.1:9/x/" + self.fx.filename],
                             name="dead.json")
        res = self.fetch(dead, expect=0)
        self.assertTrue(res.doc["cache_hit"])
        self.assertEqual(res.doc["path"], self.cached_path())
        self.assertIsNone(res.doc["target"])
        self.assertEqual(len(self.http.requests), 1)
        self.assert_cached_ok()
        # --quiet silences the chatter, not the answer.
        res = self.fetch(dead, "--quiet", json=False, expect=0)
        self.assertEqual((res.out, res.err), (self.cached_path() + "\n", ""))
        # And install from the cache: still no request.
        ws, res = self.ok_install(dead)
        self.assertTrue(res.doc["cache_hit"])
        self.assertEqual(len(self.http.requests), 1)

    def test_corrupted_cache_entry_is_fetched_again(self):
        m = self.manifest([self.http.url(self.path)])
        self.fetch(m, expect=0)
        with open(self.cached_path(), "r+b") as f:
            f.seek(100)
            f.write(b"\0\1\2")
        res = self.fetch(m, expect=0)
        self.assertFalse(res.doc["cache_hit"])
        self.assertEqual(len(self.http.requests), 2)
        self.assert_cached_ok()

    def test_default_cache_location(self):
        xdg = os.path.join(self.dir, "xdg")
        m = self.manifest([self.http.url(self.path)])
        res = cddtest.run_json(["fetch", "--manifest", m],
                               env=self.env(XDG_CACHE_HOME=xdg), expect=0)
        self.assertEqual(res.doc["path"], os.path.join(
            xdg, "cudnn-deploy", self.sha, self.fx.filename))
        self.assertEqual(self.cache_files(os.path.join(xdg, "cudnn-deploy")),
                         {self.entry(): len(self.data)})

    # -- resume ----------------------------------------------------------------

    def test_resume_after_connection_cut(self):
        half = len(self.data) // 2
        m = self.manifest([self.http.url(self.path)])
        self.http.fault(self.path, "reset:%d" % half)
        res, err = self.failing_install(m, "--retries", "0", rc=4,
                                        codes="NETWORK")
        self.assertIn(self.http.url(self.path), err["message"])
        self.assertEqual(self.cache_files(), {self.entry(".part"): half})
        # The next run continues where the first stopped.
        ws, res = self.ok_install(m)
        (req,) = self.http.requests[1:]
        self.assertEqual((req.status, req.range), (206, "bytes=%d-" % half))
        self.assertEqual(req.sent, len(self.data) - half)
        self.assertLess(req.sent, len(self.data))
        self.assertEqual(res.doc["downloaded_bytes"], len(self.data) - half)
        self.assert_cached_ok()

    def test_truncated_body_with_correct_length_resumes(self):
        half = len(self.data) // 3
        m = self.manifest([self.http.url(self.path)])
        self.http.fault(self.path, "truncate:%d" % half)
        ws, res = self.ok_install(m, "--retries", "2")
        got = [(r.status, r.range, r.sent) for r in self.http.requests]
        self.assertEqual(got, [(200, None, half),
                               (206, "bytes=%d-" % half, len(self.data) - half)])
        self.assert_cached_ok()

    def test_truncated_body_persistent_fails_and_keeps_part(self):
        half = len(self.data) // 3
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "truncate:%d" % half)
        res, err = self.failing_install(m, "--retries", "0", rc=4,
                                        codes="NETWORK")
        self.assertIn("remaining", err["message"])
        self.assertEqual(self.cache_files(), {self.entry(".part"): half})

    def test_server_ignoring_range_restarts_from_zero(self):
        half = len(self.data) // 2
        self.put_part(self.data[:half])
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "ignore_range")
        ws, res = self.ok_install(m)
        (req,) = self.http.requests
        self.assertEqual((req.status, req.range, req.sent),
                         (200, "bytes=%d-" % half, len(self.data)))
        self.assert_cached_ok()

    def test_206_with_wrong_start_restarts_from_zero(self):
        half = len(self.data) // 2
        self.put_part(self.data[:half])
        m = self.manifest([self.http.url(self.path)])
        self.http.fault(self.path, "bad_range:7")
        ws, res = self.ok_install(m)
        got = [(r.status, r.range) for r in self.http.requests]
        self.assertEqual(got, [(206, "bytes=%d-" % half), (200, None)])
        self.assert_cached_ok()

    def test_206_with_wrong_start_always_fails(self):
        self.put_part(self.data[:100])
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "bad_range:7")
        res, err = self.failing_install(m, "--retries", "0", rc=4,
                                        codes="NETWORK")
        self.assertIn("range", err["message"])
        self.assertEqual(self.cache_files(), {})

    def test_stale_part_from_killed_run(self):
        """A download killed (SIGKILL) mid-body leaves a .part; the next run
        continues it with a range request."""
        m = self.manifest([self.http.url(self.path)])
        n = len(self.data) // 2
        self.http.fault(self.path, "stall_after:%d" % n)
        p = cddtest.spawn(["fetch", "--manifest", m, "--cache-dir", self.cache],
                          env=self.env())
        try:
            deadline = time.time() + 20
            while time.time() < deadline:
                if os.path.exists(self.part_path()) and \
                        os.path.getsize(self.part_path()) >= n:
                    break
                time.sleep(0.02)
            os.killpg(p.pid, signal.SIGKILL)
            p.wait(10)
        finally:
            if p.poll() is None:
                p.kill()
                p.wait(10)
            p.stdout.close()
            p.stderr.close()
        self.assertEqual(p.returncode, -signal.SIGKILL)
        kept = os.path.getsize(self.part_path())
        self.assertGreaterEqual(kept, n)
        self.assertFalse(os.path.exists(self.cached_path()))
        self.http.clear()
        ws, res = self.ok_install(m)
        (req,) = self.http.requests
        self.assertEqual((req.status, req.range), (206, "bytes=%d-" % kept))
        self.assert_cached_ok()

    def test_stale_part_with_wrong_bytes_downloads_again(self):
        self.put_part(b"\xff" * (len(self.data) // 2))
        m = self.manifest([self.http.url(self.path)])
        ws, res = self.ok_install(m)
        got = [(r.status, r.range) for r in self.http.requests]
        self.assertEqual(got, [(206, "bytes=%d-" % (len(self.data) // 2)),
                               (200, None)])
        self.assert_cached_ok()

    # -- rejected bytes ----------------------------------------------------------

    def test_flipped_byte(self):
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "flip:%d" % (len(self.data) // 2))
        res, err = self.failing_install(m, rc=3, codes="CHECKSUM")
        self.assertIn("does not match the pin", err["message"])
        self.assertIn(self.sha, err["message"])
        self.assertEqual(self.cache_files(), {})

    def test_endless_body_hits_size_cap(self):
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "endless")
        res, err = self.failing_install(m, rc=3, codes="CHECKSUM")
        self.assertIn("more than the expected %d bytes" % len(self.data),
                      err["message"])
        self.assertEqual(self.cache_files(), {})

    def test_html_404_and_500_not_saved(self):
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "status:404")
        res, err = self.failing_install(m, rc=4, codes="NETWORK")
        self.assertIn("404", err["message"])
        self.assertIn(self.http.url(self.path), err["message"])
        self.assertEqual(self.cache_files(), {})
        self.assertEqual(len(self.http.requests), 1)  # 404 is not retried
        self.http.clear()
        self.http.always(self.path, "status:500")
        res, err = self.failing_install(m, "--retries", "1", rc=4,
                                        codes="NETWORK")
        self.assertIn("500", err["message"])
        self.assertIn("gave up after 2 attempts", err["message"])
        self.assertEqual([r.status for r in self.http.requests], [500, 500])
        self.assertEqual(self.cache_files(), {})

    def test_503_retry_after_then_success(self):
        m = self.manifest([self.http.url(self.path)])
        self.http.fault(self.path, "retry_after:1")
        t0 = time.time()
        ws, res = self.ok_install(m, "--retries", "1")
        self.assertGreaterEqual(time.time() - t0, 0.9)
        self.assertEqual([r.status for r in self.http.requests], [503, 200])
        self.assert_cached_ok()

    def test_slow_drip_aborted_by_low_speed_limit(self):
        m = self.manifest([self.http.url(self.path)])
        self.http.always(self.path, "drip:50")
        t0 = time.time()
        res, err = self.failing_install(m, "--retries", "0",
                                        "--low-speed-limit", "1000",
                                        "--low-speed-time", "1",
                                        rc=4, codes="NETWORK")
        self.assertLess(time.time() - t0, 15)
        self.assertIn("too slow", err["message"])
        self.assertNotIn(self.entry(), self.cache_files())

    # -- TLS and protocols -------------------------------------------------------

    def test_tls_self_signed_refused_then_accepted_with_cacert(self):
        self.need_tls()
        m = self.manifest([self.https.url(self.path)])
        res, err = self.failing_install(m, rc=4, codes="NETWORK")
        self.assertIn("certificate", err["message"])
        self.assertEqual(self.cache_files(), {})
        ws, res = self.ok_install(m, "--cacert", self.tls.cert)
        self.assert_cached_ok()

    def test_redirect_from_https_to_http_refused(self):
        self.need_tls()
        m = self.manifest([self.https.url(self.path)])
        self.https.always(self.path, "redirect:" + self.http.url(self.path))
        res, err = self.failing_install(m, "--cacert", self.tls.cert, rc=4,
                                        codes="NETWORK")
        self.assertIn("http", err["message"])
        self.assertEqual(self.http.requests, [])
        self.assertEqual(self.cache_files(), {})

    def test_unpinned_plain_http_refused(self):
        m = self.manifest([self.http.url(self.path)], pinned=False)
        res, err = self.failing_install(m, "--allow-unpinned", rc=3,
                                        codes="UNPINNED")
        self.assertIn("http", err["message"])
        self.assertEqual(self.http.requests, [])

    # -- pins ------------------------------------------------------------------

    def test_no_pin_refused_unless_allowed(self):
        self.need_tls()
        m = self.manifest([self.https.url(self.path)], pinned=False)
        res, err = self.failing_install(m, "--cacert", self.tls.cert, rc=3,
                                        codes="UNPINNED")
        self.assertIn("--allow-unpinned", err["message"])
        self.assertEqual(self.https.requests, [])
        ws, res = self.ok_install(m, "--cacert", self.tls.cert,
                                  "--allow-unpinned")
        receipt = cddtest.read_receipt(ws.tree)
        self.assertFalse(receipt["archive"]["pinned"])
        # The install's own view: "per-file" when the manifest hashes every
        # file (this one does), else "unpinned".
        self.assertIn(res.doc["pin"], ("unpinned", "per-file"))
        self.assert_cached_ok()

    def test_sha256_option_pins(self):
        m = self.manifest([self.http.url(self.path)], pinned=False)
        wrong = "0" * 64
        res, err = self.failing_install(m, "--sha256", wrong, rc=3,
                                        codes="CHECKSUM")
        self.assertEqual(self.cache_files(), {})
        ws, res = self.ok_install(m, "--sha256", self.sha)
        self.assertEqual(cddtest.read_receipt(ws.tree)["archive"]["pin_source"],
                         "--sha256")
        self.assert_cached_ok()

    def test_sha256_contradicting_manifest_refused_before_download(self):
        m = self.manifest([self.http.url(self.path)])
        res, err = self.failing_install(m, "--sha256", "ab" * 32, rc=3,
                                        codes="CHECKSUM")
        self.assertEqual(self.http.requests, [])

    def redistrib(self, nested=True, sha=None, size=True):
        plat = {"relative_path": "cudnn/linux-x86_64/" + self.fx.filename,
                "sha256": sha or self.sha}
        if size:
            plat["size"] = str(len(self.data))
        if nested:
            plat["md5"] = hashlib.md5(self.data).hexdigest()
            plat = {"cuda11": plat}
        return {"release_label": "8.5.0.96",
                "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library",
                          "license": "cudnn", "version": "8.5.0.96",
                          "cuda_variant": ["11"], "linux-x86_64": plat}}

    def test_redistrib_nested_over_https(self):
        """The manifest pins nothing and names no URL: the redistrib JSON
        (from its redistrib_url) gives the sha256, size and path."""
        self.need_tls()
        doc = self.redistrib(nested=True)
        self.https.add("/cudnn/redist/redistrib_8.5.0.96.json",
                       json.dumps(doc).encode())
        m = self.manifest(pinned=False, sized=False, redistrib_url=self.https.url(
            "/cudnn/redist/redistrib_8.5.0.96.json"))
        ws, res = self.ok_install(m, "--cacert", self.tls.cert)
        self.assertEqual(res.doc["pin"], "redistrib")
        self.assertEqual(res.doc["url"], self.https.url(self.path))
        receipt = cddtest.read_receipt(ws.tree)
        self.assertEqual(receipt["archive"]["pin_source"], "redistrib")
        self.assertTrue(receipt["archive"]["pinned"])
        self.assert_cached_ok()

    def test_redistrib_flat_file_and_mirror(self):
        """The old shape from a local file; NVIDIA's URL it implies goes
        through CUDNN_DEPLOY_MIRROR (plain http is fine: the file pins)."""
        p = cddtest.write_json(os.path.join(self.dir, "redistrib_8.5.0.96.json"),
                               self.redistrib(nested=False, size=False))
        m = self.manifest(pinned=False, sized=False)
        res = self.fetch(m, "--redistrib", p, expect=0,
                         env=self.env(CUDNN_DEPLOY_MIRROR=self.http.base))
        self.assertEqual(res.doc["pin"], "redistrib")
        self.assertEqual(res.doc["url"], self.http.url(self.path))
        self.assert_cached_ok()

    def test_redistrib_bad_hash_named_by_json_path(self):
        p = cddtest.write_json(os.path.join(self.dir, "redistrib_8.5.0.96.json"),
                               self.redistrib(sha="12345"))
        m = self.manifest([self.http.url(self.path)], pinned=False)
        res, err = self.failing_install(m, "--redistrib", p, rc=3,
                                        codes="MANIFEST")
        self.assertIn("redistrib_8.5.0.96.json: "
                      "cudnn.linux-x86_64.cuda11.sha256: expected 64 hex digits",
                      err["message"])
        self.assertEqual(self.http.requests, [])

    def test_redistrib_wrong_hash_rejects_download(self):
        p = cddtest.write_json(os.path.join(self.dir, "r.json"),
                               self.redistrib(sha="ab" * 32))
        m = self.manifest([self.http.url(self.path)], pinned=False,
                          sized=False)
        # The mirror keeps the redistrib's own URL (NVIDIA's) on loopback.
        res, err = self.failing_install(
            m, "--redistrib", p, rc=3, codes="CHECKSUM",
            env=self.env(CUDNN_DEPLOY_MIRROR=self.http.base))
        self.assertIn("does not match the pin " + "ab" * 32, err["message"])
        self.assertEqual(len(self.http.requests), 1)
        self.assertEqual(self.cache_files(), {})

    def test_redistrib_over_plain_http_refused(self):
        self.http.add("/r.json", json.dumps(self.redistrib()).encode())
        m = self.manifest([self.http.url(self.path)], pinned=False)
        res, err = self.failing_install(m, "--redistrib",
                                        self.http.url("/r.json"), rc=3,
                                        codes="UNPINNED")
        self.assertEqual(self.http.requests, [])

    # -- usage ---------------------------------------------------------------------

    def test_archive_and_url_conflict(self):
        ws = self.workspace()
        before = ws.snap()
        res = cddtest.run_json(
            ["install"] + ws.target_args + ["--manifest", self.fx.manifest_path,
                                            "--archive", self.fx.path, "--url",
                                            self.http.url(self.path)],
            env=self.env())
        self.assertError(res, 2, "USAGE")
        self.assert_untouched(ws, before)



class CacheIntegrity(FetchTest):
    """The cache may be shared with other accounts (issue 18): a .part or a
    cached file that is not a regular file of ours with one link is never
    used -- removed and downloaded again; an entry folder that is a link or
    another account's is refused. The file such a name leads to is never
    appended to or changed."""

    def outside(self, data):
        p = os.path.join(self.dir, "outside", "victim.bin")
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def read(self, p):
        with open(p, "rb") as f:
            return f.read()

    def test_hard_linked_part_is_never_appended_to(self):
        # The victim holds a usable prefix: resuming would append the rest
        # of the download to it.
        half = self.data[:len(self.data) // 2]
        victim = self.outside(half)
        os.makedirs(os.path.dirname(self.part_path()), exist_ok=True)
        os.link(victim, self.part_path())
        m = self.manifest([self.http.url(self.path)])
        ws, res = self.ok_install(m)
        self.assertEqual(self.read(victim), half)
        self.assertEqual(os.stat(victim).st_nlink, 1)
        got = [(r.status, r.range) for r in self.http.requests]
        self.assertEqual(got, [(200, None)], "downloaded afresh, not resumed")
        self.assert_cached_ok()

    def test_symlinked_part_is_not_followed(self):
        half = self.data[:len(self.data) // 2]
        victim = self.outside(half)
        os.makedirs(os.path.dirname(self.part_path()), exist_ok=True)
        os.symlink(victim, self.part_path())
        m = self.manifest([self.http.url(self.path)])
        self.ok_install(m)
        self.assertEqual(self.read(victim), half)
        self.assert_cached_ok()

    def test_hard_linked_cached_file_is_not_used(self):
        victim = self.outside(self.data)
        os.makedirs(os.path.dirname(self.cached_path()), exist_ok=True)
        os.link(victim, self.cached_path())
        m = self.manifest([self.http.url(self.path)])
        self.ok_install(m)
        # Downloaded again into a file of its own; the victim kept its bytes.
        self.assertEqual(len(self.http.requests), 1)
        self.assertEqual(self.read(victim), self.data)
        self.assertEqual(os.stat(victim).st_nlink, 1)
        self.assert_cached_ok()

    def test_entry_folder_that_is_a_link_is_refused(self):
        elsewhere = os.path.join(self.dir, "outside", "entry")
        os.makedirs(elsewhere)
        os.makedirs(self.cache)
        os.symlink(elsewhere, os.path.join(self.cache, self.sha))
        m = self.manifest([self.http.url(self.path)])
        res, err = self.failing_install(m, rc=3, codes="UNSAFE")
        self.assertIn("link", err["message"])
        self.assertEqual(os.listdir(elsewhere), [])
        self.assertEqual(self.http.requests, [])

    @unittest.skipIf(os.name == "nt" or not hasattr(os, "geteuid") or
                     os.geteuid() != 0, "needs root to give a folder away")
    def test_entry_folder_of_another_account_is_refused(self):
        d = os.path.join(self.cache, self.sha)
        os.makedirs(d)
        os.chown(d, 12345, 12345)
        m = self.manifest([self.http.url(self.path)])
        res, err = self.failing_install(m, rc=3, codes="UNSAFE")
        self.assertIn("another account", err["message"])
        self.assertEqual(os.listdir(d), [])

    def test_entry_folder_writable_by_others_is_refused(self):
        d = os.path.join(self.cache, self.sha)
        os.makedirs(d)
        os.chmod(d, 0o777)
        m = self.manifest([self.http.url(self.path)])
        res, err = self.failing_install(m, rc=3, codes="UNSAFE")
        self.assertIn("writable by other accounts", err["message"])


class DryRunPlan(FetchTest):
    """install --dry-run without --archive plans the download without it
    (issue 18; Ansible's check mode relies on it): no request, the cache
    not created or changed, "would download URL (N bytes)" and the stable
    "download" member; with the pinned file already cached, the dry run
    checks it, read-only."""

    def cache_state(self):
        if not os.path.exists(self.cache):
            return None
        out = {}
        for dp, dn, fn in os.walk(self.cache):
            for n in dn + fn:
                p = os.path.join(dp, n)
                st = os.lstat(p)
                out[os.path.relpath(p, self.cache)] = (st.st_mode, st.st_size,
                                                       st.st_mtime_ns)
        return out

    def test_dry_run_never_downloads(self):
        url = self.http.url(self.path)
        m = self.manifest([url])
        ws = self.workspace()
        before = ws.snap()
        res = self.install(ws, m, "--dry-run", expect=0)
        self.assertEqual(self.http.requests, [])
        self.assertIsNone(self.cache_state(), "the cache was created")
        self.assertEqual(res.doc["download"], {
            "url": url, "size": len(self.data), "sha256": self.sha,
            "pin": "manifest", "cached": False,
            "path": os.path.join(self.cache, self.sha, self.fx.filename)})
        self.assertTrue(res.doc["dry_run"])
        self.assertTrue(res.doc["changed"])
        self.assert_untouched(ws, before)
        # The human form says it in one line.
        args = (["install"] + ws.target_args
                + ["--manifest", m, "--no-verify", "--cache-dir", self.cache,
                   "--dry-run"])
        r = cddtest.run(args, env=self.env(), expect=0)
        self.assertIn("would download %s (%d bytes)" % (url, len(self.data)),
                      r.out + r.err)
        self.assertEqual(self.http.requests, [])
        self.assertIsNone(self.cache_state())

    def test_dry_run_leaves_a_part_and_others_alone(self):
        self.put_part(self.data[:100])
        os.makedirs(os.path.join(self.cache, "unpinned"))
        state = self.cache_state()
        m = self.manifest([self.http.url(self.path)])
        ws = self.workspace()
        res = self.install(ws, m, "--dry-run", expect=0)
        self.assertFalse(res.doc["download"]["cached"])
        self.assertEqual(self.cache_state(), state)
        self.assertEqual(self.http.requests, [])

    def test_dry_run_checks_a_cached_archive_read_only(self):
        self.fetch(self.manifest([self.http.url(self.path)]), expect=0)
        self.http.clear()
        state = self.cache_state()
        m = self.manifest([self.http.url(self.path)])
        ws = self.workspace()
        before = ws.snap()
        res = self.install(ws, m, "--dry-run", expect=0)
        self.assertTrue(res.doc["download"]["cached"])
        self.assertEqual(self.http.requests, [])
        self.assertEqual(self.cache_state(), state)
        plan = cddtest.plan_of(res.doc)
        self.assertEqual(len(plan), len(self.fx.files))
        self.assertEqual(set(plan.values()), {"new"})
        self.assert_untouched(ws, before)

    def test_dry_run_unpinned_is_refused_as_the_install_would(self):
        m = self.manifest([self.https.url(self.path) if self.https
                           else self.http.url(self.path)], pinned=False)
        ws = self.workspace()
        res = self.install(ws, m, "--dry-run", expect=3)
        self.assertEqual(res.doc["error"]["code"], "UNPINNED")
        self.assertIsNone(self.cache_state())


# CacheIntegrity and DryRunPlan borrow FetchTest's server and helpers, not its tests.
for _cls in (CacheIntegrity, DryRunPlan):
    for _name in dir(FetchTest):
        if _name.startswith("test_") and _name not in _cls.__dict__:
            setattr(_cls, _name, None)

if __name__ == "__main__":
    cddtest.main()
