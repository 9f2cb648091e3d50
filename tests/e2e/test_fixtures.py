"""Self-test of the end-to-end fixtures (no binary needed): the generated
archives open with Python's own readers and look like NVIDIA's, the
manifests' hashes match the bytes, the hostile cases really contain what
their names say, and the snapshot/leftover helpers see what they must.

If these fail, the other e2e tests' verdicts mean nothing."""

import io
import json
import os
import stat
import subprocess
import sys
import tarfile
import unittest
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import hostile_cases  # noqa: E402
from cddtest import FIX, LINUX, WINDOWS  # noqa: E402

MANIFEST_KEYS = {"schema_version", "product", "version", "cuda_major",
                 "platform", "archive", "files_exact", "files", "verify"}
ARCHIVE_KEYS = {"filename", "url", "sha256", "size", "strip_components"}
FILE_KEYS = {"path", "role", "sha256", "size"}
LINK_KEYS = {"path", "role", "target"}
VERIFY_KEYS = {"version_number", "library", "version_symbol", "cudart_symbol",
               "mismatch_status", "sublibraries"}


def tar_members(path_or_bytes):
    if isinstance(path_or_bytes, bytes):
        tf = tarfile.open(fileobj=io.BytesIO(path_or_bytes), mode="r:xz",
                          encoding="utf-8", errors="surrogateescape")
    else:
        tf = tarfile.open(path_or_bytes, "r:xz", encoding="utf-8",
                          errors="surrogateescape")
    with tf:
        out = []
        for m in tf.getmembers():
            data = tf.extractfile(m).read() if m.isfile() else None
            out.append((m, data))
        return out


class ManifestChecks(object):
    def check_manifest(self, fx):
        m = fx.manifest
        self.assertEqual(set(m), MANIFEST_KEYS)
        self.assertEqual(set(m["archive"]), ARCHIVE_KEYS)
        self.assertEqual(set(m["verify"]), VERIFY_KEYS)
        self.assertEqual(m["schema_version"], 1)
        self.assertEqual(m["archive"]["filename"], os.path.basename(fx.path))
        self.assertEqual(m["archive"]["sha256"], cddtest.sha256_file(fx.path))
        self.assertEqual(m["archive"]["size"], os.path.getsize(fx.path))
        self.assertEqual(m["archive"]["strip_components"], 1)
        self.assertIs(m["files_exact"], True)
        self.assertTrue(m["archive"]["url"][0].startswith("https://"))
        self.assertTrue(m["archive"]["url"][0].endswith(fx.filename))
        paths = [f["path"] for f in m["files"]]
        self.assertEqual(len(paths), len(set(paths)))
        self.assertEqual(set(paths), set(fx.files))
        for f in m["files"]:
            self.assertIn(f["role"], cddtest.ROLES)
            if f["role"] == "symlink":
                self.assertEqual(set(f), LINK_KEYS)
                self.assertNotIn("/", f["target"])
            else:
                self.assertEqual(set(f), FILE_KEYS)
                self.assertRegex(f["sha256"], r"^[0-9a-f]{64}$")
        # What is on disk is what the dict says.
        with open(fx.manifest_path) as fh:
            self.assertEqual(json.load(fh), m)
        # verify section names files of the archive.
        self.assertIn(m["verify"]["library"], fx.files)
        for s in m["verify"]["sublibraries"]:
            self.assertIn(s["library"], fx.files)
            self.assertTrue(s["check_symbol"].startswith("cudnn"))


class LinuxArchiveTest(ManifestChecks, unittest.TestCase):

    def test_layout_like_nvidia(self):
        fx = FIX.linux
        self.assertEqual(fx.filename, "cudnn-linux-x86_64-8.5.0.96_cuda11-archive.tar.xz")
        top = "cudnn-linux-x86_64-8.5.0.96_cuda11-archive"
        members = tar_members(fx.path)
        names = {m.name: m for m, _ in members}
        self.assertTrue(names[top].isdir())
        self.assertTrue(names[top + "/include"].isdir())
        self.assertTrue(names[top + "/lib"].isdir())
        headers = sorted(n for n in names if n.startswith(top + "/include/"))
        self.assertEqual(len(headers), 9)
        for lib in ["libcudnn"] + ["libcudnn_" + s for s in cddtest.SUBLIBS]:
            real = names[top + "/lib/%s.so.8.5.0" % lib]
            self.assertTrue(real.isfile())
            self.assertEqual(stat.S_IMODE(real.mode), 0o755)
            l8 = names[top + "/lib/%s.so.8" % lib]
            self.assertTrue(l8.issym())
            self.assertEqual(l8.linkname, lib + ".so.8.5.0")
            l0 = names[top + "/lib/%s.so" % lib]
            self.assertTrue(l0.issym())
            self.assertEqual(l0.linkname, lib + ".so.8")
        statics = [n for n in names if n.endswith("_static.a")]
        self.assertEqual(len(statics), 6)
        self.assertTrue(names[top + "/LICENSE"].isfile())
        files = [m for m, _ in members if not m.isdir()]
        self.assertEqual(len(files), 9 + 7 * 3 + 6 + 1)
        self.assertEqual(len(fx.files), 37)

    def test_version_header(self):
        data = FIX.linux.entry("include/cudnn_version.h").data.decode()
        self.assertIn("#define CUDNN_MAJOR 8\n", data)
        self.assertIn("#define CUDNN_MINOR 5\n", data)
        self.assertIn("#define CUDNN_PATCHLEVEL 0\n", data)
        old = FIX.linux_old.entry("include/cudnn_version.h").data.decode()
        self.assertIn("#define CUDNN_MINOR 4\n", old)
        self.assertIn("#define CUDNN_PATCHLEVEL 1\n", old)

    def test_manifest_matches_bytes(self):
        for fx in (FIX.linux, FIX.linux_old, FIX.linux_mini, FIX.linux_mini_old,
                   FIX.linux_modes):
            with self.subTest(fixture=fx.folder):
                self.check_manifest(fx)
                by_path = {f["path"]: f for f in fx.manifest["files"]}
                for m, data in tar_members(fx.path):
                    rel = cddtest.strip_top(m.name, fx.top)
                    if not rel or m.isdir():
                        continue
                    f = by_path[rel]
                    if m.issym():
                        self.assertEqual(f["target"], m.linkname)
                    else:
                        self.assertEqual(f["sha256"], cddtest.sha256_bytes(data))
                        self.assertEqual(f["size"], len(data))
                self.assertEqual(fx.manifest["verify"]["version_number"],
                                 8500 if fx.version == "8.5.0.96" else 8401)

    def test_symlink_chains_end_at_files(self):
        for fx in (FIX.linux, FIX.linux_old, FIX.linux_mini):
            for rel, e in fx.files.items():
                hops = 0
                while e.kind == cddtest.SYMLINK:
                    rel = rel.rsplit("/", 1)[0] + "/" + e.target
                    e = fx.files[rel]
                    hops += 1
                    self.assertLess(hops, 5)
                self.assertEqual(e.kind, cddtest.FILE)

    def test_deterministic(self):
        top, e1 = cddtest.linux_entries()
        _, e2 = cddtest.linux_entries()
        self.assertEqual(cddtest.tar_xz_bytes(e1), cddtest.tar_xz_bytes(e2))
        with open(FIX.linux.path, "rb") as f:
            self.assertEqual(f.read(), cddtest.tar_xz_bytes(e1))

    def test_old_differs(self):
        new, old = FIX.linux, FIX.linux_old
        self.assertIn("include/cudnn_backend.h", new.files)
        self.assertNotIn("include/cudnn_backend.h", old.files)
        self.assertIn("lib/libcudnn.so.8.4.1", old.files)
        self.assertEqual(old.manifest["version"], "8.4.1.50")
        for rel in set(new.files) & set(old.files):
            if new.files[rel].kind == cddtest.FILE and rel != "LICENSE":
                self.assertNotEqual(new.files[rel].data, old.files[rel].data, rel)
        # Upgrading replaces the links, removes the 8.4.1 files, adds one header.
        removed = set(old.expected()) - set(new.expected())
        self.assertIn("lib64/libcudnn.so.8.4.1", removed)
        self.assertEqual(len(removed), 7)

    def test_odd_modes_fixture(self):
        modes = {stat.S_IMODE(m.mode) for m, _ in tar_members(FIX.linux_modes.path)
                 if m.isfile()}
        self.assertIn(0o4777, modes)
        self.assertIn(0o600, modes)
        # same payload as the normal archive
        for rel, e in FIX.linux.files.items():
            self.assertEqual(FIX.linux_modes.files[rel].data, e.data)

    def test_big(self):
        fx = FIX.linux_big
        so = fx.entry("lib/libcudnn.so.8.5.0").data
        self.assertGreaterEqual(len(so), 3 << 20)
        self.assertGreater(os.path.getsize(fx.path), 0)
        self.check_manifest(fx)
        # every block differs (no two identical 64 KiB blocks)
        blocks = {so[i:i + 65536] for i in range(8, len(so) - 65536, 65536)}
        self.assertGreater(len(blocks), 40)


class WindowsArchiveTest(ManifestChecks, unittest.TestCase):

    def test_layout_like_nvidia(self):
        fx = FIX.windows
        self.assertEqual(fx.filename, "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip")
        top = "cudnn-windows-x86_64-8.5.0.96_cuda11-archive/"
        with zipfile.ZipFile(fx.path) as zf:
            self.assertIsNone(zf.testzip())
            names = zf.namelist()
            files = [n for n in names if not n.endswith("/")]
            self.assertEqual(len(files), 31)
            self.assertIn(top, names)
            self.assertIn(top + "lib/x64/", names)
            bins = sorted(n[len(top) + 4:] for n in files if n.startswith(top + "bin/"))
            self.assertEqual(bins, sorted(
                ["cudnn64_8.dll"] + ["cudnn_%s64_8.dll" % s for s in cddtest.SUBLIBS]))
            libs = [n for n in files if n.startswith(top + "lib/x64/")]
            self.assertEqual(len(libs), 14)
            self.assertIn(top + "lib/x64/cudnn.lib", libs)
            self.assertIn(top + "lib/x64/cudnn_adv_train64_8.lib", libs)
            self.assertEqual(len([n for n in files if n.startswith(top + "include/")]), 9)
            self.assertIn(top + "LICENSE", files)
            for zi in zf.infolist():
                if not zi.is_dir():
                    self.assertEqual(zi.compress_type, zipfile.ZIP_DEFLATED)

    def test_manifest_matches_bytes(self):
        for fx in (FIX.windows, FIX.windows_old):
            with self.subTest(fixture=fx.folder):
                self.check_manifest(fx)
                by_path = {f["path"]: f for f in fx.manifest["files"]}
                with zipfile.ZipFile(fx.path) as zf:
                    for zi in zf.infolist():
                        rel = cddtest.strip_top(zi.filename.rstrip("/"), fx.top)
                        if not rel or zi.is_dir():
                            continue
                        data = zf.read(zi)
                        self.assertEqual(by_path[rel]["sha256"], cddtest.sha256_bytes(data))
                roles = {f["role"] for f in fx.manifest["files"]}
                self.assertEqual(roles, {"runtime", "header", "import_lib", "license"})

    def test_layouts(self):
        fx = FIX.windows
        cuda = fx.expected("cuda")
        self.assertIn("bin/cudnn64_8.dll", cuda)
        self.assertEqual(cuda["bin/cudnn64_8.dll"][2], 0o755)
        self.assertIn("lib/x64/cudnn.lib", cuda)
        self.assertEqual(cuda["lib/x64/cudnn.lib"][2], 0o644)
        self.assertIn("doc/cudnn/LICENSE", cuda)
        pre = fx.expected("prefix")
        self.assertIn("Library/bin/cudnn64_8.dll", pre)
        self.assertIn("Library/lib/cudnn.lib", pre)
        self.assertIn("Library/include/cudnn.h", pre)
        self.assertIn("Library/share/doc/cudnn/LICENSE", pre)
        lin = FIX.linux.expected("cuda")
        self.assertEqual(lin["lib64/libcudnn.so"], ("link", "libcudnn.so.8", None))
        self.assertIn("lib64/libcudnn_adv_train_static.a", lin)
        self.assertIn("share/doc/cudnn/LICENSE", lin)
        self.assertIn("lib/libcudnn.so.8", FIX.linux.expected("prefix"))
        self.assertEqual(len(lin), 37)


class HostileCasesTest(unittest.TestCase):
    """The hostile archives contain exactly what their names say."""

    def setUp(self):
        self.folder = os.path.join(cddtest.WORK_ROOT, "hostile-selftest")
        self.outside = os.path.join(self.folder, "outside")

    def test_enough_cases(self):
        self.assertGreaterEqual(len(hostile_cases.CASES), 30)
        self.assertGreaterEqual(sum(1 for c in hostile_cases.CASES if c.create), 25)

    def test_each_case_builds_and_differs(self):
        good = {}
        for case in hostile_cases.CASES:
            if case.bomb:
                continue  # built by test_bombs
            with self.subTest(case=case.name):
                fx = case.fixture()
                if fx.path not in good:
                    with open(fx.path, "rb") as f:
                        good[fx.path] = f.read()
                ctx = hostile_cases.Ctx(fx, self.outside)
                data = case.archive_bytes(ctx)
                self.assertNotEqual(data, good[fx.path])
                if case.raw is not None:
                    continue
                # The names in the archive are exactly the ones intended:
                # the writers normalised nothing away.
                want = [e.name.rstrip("/") if e.kind == cddtest.DIR else e.name
                        for e in case.entries(ctx)]
                if fx.platform == LINUX:
                    got = [m.name for m, _ in tar_members(data)]
                else:
                    with zipfile.ZipFile(io.BytesIO(data)) as zf:
                        got = [n.rstrip("/") if n.endswith("/") else n
                               for n in zf.namelist()]
                    want = [w.rstrip("/") for w in want]
                self.assertEqual(got, want)

    def test_raw_names_survive(self):
        ctx = hostile_cases.Ctx(FIX.linux, self.outside)
        c = hostile_cases.BY_NAME["absolute_path"]
        names = [m.name for m, _ in tar_members(c.archive_bytes(ctx))]
        self.assertIn(self.outside + "/evil.h", names)
        c = hostile_cases.BY_NAME["invalid_utf8"]
        raw = cddtest.tar_bytes(c.entries(ctx))
        self.assertIn(b"include/cudnn\xff\xfe.h", raw)
        c = hostile_cases.BY_NAME["control_char_escape"]
        self.assertIn(b"cudnn\x1b[2J.h", cddtest.tar_bytes(c.entries(ctx)))
        c = hostile_cases.BY_NAME["long_name"]
        self.assertIn(max(len(m.name) for m, _ in tar_members(c.archive_bytes(ctx))),
                      range(5000, 5200))
        wctx = hostile_cases.Ctx(FIX.windows, self.outside)
        c = hostile_cases.BY_NAME["unc_path"]
        with zipfile.ZipFile(io.BytesIO(c.archive_bytes(wctx))) as zf:
            self.assertIn("\\\\server\\share\\evil.dll", zf.namelist())

    def test_link_and_special_members(self):
        ctx = hostile_cases.Ctx(FIX.linux, self.outside)
        members = {m.name: m for m, _ in tar_members(
            hostile_cases.BY_NAME["hardlink_outside"].archive_bytes(ctx))}
        self.assertTrue(members[ctx.n("lib/libcudnn_evil.so")].islnk())
        members = {m.name: m for m, _ in tar_members(
            hostile_cases.BY_NAME["fifo"].archive_bytes(ctx))}
        self.assertTrue(members[ctx.n("include/cudnn_backend.h")].isfifo())
        members = {m.name: m for m, _ in tar_members(
            hostile_cases.BY_NAME["char_device"].archive_bytes(ctx))}
        self.assertTrue(members[ctx.n("lib/libcudnn_cnn_train_static.a")].ischr())
        members = [(m.name, m) for m, _ in tar_members(
            hostile_cases.BY_NAME["symlink_then_write_through"].archive_bytes(ctx))]
        self.assertEqual(members[-2][1].linkname, self.outside)
        self.assertEqual(members[-1][0], ctx.n("lib/x/evil.so"))
        wctx = hostile_cases.Ctx(FIX.windows, self.outside)
        with zipfile.ZipFile(io.BytesIO(
                hostile_cases.BY_NAME["zip_symlink"].archive_bytes(wctx))) as zf:
            zi = zf.getinfo(wctx.n("bin/zlibwapi.dll"))
            self.assertTrue(stat.S_ISLNK(zi.external_attr >> 16))

    def test_corruptions(self):
        wctx = hostile_cases.Ctx(FIX.windows, self.outside)
        for name in ("zip_bad_crc", "zip_corrupt_data"):
            data = hostile_cases.BY_NAME[name].archive_bytes(wctx)
            with zipfile.ZipFile(io.BytesIO(data)) as zf:
                self.assertIsNotNone(zf.testzip(), name)
        data = hostile_cases.BY_NAME["zip_cut_central_directory"].archive_bytes(wctx)
        with self.assertRaises(zipfile.BadZipFile):
            zipfile.ZipFile(io.BytesIO(data))
        ctx = hostile_cases.Ctx(FIX.linux, self.outside)
        for name in ("truncated_xz", "xz_flipped_byte"):
            data = hostile_cases.BY_NAME[name].archive_bytes(ctx)
            with self.assertRaises(Exception, msg=name):
                tar_members(data)
        data = hostile_cases.BY_NAME["pin_mismatch_trailing_byte"].archive_bytes(ctx)
        self.assertEqual(len(tar_members(data)), len(FIX.linux.entries))

    def test_bombs(self):
        ctx = hostile_cases.Ctx(FIX.linux, self.outside)
        data = hostile_cases.BY_NAME["bomb"].archive_bytes(ctx)
        self.assertLess(len(data), 1 << 20)
        sizes = {m.name: m.size for m, _ in tar_members(data)}
        self.assertEqual(sizes[ctx.n("include/cudnn_backend.h")], 50 << 20)
        declared = {f["path"]: f for f in FIX.linux.manifest["files"]}
        self.assertLess(declared["include/cudnn_backend.h"]["size"], 8192)


class TreesAndSnapshotsTest(unittest.TestCase):

    def setUp(self):
        self.dir = os.path.join(cddtest.WORK_ROOT, "trees", self._testMethodName)
        if os.path.lexists(self.dir):
            import shutil
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)

    def test_cuda_trees(self):
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "json"))
        with open(os.path.join(t, "version.json")) as f:
            self.assertEqual(json.load(f)["cuda"]["version"], "11.6.2")
        with open(os.path.join(t, "include/cuda.h")) as f:
            self.assertIn("#define CUDA_VERSION 11060\n", f.read())
        self.assertEqual(os.readlink(os.path.join(t, "lib64/libcudart.so")),
                         "libcudart.so.11.0")
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "txt"), source="txt")
        with open(os.path.join(t, "version.txt")) as f:
            self.assertEqual(f.read(), "CUDA Version 11.6.124\n")
        self.assertFalse(os.path.exists(os.path.join(t, "version.json")))
        self.assertFalse(os.path.exists(os.path.join(t, "include/cuda.h")))
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "hdr"), source="header")
        self.assertEqual(sorted(os.listdir(t)), ["bin", "include", "lib64"])
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "none"), source="none")
        for root, _, files in os.walk(t):
            for n in files:
                with open(os.path.join(root, n), "rb") as f:
                    self.assertNotIn(b"CUDA_VERSION", f.read())
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "12"), version="12.1.1")
        with open(os.path.join(t, "include/cuda.h")) as f:
            self.assertIn("#define CUDA_VERSION 12010\n", f.read())
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "win"), platform=WINDOWS)
        self.assertTrue(os.path.isfile(os.path.join(t, "bin/cudart64_110.dll")))
        self.assertTrue(os.path.isdir(os.path.join(t, "lib/x64")))
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "links"), targets_links=True)
        self.assertTrue(os.path.islink(os.path.join(t, "lib64")))
        self.assertTrue(os.path.isfile(os.path.join(t, "targets/x86_64-linux/lib/libcudart.so.11.0")))

    def test_snapshot_sees_everything(self):
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "t"))
        s0 = cddtest.snapshot(t)
        self.assertEqual(s0["lib64/libcudart.so"], ("link", "libcudart.so.11.0", None))
        self.assertEqual(s0["bin/nvcc"][0], "file")
        self.assertEqual(s0["bin/nvcc"][2], 0o755)
        self.assertEqual(s0["include"][0], "dir")
        self.assertEqual(cddtest.snapshot(t), s0)
        # same size, one byte different
        p = os.path.join(t, "include/cuda.h")
        with open(p, "r+b") as f:
            b = f.read(1)
            f.seek(0)
            f.write(bytes([b[0] ^ 1]))
        self.assertEqual(cddtest.diff_snapshots(s0, cddtest.snapshot(t))[0].split()[0], "changed:")
        s1 = cddtest.snapshot(t)
        os.chmod(p, 0o600)
        self.assertNotEqual(cddtest.snapshot(t), s1)
        self.assertIsNone(cddtest.snapshot(os.path.join(self.dir, "nope")))

    def test_state_ignores_and_leftovers(self):
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "t"))
        s0 = cddtest.snapshot(t)
        os.makedirs(os.path.join(t, ".cudnn-deploy/backup"))
        open(os.path.join(t, ".cudnn-deploy/lock"), "w").close()
        self.assertEqual(cddtest.snapshot(t, cddtest.IGNORE_LOCK), s0)
        self.assertNotEqual(cddtest.snapshot(t), s0)
        self.assertEqual(cddtest.leftovers(t), [])
        open(os.path.join(t, ".cudnn-deploy/log.jsonl"), "w").close()
        self.assertNotEqual(cddtest.snapshot(t, cddtest.IGNORE_LOCK), s0)
        self.assertEqual(cddtest.snapshot(t, cddtest.IGNORE_LOCK_LOG), s0)
        os.makedirs(os.path.join(t, ".cudnn-deploy/stage-123"))
        open(os.path.join(t, ".cudnn-deploy/journal"), "w").close()
        os.makedirs(os.path.join(t, ".cudnn-deploy/backup/txn1/include"))
        open(os.path.join(t, ".cudnn-deploy/backup/txn1/include/cudnn.h"), "w").close()
        bad = cddtest.leftovers(t)
        self.assertEqual(len(bad), 3, bad)
        self.assertEqual(len(cddtest.leftovers(t, allow_backup=True)), 2)
        n = cddtest.normalize(cddtest.snapshot(t))
        self.assertIn(".cudnn-deploy/backup/<txn>/include/cudnn.h", n)

    def test_lock_holder_blocks_other_processes(self):
        t = cddtest.make_cuda_tree(os.path.join(self.dir, "t"))
        probe = ("import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_RDWR)\n"
                 "try:\n fcntl.lockf(fd,fcntl.LOCK_EX|fcntl.LOCK_NB)\nexcept OSError:\n"
                 " sys.exit(7)\n")
        lock = os.path.join(t, cddtest.LOCK)
        with cddtest.LockHolder(t) as holder:
            rc = subprocess.call([sys.executable, "-c", probe, lock])
            self.assertEqual(rc, 7)
            # Reading the file here (as a snapshot does) must not free it.
            cddtest.snapshot(t)
            self.assertEqual(subprocess.call([sys.executable, "-c", probe, lock]), 7)
            with open(lock) as f:
                self.assertEqual(f.read().strip(), str(holder.pid))
        self.assertEqual(subprocess.call([sys.executable, "-c", probe, lock]), 0)

    def test_envelope_checker(self):
        good = {"command": "install", "ok": True, "changed": True, "exit_code": 0,
                "target": "/x", "checks": [{"name": "a", "status": "pass", "detail": ""}]}
        self.assertEqual(cddtest.check_envelope(good, 0), [])
        self.assertTrue(cddtest.check_envelope(good, 3))
        bad = dict(good, ok=False, exit_code=3)
        self.assertTrue(cddtest.check_envelope(bad, 3))  # no error object
        bad["error"] = {"code": "UNSAFE", "message": "entry x: unsafe"}
        self.assertEqual(cddtest.check_envelope(bad, 3), [])
        del bad["checks"]
        self.assertTrue(cddtest.check_envelope(bad, 3))
        with self.assertRaises(AssertionError):
            cddtest.parse_one_object('{"a": 1}\n{"b": 2}\n')
        with self.assertRaises(AssertionError):
            cddtest.parse_one_object('progress 50%\n{"a": 1}')
        with self.assertRaises(AssertionError):
            cddtest.parse_one_object('[1]')


if __name__ == "__main__":
    cddtest.main()
