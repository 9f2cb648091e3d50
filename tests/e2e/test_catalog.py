"""End-to-end tests of the release catalog (docs/releases.md): `releases`
over the built-in catalog (NVIDIA's published sha256 and sizes), and
`install --cudnn` against a TEST catalog (--catalog DIR /
CUDNN_DEPLOY_CATALOG) whose entries pin look-alike cuDNN 9 archives served
by a loopback HTTP server at NVIDIA's paths (CUDNN_DEPLOY_MIRROR): the
choice and its reasons, the download against the catalog's pin, the
manifest made from the archive, the install, verify, the receipt's
selection, and the re-spin messages.
"""

import hashlib
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import httpfault  # noqa: E402
from archives import tar_xz_bytes  # noqa: E402
from fixtures import linux_entries  # noqa: E402

BASE_ENV = {k: None for k in ("http_proxy", "https_proxy", "HTTP_PROXY",
                              "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
                              "CUDNN_DEPLOY_MIRROR", "CUDNN_DEPLOY_CATALOG",
                              "XDG_CACHE_HOME")}
BASE_ENV["NO_PROXY"] = BASE_ENV["no_proxy"] = "127.0.0.1,localhost"

# cuDNN 9's sub-libraries and headers (the Linux 9.x tarball's shape).
SUBLIBS9 = ("graph", "ops", "cnn", "adv", "engines_precompiled",
            "engines_runtime_compiled", "heuristic")
HEADERS9 = ("cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h",
            "cudnn_graph.h", "cudnn_ops.h", "cudnn_version.h")

GOOD = "9.13.0.50"   # served, fits sm_90 with CUDA 13
NEWER = "9.27.0.42"  # newer, but (in the test facts) only for sm_100+
REL_DIR = "cudnn/linux-x86_64/"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def archive(version, cuda_tag, salt=""):
    top, entries = linux_entries(version, cuda_tag, sublibs=SUBLIBS9,
                                 headers=HEADERS9, salt=salt)
    return top + ".tar.xz", tar_xz_bytes(entries, 1)


def redistrib(label, version, entries):
    """A redistrib JSON in NVIDIA's shape; entries: {variant: (name, data)}
    or {variant: (name, sha, size)}."""
    plat = {}
    for variant, e in entries.items():
        name, sha, size = (e[0], sha256(e[1]), len(e[1])) if len(e) == 2 else e
        plat[variant] = {"relative_path": REL_DIR + name, "sha256": sha,
                         "md5": "0" * 32, "size": str(size)}
    return {"release_date": "2026-01-01", "release_label": label,
            "release_product": "cudnn",
            "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library",
                      "version": version, "linux-x86_64": plat,
                      "cuda_variant": sorted(v[4:] for v in entries)}}


FACTS = {
    "drivers": {"cuda12": {"linux": "525.60.13", "windows": "527.41"},
                "cuda13": {"linux": "580.65.06"}},
    "releases": {
        "9.13.0": {"layout": "cudnn9", "matrix": "test",
                   "cuda13": {"cuda": "13.0-13.0", "cc": "7.5-12.0"},
                   "cuda12": {"cuda": "12.0-12.9", "cc": "7.5-12.0"}},
        # Test facts: a newer release that no longer supports Hopper.
        "9.27.0": {"layout": "cudnn9", "matrix": "test",
                   "cuda13": {"cuda": "13.0-13.2", "cc": "10.0-12.0"}}},
    "respins": {}}


class CatalogTest(cddtest.CddTestCase):

    @classmethod
    def setUpClass(cls):
        cddtest.CddTestCase.setUpClass()
        cls.root = os.path.join(cddtest.WORK_ROOT, "catalog-fixtures")
        os.makedirs(cls.root, exist_ok=True)
        cls.name, cls.data = archive(GOOD, "13")
        cls.sha = sha256(cls.data)
        cls.local = os.path.join(cls.root, cls.name)
        with open(cls.local, "wb") as f:
            f.write(cls.data)
        cls.newer_name, newer_data = archive(NEWER, "13")
        cls.c12_name, c12_data = archive(GOOD, "12")
        cls.http = httpfault.FaultServer({
            "/cudnn/redist/" + REL_DIR + cls.name: cls.data,
            "/cudnn/redist/" + REL_DIR + cls.newer_name: newer_data})
        cls.http.start()
        cls.addClassCleanup(cls.http.stop)
        cls.catalog = cls.write_catalog("cat", {
            "9.13.0": redistrib("9.13.0", GOOD, {
                "cuda13": (cls.name, cls.data),
                "cuda12": (cls.c12_name, c12_data)}),
            "9.27.0": redistrib("9.27.0", NEWER, {
                "cuda13": (cls.newer_name, newer_data)})}, FACTS)
        # NVIDIA's JSON names other bytes (same size) for the served file.
        other = "ab" * 32
        cls.respun = cls.write_catalog("respun", {
            "9.13.0": redistrib("9.13.0", GOOD, {
                "cuda13": (cls.name, other, len(cls.data))})}, FACTS)
        # ...and the served bytes are an earlier, published re-spin.
        facts = json.loads(json.dumps(FACTS))
        facts["respins"] = {REL_DIR + cls.name: [
            {"sha256": cls.sha, "size": str(len(cls.data)),
             "source": "test: the first upload of this name"}]}
        cls.known_respin = cls.write_catalog("known", {
            "9.13.0": redistrib("9.13.0", GOOD, {
                "cuda13": (cls.name, other, len(cls.data))})}, facts)

    @classmethod
    def write_catalog(cls, name, releases, facts):
        d = os.path.join(cls.root, name)
        os.makedirs(d, exist_ok=True)
        for label, doc in releases.items():
            with open(os.path.join(d, "redistrib_%s.json" % label), "w") as f:
                json.dump(doc, f, indent=4)
        with open(os.path.join(d, "facts.json"), "w") as f:
            json.dump(facts, f, indent=2)
        return d

    def setUp(self):
        self.http.clear()
        self.cache = os.path.join(self.scratch("files"), "cache")

    def env(self, **extra):
        e = dict(BASE_ENV)
        e["CUDNN_DEPLOY_MIRROR"] = self.http.base + "/"
        e.update(extra)
        return e

    def install(self, ws, *extra, **kw):
        args = (["install"] + ws.target_args +
                ["--cache-dir", self.cache, "--gpu-cc", "9.0",
                 "--driver", "580.65.06"] + list(extra))
        return cddtest.run_json(args, env=kw.pop("env", self.env()),
                                expect=kw.pop("expect", None), timeout=120)

    def assert_installed_9(self, ws):
        lib = os.path.join(ws.tree, "lib64")
        self.assertTrue(os.path.isfile(os.path.join(lib, "libcudnn.so.9.13.0")))
        self.assertEqual(os.readlink(os.path.join(lib, "libcudnn_graph.so.9")),
                         "libcudnn_graph.so.9.13.0")
        self.assertTrue(os.path.isfile(os.path.join(ws.tree, "include",
                                                    "cudnn_graph.h")))

    # -- install --cudnn ---------------------------------------------------

    def test_install_cudnn_9_downloads_pins_creates_installs_verifies(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "9", "--catalog", self.catalog,
                           "--no-verify", expect=0)
        doc = res.doc
        # The choice and why the newer release lost.
        self.assertEqual(doc["catalog_release"], GOOD)
        self.assertIn("newest release matching '9'", doc["selection"])
        self.assertIn("skipped cuDNN %s" % NEWER, res.err)
        self.assertIn("GPU sm_90 is older than this release supports", res.err)
        # Downloaded from the mirror at NVIDIA's path, pinned by the catalog.
        self.assertEqual([r.path for r in self.http.requests],
                         ["/cudnn/redist/" + REL_DIR + self.name])
        self.assertEqual(doc["archive_sha256"], self.sha)
        checks = {c["name"]: c for c in doc["checks"]}
        self.assertEqual(checks["catalog"]["status"], "pass")
        self.assertIn("matches the catalog", checks["catalog"]["detail"])
        self.assert_installed_9(ws)
        receipt = cddtest.read_receipt(ws.tree)
        self.assertIn(GOOD, receipt["selection"])
        self.assertEqual(receipt["archive"]["sha256"], self.sha)
        self.assertEqual(receipt["manifest"]["version"], GOOD)
        self.assertEqual(receipt["manifest"]["cuda_major"], 13)
        # Every installed file hashed from NVIDIA's (here: the server's) bytes.
        files = cddtest.receipt_files(receipt)
        self.assertIn("lib64/libcudnn_ops.so.9.13.0", files)
        v = cddtest.run_json(["verify", "--cuda-root", ws.tree, "--level",
                              "files"], env=self.env(), expect=0)
        self.assertTrue(v.doc["ok"])

    def test_env_catalog_and_local_archive_need_no_network(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "9.13", "--archive", self.local,
                           "--no-verify", expect=0,
                           env=self.env(CUDNN_DEPLOY_CATALOG=self.catalog))
        self.assertEqual(res.doc["catalog_release"], GOOD)
        self.assertEqual(self.http.requests, [])
        self.assert_installed_9(ws)

    def test_default_for_a_cuda13_tree_is_the_catalog(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--no-verify", expect=0,
                           env=self.env(CUDNN_DEPLOY_CATALOG=self.catalog))
        self.assertIn("the default is the newest catalog release", res.err)
        self.assertEqual(res.doc["catalog_release"], GOOD)

    def test_cuda12_tree_takes_the_cuda12_variant(self):
        ws = self.workspace(version="12.4.1")
        before = ws.snap()
        res = self.install(ws, "--cudnn", "latest", "--catalog",
                           self.catalog, "--no-verify")
        # The cuda12 archive is in the catalog but not on the server: the
        # choice is right and the download of exactly that name fails.
        self.assertError(res, 4, "NETWORK")
        self.assertEqual(res.doc["catalog_archive"], REL_DIR + self.c12_name)
        self.assertSameTree(before, ws.snap())

    def test_nothing_fits_names_every_reason(self):
        ws = self.workspace(version="13.0.1")
        before = ws.snap()
        res = self.install(ws, "--cudnn", "9", "--catalog", self.catalog,
                           "--gpu-cc", "6.1", "--no-verify")
        err = self.assertError(res, 4, "NOTFOUND")
        self.assertIn("releases", err["message"])
        self.assertIn("GPU sm_61 is older", res.err)
        self.assertSameTree(before, ws.snap())
        self.assertEqual(self.http.requests, [])

    def test_old_driver_refused_with_reason(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "9", "--catalog", self.catalog,
                           "--driver", "570.86.10", "--no-verify")
        self.assertError(res, 4, "NOTFOUND")
        self.assertIn("driver 570.86.10 is older than 580.65.06", res.err)

    def test_respin_download_says_how_to_check(self):
        ws = self.workspace(version="13.0.1")
        before = ws.snap()
        res = self.install(ws, "--cudnn", "9", "--catalog", self.respun,
                           "--no-verify")
        err = self.assertError(res, 3, "CHECKSUM")
        self.assertIn("differ from every release of %s" % self.name,
                      err["message"])
        self.assertIn("--redistrib https://developer.download.nvidia.com/"
                      "compute/cudnn/redist/redistrib_9.13.0.json",
                      err["message"])
        self.assertSameTree(before, ws.snap())
        self.assertOutsideUntouched(ws)

    def test_respin_local_archive_says_how_to_check(self):
        ws = self.workspace(version="13.0.1")
        before = ws.snap()
        res = self.install(ws, "--cudnn", "9", "--catalog", self.respun,
                           "--archive", self.local, "--no-verify")
        err = self.assertError(res, 3, "CHECKSUM")
        self.assertIn("differ from every release of %s" % self.name,
                      err["message"])
        self.assertIn(self.sha, err["message"])
        self.assertSameTree(before, ws.snap())

    def test_earlier_published_digest_is_accepted_and_said(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "9", "--catalog", self.known_respin,
                           "--archive", self.local, "--no-verify", expect=0)
        self.assertIn("matches an earlier digest", res.err)
        self.assert_installed_9(ws)

    def test_own_sha256_replaces_the_catalog_pin(self):
        """--sha256 for an archive the user packed (the device run's real
        9.14 tarball): the catalog chooses, the user's digest pins."""
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "9", "--catalog", self.respun,
                           "--archive", self.local, "--sha256", self.sha,
                           "--no-verify", expect=0)
        checks = {c["name"]: c for c in res.doc["checks"]}
        self.assertIn("matches --sha256", checks["catalog"]["detail"])
        self.assert_installed_9(ws)
        ws2 = self.workspace("ws2", version="13.0.1")
        res = self.install(ws2, "--cudnn", "9", "--catalog", self.respun,
                           "--archive", self.local, "--sha256", "cd" * 32,
                           "--no-verify")
        self.assertError(res, 3, "CHECKSUM")

    def test_cudnn_and_manifest_together_is_usage(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "9", "--manifest",
                           "cudnn-9.14.0.64-cuda13-linux-x86_64")
        self.assertError(res, 2, "USAGE")

    def test_bad_cudnn_value_is_usage(self):
        ws = self.workspace(version="13.0.1")
        res = self.install(ws, "--cudnn", "nine")
        self.assertError(res, 2, "USAGE")

    # -- releases ------------------------------------------------------------

    def test_releases_test_catalog_reasons(self):
        res = cddtest.run_json(["releases", "--catalog", self.catalog,
                                "--cuda", "13.0", "--gpu-cc", "9.0",
                                "--driver", "580.65.06"],
                               env=self.env(), expect=0)
        doc = res.doc
        self.assertEqual(doc["choice"], GOOD)
        by = {(r["version"], a["variant"]): a for r in doc["releases"]
              for a in r["archives"]}
        self.assertEqual(by[(NEWER, "cuda13")]["why"], ["gpu"])
        self.assertEqual(by[(GOOD, "cuda12")]["why"], ["cuda"])
        self.assertTrue(by[(GOOD, "cuda13")]["fits"])


class BuiltinCatalog(cddtest.CddTestCase):
    """releases --json over the compiled-in catalog: NVIDIA's facts."""

    @classmethod
    def setUpClass(cls):
        cddtest.CddTestCase.setUpClass()
        res = cddtest.run_json(["releases", "--platform", "all"],
                               env=dict(BASE_ENV), expect=0)
        cls.doc = res.doc
        cls.by_path = {a["relative_path"]: (r, a) for r in cls.doc["releases"]
                       for a in r["archives"]}

    def spot(self, path, sha, size):
        r, a = self.by_path[path]
        self.assertEqual(a["sha256"], sha)
        self.assertEqual(a["size"], size)
        self.assertEqual(a["url"], "https://developer.download.nvidia.com/"
                         "compute/cudnn/redist/" + path)

    def test_spot_checks(self):
        self.spot("cudnn/windows-x86_64/cudnn-windows-x86_64-8.5.0.96_cuda11-"
                  "archive.zip",
                  "bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b",
                  542516637)
        self.spot("cudnn/linux-x86_64/cudnn-linux-x86_64-8.5.0.96_cuda11-"
                  "archive.tar.xz",
                  "5454a6fd94f008728caae9adad993c4e85ef36302e26bce43bea7d458a5e7b6d",
                  692647752)
        r, a = self.by_path["cudnn/windows-x86_64/cudnn-windows-x86_64-"
                            "9.27.0.42_cuda12-archive.zip"]
        self.assertEqual(a["size"], 1924314965)
        self.spot("cudnn/linux-x86_64/cudnn-linux-x86_64-8.9.7.29_cuda12-"
                  "archive.tar.xz",
                  "475333625c7e42a7af3ca0b2f7506a106e30c93b1aa0081cd9c13efb6e21e3bb",
                  864984964)

    def test_every_platform_and_variant_shape(self):
        plats = {a["platform"] for r in self.doc["releases"]
                 for a in r["archives"]}
        for p in ("linux-x86_64", "linux-sbsa", "linux-aarch64",
                  "windows-x86_64", "windows-arm64"):
            self.assertIn(p, plats)
        # 9.27's windows-arm64 holds a nested cuda13 and a flat cuda13.4.
        r, a = self.by_path["cudnn/windows-arm64/cudnn-windows-arm64-"
                            "9.27.0.42_cuda13.4-archive.zip"]
        self.assertEqual(a["variant"], "cuda13.4")
        self.assertEqual(a["cuda_major"], 13)
        # 8.5.0.96's flat entries: the CUDA major from the file name.
        r, a = self.by_path["cudnn/linux-sbsa/cudnn-linux-sbsa-8.5.0.96_cuda11-"
                            "archive.tar.xz"]
        self.assertEqual(a["cuda_major"], 11)

    def test_newest_first_and_facts_for_every_release(self):
        vs = [tuple(int(x) for x in r["version"].split("."))
              for r in self.doc["releases"]]
        self.assertEqual(vs, sorted(vs, reverse=True))
        for r in self.doc["releases"]:
            self.assertTrue(r["cuda_variants"], r["version"])
            self.assertTrue(r["layout"], r["version"])

    def test_gpu_cut_at_9_11(self):
        res = cddtest.run_json(["releases", "--cuda", "12.4", "--gpu-cc",
                                "6.1", "--driver", "550.54.14"],
                               env=dict(BASE_ENV), expect=0)
        for r in res.doc["releases"]:
            v = tuple(int(x) for x in r["version"].split(".")[:2])
            for a in r["archives"]:
                if a["platform"] != "linux-x86_64" or a["cuda_major"] != 12:
                    continue
                if v >= (9, 11):
                    self.assertIn("gpu", a["why"], r["version"])
                else:
                    self.assertNotIn("gpu", a["why"], r["version"])
        self.assertLess(tuple(int(x) for x in res.doc["choice"].split(".")[:2]),
                        (9, 11))


if __name__ == "__main__":
    cddtest.main()
