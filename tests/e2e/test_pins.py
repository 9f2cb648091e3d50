"""Pins and real archive shapes (issue 11, part A): the fuller 8.x tarball
(`_v8` header twins as files, lib*_static_v8.a as symlinks) installing with
its symlinks and uninstalling back; the shipped manifests' pins doing their
work (the Windows 8.5.0.96 zip needs no pin flag: tested with a generated
zip under a copy of the shipped manifest carrying that zip's pin, since the
real zip is not here); --redistrib pinning a local --archive, in the real
shapes of NVIDIA's redistrib files; a body of the wrong size refused at
once as the wrong file (local file, download, mirror), never retried; the
warning when CUDA_PATH_Vx_y names a tree of another version; doctor's advice
following the tree's layout.
"""

import copy
import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import httpfault  # noqa: E402
from cddtest import (DIR, FIX, LINUX, SYMLINK, WINDOWS, CddTestCase,  # noqa: E402
                     Entry, Fixture, install_args, run, run_json)

SHIPPED_LINUX = "cudnn-8.5.0.96-cuda11-linux-x86_64"
SHIPPED_WINDOWS = "cudnn-8.5.0.96-cuda11-windows-x86_64"
WINDOWS_PIN = "bf277ed350addb8f97e0ab6a20b6fad869abe49ea24277d38ca79f5f23fbec6b"
WINDOWS_SIZE = 542516637
NO_NET = {k: None for k in ("http_proxy", "https_proxy", "HTTP_PROXY",
                            "HTTPS_PROXY", "ALL_PROXY", "all_proxy",
                            "CUDNN_DEPLOY_MIRROR")}
NO_NET["NO_PROXY"] = NO_NET["no_proxy"] = "127.0.0.1,localhost"


def shipped(name):
    """The shipped manifest, as `manifest show` prints it."""
    r = run(["manifest", "show", name], expect=0)
    return json.loads(r.out)


def v8_entries():
    """A Linux 8.x tarball in the real fuller shape: the 9 headers and their
    `_v8.h` twins (files), lib*_static.a and lib*_static_v8.a (symlinks to
    the former, in name order: each link before its target is fine too),
    the .so chains, LICENSE."""
    top, entries = cddtest.linux_entries()
    out = []
    for e in entries:
        out.append(e)
        rel = e.name[len(top) + 1:]
        if rel.startswith("include/") and rel.endswith(".h"):
            out.append(e.copy(name=e.name[:-2] + "_v8.h"))
        if rel.endswith("_static.a"):
            base = rel.rsplit("/", 1)[1]
            out.append(Entry(top + "/lib/" + base[:-2] + "_v8.a", SYMLINK,
                             target=base))
    return top, out


class RealShape(CddTestCase):
    """The real 8.x tarball shape under the shipped Linux manifest."""

    @classmethod
    def setUpClass(cls):
        CddTestCase.setUpClass()
        top, entries = v8_entries()
        cls.fx = Fixture(os.path.join(cddtest.WORK_ROOT, "v8-fixture"), LINUX,
                         "8.5.0.96", 11, top, entries)

    def shipped_variant(self, name="shipped-linux.json"):
        """The shipped 8.5.0.96 Linux manifest (what it lists, files_exact
        false) pinning the generated tarball instead of NVIDIA's."""
        doc = shipped(SHIPPED_LINUX)
        doc["archive"]["sha256"] = self.fx.sha256
        doc["archive"]["size"] = self.fx.size
        return cddtest.write_json(os.path.join(self.scratch("m"), name), doc)

    def test_fixture_has_the_real_shape(self):
        rels = sorted(self.fx.files)
        self.assertEqual(len([r for r in rels if r.endswith("_v8.h")]), 9)
        links = [r for r in rels if r.endswith("_static_v8.a")]
        self.assertEqual(len(links), 6)
        self.assertTrue(all(self.fx.files[r].kind == SYMLINK for r in links))
        # 18 headers, 12 static, 21 .so entries, LICENSE (+ 3 folders: 55)
        self.assertEqual(len(rels), 52)

    def test_install_with_symlinks_and_uninstall_restores(self):
        m = self.shipped_variant()
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, self.fx, manifest=m)
        self.assertEqual(j.doc["pin"], "manifest")
        self.assertInstalled(ws, self.fx, before)
        lib64 = os.path.join(ws.tree, "lib64")
        for s in cddtest.SUBLIBS:
            link = os.path.join(lib64, "libcudnn_%s_static_v8.a" % s)
            self.assertTrue(os.path.islink(link), link)
            self.assertEqual(os.readlink(link), "libcudnn_%s_static.a" % s)
            self.assertTrue(os.path.isfile(os.path.realpath(link)))
            self.assertEqual(os.path.dirname(os.path.realpath(link)),
                             os.path.realpath(lib64))
        self.assertTrue(os.path.isfile(
            os.path.join(ws.tree, "include", "cudnn_ops_train_v8.h")))
        # The unlisted entries came in under the pin and are in the receipt.
        files = cddtest.receipt_files(cddtest.read_receipt(ws.tree))
        self.assertIn("lib64/libcudnn_cnn_infer_static_v8.a", files)
        self.assertEqual(files["lib64/libcudnn_cnn_infer_static_v8.a"]
                         .get("symlink"), "libcudnn_cnn_infer_static.a")
        # status sees it intact; uninstall gives the tree back exactly.
        run_json(["status"] + ws.target_args, expect=0)
        run_json(["uninstall"] + ws.target_args, expect=0)
        self.assertSameTree(before, ws.snap(cddtest.IGNORE_LOCK_LOG))
        self.assertOutsideUntouched(ws)

    def test_static_v8_as_files_too(self):
        top, entries = cddtest.linux_entries(salt="files")
        more = []
        for e in entries:
            more.append(e)
            if e.name.endswith("_static.a"):
                more.append(e.copy(name=e.name[:-2] + "_v8.a"))
        fx = Fixture(self.scratch("fx-files"), LINUX, "8.5.0.96", 11, top, more)
        doc = shipped(SHIPPED_LINUX)
        doc["archive"]["sha256"], doc["archive"]["size"] = fx.sha256, fx.size
        m = cddtest.write_json(os.path.join(self.scratch("m2"), "m.json"), doc)
        ws = self.workspace()
        before = ws.snap()
        self.install(ws, fx, manifest=m)
        self.assertInstalled(ws, fx, before)

    def test_unpinned_fuller_shape_refused(self):
        """files_exact false lets unlisted entries in only under a pin."""
        doc = shipped(SHIPPED_LINUX)
        doc["archive"]["sha256"] = doc["archive"]["size"] = None
        m = cddtest.write_json(os.path.join(self.scratch("m3"), "m.json"), doc)
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, self.fx, "--allow-unpinned", manifest=m,
                         expect=None)
        err = self.assertError(j, 3, "ARCHIVE")
        self.assertIn("not pinned", err["message"])
        self.assertSameTree(before, ws.snap())

    def test_exact_manifest_lists_the_links(self):
        """The fixture's exact manifest lists the static links as symlinks
        (listed targets): the same install."""
        ws = self.workspace()
        before = ws.snap()
        self.install(ws, self.fx)
        self.assertInstalled(ws, self.fx, before)

    def test_manifest_create_lists_static_links(self):
        out = os.path.join(self.scratch("create"), "made.json")
        run(["manifest", "create", self.fx.path, "--output", out], expect=0)
        with open(out) as f:
            doc = json.load(f)
        by = {e["path"]: e for e in doc["files"]}
        link = by["lib/libcudnn_adv_train_static_v8.a"]
        self.assertEqual((link["role"], link["target"]),
                         ("symlink", "libcudnn_adv_train_static.a"))
        self.assertEqual(by["include/cudnn_v8.h"]["role"], "header")
        self.assertEqual(len(doc["files"]), 52)
        ws = self.workspace()
        before = ws.snap()
        self.install(ws, self.fx, manifest=out)
        self.assertInstalled(ws, self.fx, before)


class WindowsPin(CddTestCase):
    """The shipped Windows 8.5.0.96 manifest carries NVIDIA's pin."""

    def test_shipped_pin(self):
        doc = shipped(SHIPPED_WINDOWS)
        self.assertEqual(doc["archive"]["sha256"], WINDOWS_PIN)
        self.assertEqual(doc["archive"]["size"], WINDOWS_SIZE)
        self.assertTrue(doc["files_exact"])
        self.assertEqual(len(doc["files"]), 31)

    def windows_variant(self, fx, size_delta=0):
        doc = shipped(SHIPPED_WINDOWS)
        doc["archive"]["sha256"] = fx.sha256
        doc["archive"]["size"] = fx.size + size_delta
        return cddtest.write_json(
            os.path.join(self.scratch("m%d" % size_delta), "m.json"), doc)

    def test_matching_archive_needs_no_pin_flag(self):
        fx = FIX.windows
        m = self.windows_variant(fx)
        ws = self.workspace(platform=WINDOWS)
        before = ws.snap()
        j = self.install(ws, fx, manifest=m, env=NO_NET)
        self.assertEqual(j.doc["pin"], "manifest")
        self.assertInstalled(ws, fx, before)

    def test_wrong_size_is_the_wrong_file_at_once(self):
        fx = FIX.windows
        for delta in (-1, 1):
            with self.subTest(delta=delta):
                m = self.windows_variant(fx, delta)
                ws = self.workspace("ws%d" % delta, platform=WINDOWS)
                before = ws.snap()
                j = self.install(ws, fx, manifest=m, expect=None)
                err = self.assertError(j, 3, "CHECKSUM")
                self.assertIn("wrong file", err["message"])
                self.assertIn("%d bytes" % fx.size, err["message"])
                self.assertSameTree(before, ws.snap())

    def test_shipped_manifest_rejects_another_zip(self):
        ws = self.workspace(platform=WINDOWS)
        before = ws.snap()
        j = self.install(ws, FIX.windows, manifest=SHIPPED_WINDOWS, expect=None)
        err = self.assertError(j, 3, "CHECKSUM")
        self.assertIn(str(WINDOWS_SIZE), err["message"])
        self.assertSameTree(before, ws.snap())


# NVIDIA's redistrib files, in their real shapes (as vendored by nixpkgs),
# with our fixture's pin where theirs names the archive we test with.
def flat_8_5(fx, size=None):
    """redistrib_8.5.0.96.json: flat (platform -> entry), size a string,
    md5, no release_label; also linux-ppc64le, linux-sbsa, cudnn_samples."""
    return {
        "cudnn": {
            "name": "NVIDIA CUDA Deep Neural Network library",
            "license": "cudnn",
            "version": "8.5.0.96",
            "linux-x86_64": {
                "relative_path": "cudnn/linux-x86_64/" + fx.filename,
                "sha256": fx.sha256,
                "md5": "2c7878f9c383117918695e7f98a9aa86",
                "size": str(fx.size if size is None else size)},
            "linux-ppc64le": {
                "relative_path": "cudnn/linux-ppc64le/cudnn-linux-ppc64le-"
                                 "8.5.0.96_cuda11-archive.tar.xz",
                "sha256": "ab" * 32, "md5": "cd" * 16, "size": "1000"},
            "linux-sbsa": {
                "relative_path": "cudnn/linux-sbsa/cudnn-linux-sbsa-"
                                 "8.5.0.96_cuda11-archive.tar.xz",
                "sha256": "ef" * 32, "md5": "01" * 16, "size": "1001"},
            "windows-x86_64": {
                "relative_path": "cudnn/windows-x86_64/cudnn-windows-x86_64-"
                                 "8.5.0.96_cuda11-archive.zip",
                "sha256": WINDOWS_PIN,
                "md5": "8c0bafe2f2761a9b3bcc5ce78a6fad55",
                "size": str(WINDOWS_SIZE)},
        },
        "cudnn_samples": {
            "name": "NVIDIA cuDNN samples", "license": "cudnn",
            "version": "8.5.0.96",
            "linux-x86_64": {
                "relative_path": "cudnn_samples/linux-x86_64/cudnn_samples-"
                                 "linux-x86_64-8.5.0.96-archive.tar.xz",
                "sha256": "23" * 32, "md5": "45" * 16, "size": "2000"}},
    }


def nested_8_9(fx):
    """redistrib_8.9.7.json: nested (platform -> cuda11/cuda12 -> entry),
    release_label "8.9.7", cudnn.version "8.9.7.29" -- here with the
    fixture's cuda11 entry for a manifest of the fixture's version."""
    doc = {"release_date": "2023-12-06", "release_label": "8.9.7",
           "release_product": "cudnn",
           "cudnn": {"name": "NVIDIA CUDA Deep Neural Network library",
                     "license": "cudnn", "version": fx.version,
                     "linux-x86_64": {
                         "cuda11": {"relative_path": "cudnn/linux-x86_64/"
                                                     + fx.filename,
                                    "sha256": fx.sha256, "md5": "67" * 16,
                                    "size": str(fx.size)},
                         "cuda12": {"relative_path": "cudnn/linux-x86_64/"
                                    "cudnn-linux-x86_64-8.9.7.29_cuda12-"
                                    "archive.tar.xz",
                                    "sha256": "475333625c7e42a7af3ca0b2f750"
                                              "6a106e30c93b1aa0081cd9c13efb"
                                              "6e21e3bb",
                                    "md5": "89" * 16, "size": "864984964"}}}}
    return doc


class RedistribLocal(CddTestCase):
    """--redistrib FILE pins a local --archive."""

    def unpinned(self, fx):
        return fx.manifest_variant(
            os.path.join(self.scratch("m"), "m.json"),
            lambda d: [f.update(sha256=None, size=None) for f in d["files"]
                       if f["role"] != "symlink"],
            sha256=None, size=None)

    def redistrib(self, doc):
        return cddtest.write_json(
            os.path.join(self.scratch("r"), "redistrib.json"), doc)

    def test_flat_8_5_shape_pins_local_archive(self):
        fx = FIX.linux
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, fx, "--redistrib", self.redistrib(flat_8_5(fx)),
                         manifest=self.unpinned(fx), env=NO_NET)
        self.assertEqual(j.doc["pin"], "redistrib")
        self.assertInstalled(ws, fx, before)
        rc = cddtest.read_receipt(ws.tree)
        self.assertEqual(rc["archive"]["pin_source"], "redistrib")

    def test_nested_8_9_shape_pins_local_archive(self):
        fx = FIX.linux
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, fx, "--redistrib", self.redistrib(nested_8_9(fx)),
                         manifest=self.unpinned(fx), env=NO_NET)
        self.assertEqual(j.doc["pin"], "redistrib")
        self.assertInstalled(ws, fx, before)

    def test_without_redistrib_local_archive_is_unpinned(self):
        """No network for a local archive unless --redistrib says so: the
        manifest's redistrib_url is not fetched."""
        fx = FIX.linux
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, fx, manifest=self.unpinned(fx), env=NO_NET,
                         expect=None)
        self.assertError(j, 3, "UNPINNED")
        self.assertSameTree(before, ws.snap())

    def test_redistrib_size_wrong_is_the_wrong_file(self):
        fx = FIX.linux
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, fx, "--redistrib",
                         self.redistrib(flat_8_5(fx, size=fx.size - 7)),
                         manifest=self.unpinned(fx), expect=None)
        err = self.assertError(j, 3, "CHECKSUM")
        self.assertIn("wrong file", err["message"])
        self.assertIn("redistrib", err["message"])
        self.assertSameTree(before, ws.snap())

    def test_redistrib_sha_wrong_rejects_local_archive(self):
        fx = FIX.linux
        doc = flat_8_5(fx)
        doc["cudnn"]["linux-x86_64"]["sha256"] = "ab" * 32
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, fx, "--redistrib", self.redistrib(doc),
                         manifest=self.unpinned(fx), expect=None)
        err = self.assertError(j, 3, "CHECKSUM")
        self.assertIn("ab" * 32, err["message"])
        self.assertSameTree(before, ws.snap())

    def test_url_with_archive_is_a_usage_error(self):
        fx = FIX.linux
        ws = self.workspace()
        j = self.install(ws, fx, "--url", "https://127.0.0.1:1/x.tar.xz",
                         expect=None)
        self.assertError(j, 2, "USAGE")


class WrongSizeDownload(CddTestCase):
    """A body shorter or longer than the pin is the wrong file: exit 3 at
    once, one request, nothing cached -- never retried as a network
    fault."""

    @classmethod
    def setUpClass(cls):
        CddTestCase.setUpClass()
        cls.fx = FIX.linux
        with open(cls.fx.path, "rb") as f:
            data = f.read()
        cls.rel = "cudnn/redist/cudnn/linux-x86_64/" + cls.fx.filename
        cls.http = httpfault.FaultServer({
            "/short/" + cls.rel: data[:-100],
            "/long/" + cls.rel: data + b"\0" * 100})
        cls.http.start()
        cls.addClassCleanup(cls.http.stop)

    def setUp(self):
        self.http.clear()
        self.dir = self.scratch("files")

    def attempt(self, manifest_urls, env=None):
        m = self.fx.manifest_variant(
            os.path.join(self.dir, "m.json"),
            lambda d: d["archive"].update(url=list(manifest_urls)))
        ws = self.workspace()
        before = ws.snap()
        e = dict(NO_NET)
        e.update(env or {})
        j = run_json(["install"] + ws.target_args
                     + ["--manifest", m, "--no-verify", "--retries", "4",
                        "--cache-dir", os.path.join(self.dir, "cache")],
                     env=e, expect=None, timeout=60)
        err = self.assertError(j, 3, "CHECKSUM")
        self.assertSameTree(before, ws.snap())
        return err

    def test_shorter_body(self):
        err = self.attempt([self.http.url("/short/" + self.rel)])
        self.assertIn("wrong file", err["message"])
        self.assertEqual(len(self.http.requests), 1, self.http.requests)

    def test_longer_body(self):
        err = self.attempt([self.http.url("/long/" + self.rel)])
        self.assertIn("wrong file", err["message"])
        self.assertEqual(len(self.http.requests), 1, self.http.requests)

    def test_resume_past_a_short_file(self):
        """A .part longer than the server's file: the range request gets
        416 with the server's total, which names the wrong file."""
        with open(self.fx.path, "rb") as f:
            data = f.read()
        part = os.path.join(self.dir, "cache", self.fx.sha256,
                            self.fx.filename + ".part")
        os.makedirs(os.path.dirname(part))
        with open(part, "wb") as f:
            f.write(data[:-50])  # past the short copy's end (len - 100)
        err = self.attempt([self.http.url("/short/" + self.rel)])
        self.assertIn("wrong file", err["message"])
        self.assertEqual([(r.status, r.range) for r in self.http.requests],
                         [(416, "bytes=%d-" % (len(data) - 50))])
        self.assertFalse(os.path.exists(part), "the wrong bytes are not kept")

    def test_mirror_serving_a_short_copy(self):
        err = self.attempt(
            ["https://developer.download.nvidia.com/compute/" + self.rel],
            env={"CUDNN_DEPLOY_MIRROR": self.http.url("/short/")})
        self.assertIn("wrong file", err["message"])
        self.assertEqual(len(self.http.requests), 1, self.http.requests)


class TargetVersion(CddTestCase):
    """CUDA_PATH_Vx_y naming a tree of another version is said."""

    def dry_run(self, ws, env):
        return run_json(["install", "--cuda", "v11.6", "--manifest",
                         FIX.linux.manifest_path, "--archive", FIX.linux.path,
                         "--dry-run"], env=env, expect=0)

    def test_cuda_path_names_another_version(self):
        ws = self.workspace(version="11.5.2")
        j = self.dry_run(ws, {"CUDA_PATH_V11_6": ws.tree})
        checks = {c["name"]: c for c in j.doc["checks"]}
        self.assertIn("target.version", checks)
        c = checks["target.version"]
        self.assertEqual(c["status"], "warn")
        self.assertIn("CUDA_PATH_V11_6", c["detail"])
        self.assertIn("CUDA 11.5", c["detail"])
        self.assertIn("version.json", c["detail"])

    def test_version_txt_tree(self):
        ws = self.workspace(version="11.0.3", source="txt")
        j = run_json(["status", "--cuda", "v11.6"],
                     env={"CUDA_PATH_V11_6": ws.tree}, expect=None)
        checks = {c["name"]: c for c in j.doc["checks"]}
        self.assertIn("version.txt", checks["target.version"]["detail"])

    def test_matching_tree_says_nothing(self):
        ws = self.workspace(version="11.6.2")
        j = self.dry_run(ws, {"CUDA_PATH_V11_6": ws.tree})
        self.assertNotIn("target.version",
                         [c["name"] for c in j.doc["checks"]])

    def test_cuda_root_is_not_warned(self):
        ws = self.workspace(version="11.5.2")
        j = run_json(install_args(ws, FIX.linux, None, None, "--dry-run"),
                     expect=0)
        self.assertNotIn("target.version",
                         [c["name"] for c in j.doc["checks"]])


class DoctorLayout(CddTestCase):
    """doctor's advice follows the tree's layout, not the host's."""

    def doctor(self, ws):
        env = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": None,
               "CUDA_HOME": None, "CUDNN_PATH": None, "CONDA_PREFIX": None,
               "CUDNN_DEPLOY_DRIVER_LIB": os.path.join(ws.dir, "no-driver.so")}
        j = run_json(["doctor"] + ws.target_args, env=env, expect=None)
        return {c["name"]: c for c in j.doc["checks"]}

    @unittest.skipIf(sys.platform == "win32", "a Linux host's view")
    def test_windows_tree_is_not_told_to_add_lib64(self):
        ws = self.workspace(platform=WINDOWS)
        checks = self.doctor(ws)
        for c in checks.values():
            self.assertNotIn(os.path.join(ws.tree, "lib64"), c["detail"], c)
            self.assertNotIn("lib64 is not", c["detail"], c)
        self.assertEqual(checks["target.search"]["status"], "skip")
        self.assertIn("Windows tree", checks["target.search"]["detail"])

    @unittest.skipIf(sys.platform == "win32", "a Linux host's view")
    def test_linux_tree_gets_lib64_advice(self):
        ws = self.workspace(platform=LINUX)
        checks = self.doctor(ws)
        self.assertEqual(checks["target.search"]["status"], "warn")
        self.assertIn(os.path.join(ws.tree, "lib64"),
                      checks["target.search"]["detail"])



# ---- one open file from pin to extraction (issue 18) ----------------------

def _swap_pair(folder):
    """Two plain tarballs of the same size and the same entries, with other
    bytes in every file (each byte + 1), and a manifest that pins the first
    by its archive sha256 alone: no per-file hashes or sizes, as the shipped
    8.9.7 manifests."""
    top, entries = cddtest.linux_entries(
        sublibs=("ops_infer",),
        headers=("cudnn.h", "cudnn_ops_infer.h", "cudnn_version.h"))
    good = cddtest.tar_bytes(entries)
    evil_entries = [e.copy(data=bytes((b + 1) & 0xff for b in e.data))
                    if e.kind == cddtest.FILE else e for e in entries]
    evil = cddtest.tar_bytes(evil_entries)
    assert len(good) == len(evil) and good != evil
    fx = Fixture(os.path.join(folder, "fx"), LINUX, "8.5.0.96", 11, top,
                 entries, sublibs=("ops_infer",))
    doc = copy.deepcopy(fx.manifest)
    doc["archive"]["filename"] = top + ".tar"
    doc["archive"]["sha256"] = cddtest.sha256_bytes(good)
    doc["archive"]["size"] = len(good)
    doc["files_exact"] = False
    for f in doc["files"]:
        if "sha256" in f:
            f["sha256"] = f["size"] = None
    manifest = cddtest.write_json(os.path.join(folder, "pinned.json"), doc)
    a = cddtest.write_bytes(os.path.join(folder, "good.tar"), good)
    b = cddtest.write_bytes(os.path.join(folder, "evil.tar"), evil)
    return fx, manifest, a, b


class OneOpenFile(CddTestCase):
    """The pin, the size check and the extraction read one open file: with
    the --archive path renamed back and forth between the pinned tarball and
    a same-size other one while installs run, no install exits 0 with bytes
    the pin never saw; each installs the pinned bytes or fails with exit 3,
    its tree unchanged. Before the fix, about 1 in 5 exited 0 with the other
    bytes."""

    N = 24
    PARALLEL = 3

    def _run_many(self, fx, manifest, archive, ws_prefix, stop, extra=()):
        import concurrent.futures
        wss = [self.workspace("%s%d" % (ws_prefix, i)) for i in range(self.N)]
        befores = [ws.snap() for ws in wss]

        def one(i):
            return cddtest.run_json(
                install_args(wss[i], fx, manifest, archive, "--jobs", "1",
                             *extra), expect=None)
        with concurrent.futures.ThreadPoolExecutor(self.PARALLEL) as pool:
            results = list(pool.map(one, range(self.N)))
        stop()
        return wss, befores, results

    def _judge(self, fx, wss, befores, results):
        ok = failed = 0
        for ws, before, res in zip(wss, befores, results):
            if res.rc == 0:
                ok += 1
                # Every installed file holds the pinned tarball's bytes.
                self.assertInstalled(ws, fx, before)
            else:
                failed += 1
                if os.environ.get("CDD_SWAP_DEBUG"):
                    sys.stderr.write("%r\n" % (res.doc.get("error"),))
                self.assertError(res, 3, ("CHECKSUM", "CORRUPT", "ARCHIVE",
                                          "UNSAFE"))
                self.assertSameTree(before, ws.snap())
        return ok, failed

    def test_path_renamed_over_while_installing(self):
        import threading
        d = self.scratch("swap")
        fx, manifest, good, evil = _swap_pair(d)
        path = os.path.join(d, "archive.tar")
        os.link(good, path)
        done = threading.Event()
        flips = [0]

        with open(good, "rb") as f:
            gb = f.read()
        with open(evil, "rb") as f:
            eb = f.read()

        def swapper():
            # A fresh file each time, renamed over the path: the file an
            # install holds is unlinked, never changed.
            tmp = path + ".new"
            while not done.is_set():
                for data in (eb, gb):
                    with open(tmp, "wb") as f:
                        f.write(data)
                    os.replace(tmp, path)
                    flips[0] += 1
        t = threading.Thread(target=swapper)
        t.start()
        try:
            wss, befores, results = self._run_many(
                fx, manifest, path, "ws", done.set)
        finally:
            done.set()
            t.join()
        ok, failed = self._judge(fx, wss, befores, results)
        self.assertGreater(flips[0], self.N)
        sys.stderr.write("swap: %d installed the pinned bytes, %d refused, "
                         "%d renames\n" % (ok, failed, flips[0]))

    def test_changed_in_place_while_installing(self):
        """A writer with its own handle rewrites the same file (same inode,
        same account: the owner check lets it through) between the two
        contents: the change is seen on the held handle (size, write and
        change time) and the install refused, or the pinned bytes were
        read throughout."""
        import threading
        d = self.scratch("inplace")
        fx, manifest, good, evil = _swap_pair(d)
        with open(good, "rb") as f:
            gb = f.read()
        with open(evil, "rb") as f:
            eb = f.read()
        path = os.path.join(d, "archive.tar")
        with open(path, "wb") as f:
            f.write(gb)
        done = threading.Event()

        def writer():
            fd = os.open(path, os.O_WRONLY)
            try:
                while not done.is_set():
                    for data in (eb, gb):
                        os.pwrite(fd, data, 0)
            finally:
                os.close(fd)
        t = threading.Thread(target=writer)
        t.start()
        try:
            wss, befores, results = self._run_many(
                fx, manifest, path, "ip", done.set)
        finally:
            done.set()
            t.join()
        self._judge(fx, wss, befores, results)

    @unittest.skipIf(os.name == "nt", "POSIX modes")
    def test_archive_writable_by_others_is_refused(self):
        d = self.scratch("modes")
        fx, manifest, good, _ = _swap_pair(d)
        for mode, word in ((0o646, "o+w"), (0o666, "o+w")):
            with self.subTest(mode=oct(mode)):
                os.chmod(good, mode)
                ws = self.workspace("m%o" % mode)
                before = ws.snap()
                j = self.install(ws, fx, manifest=manifest, archive=good,
                                 expect=None)
                err = self.assertError(j, 3, "UNSAFE")
                self.assertIn(word, err["message"])
                self.assertSameTree(before, ws.snap())
        os.chmod(good, 0o644)
        ws = self.workspace("ok")
        self.install(ws, fx, manifest=manifest, archive=good)

    @unittest.skipIf(os.name == "nt" or not hasattr(os, "geteuid") or
                     os.geteuid() != 0, "needs root to give a file away")
    def test_archive_of_another_account_is_refused(self):
        d = self.scratch("owner")
        fx, manifest, good, _ = _swap_pair(d)
        os.chown(good, 12345, 12345)
        ws = self.workspace()
        before = ws.snap()
        j = self.install(ws, fx, manifest=manifest, archive=good, expect=None)
        err = self.assertError(j, 3, "UNSAFE")
        self.assertIn("another account", err["message"])
        self.assertSameTree(before, ws.snap())


class BundleNames(CddTestCase):
    """bundle keeps names whole (issue 18): a legal 245-byte archive name in
    its platform folder makes an index whose relative_path names the file
    that is there, and an install from the bundle folder finds it; a name
    over 255 bytes is refused with a clear message, nothing cut."""

    def named(self, n):
        fx = cddtest.FIX.linux
        suffix = ".tar.xz"
        name = ("cudnn-linux-x86_64-8.5.0.96_cuda11-" + "x" * n)[:n - len(suffix)] + suffix
        assert len(name.encode()) == n
        d = self.scratch("n%d" % n)
        arch = os.path.join(d, name)
        with open(fx.path, "rb") as f, open(arch, "wb") as g:
            g.write(f.read())
        m = fx.manifest_variant(os.path.join(d, "m.json"), filename=name)
        return fx, d, arch, m

    def test_245_byte_name_is_kept_whole(self):
        fx, d, arch, m = self.named(245)
        out = os.path.join(d, "out")
        cddtest.run_json(["bundle", "--manifest", m, "-o", out, "--archive",
                          arch, "--cache-dir", os.path.join(d, "cache")],
                         expect=0)
        with open(os.path.join(out, "cudnn/redist/redistrib_8.5.0.96.json")) as f:
            red = json.load(f)
        rel = red["cudnn"]["linux-x86_64"]["cuda11"]["relative_path"]
        self.assertEqual(rel, "cudnn/linux-x86_64/" + os.path.basename(arch))
        path = os.path.join(out, "cudnn/redist", rel)
        self.assertEqual(cddtest.sha256_file(path), fx.sha256)
        # A fleet machine installs through the index, from the folder: the
        # manifest pins nothing and names no URL, the index does both.
        def unpinned(doc):
            doc["archive"]["sha256"] = doc["archive"]["size"] = None
            doc["archive"].pop("url", None)
        um = fx.manifest_variant(os.path.join(d, "u.json"), unpinned,
                                 filename=os.path.basename(arch))
        ws = self.workspace()
        before = ws.snap()
        cddtest.run_json(
            ["install"] + ws.target_args
            + ["--manifest", um, "--no-verify", "--cache-dir",
               os.path.join(d, "cache2"), "--redistrib",
               "file://" + os.path.join(out, "cudnn/redist/"
                                        "redistrib_8.5.0.96.json")],
            expect=0, env=NO_NET)
        self.assertInstalled(ws, fx, before)

    def test_name_over_255_bytes_is_refused(self):
        fx = cddtest.FIX.linux
        d = self.scratch("long")
        name = "c" * 249 + ".tar.xz"          # 256 bytes
        m = fx.manifest_variant(os.path.join(d, "m.json"), filename=name)
        res = cddtest.run_json(["bundle", "--manifest", m, "-o",
                                os.path.join(d, "out"), "--archive", fx.path,
                                "--cache-dir", os.path.join(d, "cache")],
                               expect=None)
        self.assertIn(res.rc, (2, 3))
        self.assertIn("255", res.doc["error"]["message"])
        self.assertFalse(os.path.exists(os.path.join(d, "out", "cudnn")))

    def test_path_over_the_platform_limit_is_refused(self):
        fx, d, arch, m = self.named(245)
        # -o itself legal (folders of 200 bytes, 3900 in all), the
        # archive's path in it over 4095 bytes.
        out = d
        while len(out) < 3900:
            out = os.path.join(out, "o" * 200)
        res = cddtest.run_json(["bundle", "--manifest", m, "-o", out,
                                "--archive", arch, "--cache-dir",
                                os.path.join(d, "cache")], expect=None)
        self.assertEqual(res.rc, 2, res.doc)
        self.assertIn("limit", res.doc["error"]["message"])

if __name__ == "__main__":
    cddtest.main()
