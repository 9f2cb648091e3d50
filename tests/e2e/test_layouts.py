"""The layout generations (docs/archives.md, Generations): every real shape
of a cuDNN archive, generated here as a look-alike, goes through `manifest
create` -> `install --manifest` -> `status` -> `verify` -> `uninstall` with the
tree's state asserted at each step:

- cuDNN 9 Windows zips with the DLLs in bin/ (up to 9.22) and in bin/x64/
  (9.23 on), into a CUDA 12 tree (cudart in bin) and a CUDA 13 tree (cudart
  in bin/x64): the DLLs go where the tree's own cudart lives;
- a Linux 9.x tar.xz (soname links, _v9.h twins, static libraries, the newer
  sub-libraries engines_tensor_ir and ext);
- linux-sbsa with AArch64 ELF stand-ins into a targets/sbsa-linux tree, and
  windows-arm64 with ARM64 PE stand-ins: another machine than the host's,
  refused without --platform, installed with it, verify's load layer skipped
  saying why;
- libraries of the wrong machine, refused by manifest create and install.
"""

import json
import os
import shutil

import cddtest
from cddtest import CddTestCase, main, run, run_json
from fixtures import Fixture, elf_header, linux_entries, windows_entries
from layoutmodel import (AARCH64, ELF_AARCH64, HEADERS9, HEADERS9_LINUX,
                         LAYOUT_NAMES, LINUX, SBSA, SUBLIBS9, SUBLIBS9_NEW,
                         WINDOWS, WINDOWS_ARM64)
from snapshots import read_receipt, without_state
from test_sbom import validate


def fixture(case, name, platform, version, cuda_tag, cuda_major, **kw):
    """A look-alike archive of the given shape (its exact manifest too,
    which these tests do not use: they make theirs with manifest create)."""
    folder = case.scratch("fx-" + name)
    dll_dir = kw.pop("dll_dir", "bin")
    kw.setdefault("sublibs", SUBLIBS9)
    if platform in (LINUX, SBSA, AARCH64):
        top, entries = linux_entries(version, cuda_tag, platform=platform, **kw)
    else:
        top, entries = windows_entries(version, cuda_tag, platform=platform,
                                       dll_dir=dll_dir, **kw)
    return Fixture(folder, platform, version, cuda_major, top, entries,
                   kw["sublibs"], dll_dir=dll_dir)


def win9(case, name, dll_dir, cuda_major=12, platform=WINDOWS,
         version="9.23.0.25"):
    return fixture(case, name, platform, version, str(cuda_major), cuda_major,
                   sublibs=SUBLIBS9_NEW, headers=HEADERS9, dll_dir=dll_dir)


def cudart_to_x64(ws):
    """A CUDA 13 Windows toolkit keeps its DLLs in bin/x64."""
    b = os.path.join(ws.tree, "bin")
    os.makedirs(os.path.join(b, "x64"))
    for n in os.listdir(b):
        if n.lower().startswith("cudart64_"):
            os.rename(os.path.join(b, n), os.path.join(b, "x64", n))


def sbsa_tree(ws):
    """lib64 -> targets/sbsa-linux/lib, include likewise, as NVIDIA's
    AArch64 server toolkit lays itself out."""
    t = os.path.join(ws.tree, "targets", "sbsa-linux")
    os.makedirs(t)
    for d in ("lib64", "include"):
        dest = os.path.join(t, "lib" if d == "lib64" else d)
        shutil.move(os.path.join(ws.tree, d), dest)
        os.symlink(os.path.relpath(dest, ws.tree), os.path.join(ws.tree, d))


def checks(doc):
    return {c["name"]: c for c in doc.get("checks", [])}


class LayoutCase(CddTestCase):

    def create(self, fx, *extra, **kw):
        out = os.path.join(self.scratch("made-" + os.path.basename(fx.folder)),
                           "m.json")
        j = run_json(["manifest", "create", fx.path, "-o", out] + list(extra),
                     expect=kw.get("expect", 0))
        if j.rc:
            return j, None
        with open(out) as f:
            return j, (out, json.load(f))

    def assertInstalledThrough(self, ws, fx, before, links):
        """As assertInstalled, for a tree whose lib64 and include are links
        (links: {"lib64/": "targets/sbsa-linux/lib/", ...}): each file is
        expected where the link leads."""
        after = without_state(ws.snap())
        expected = without_state(before)
        for d, v in fx.expected("cuda").items():
            for a, b in links.items():
                if d.startswith(a):
                    d = b + d[len(a):]
            expected[d] = v
        for p in after:
            if p not in expected and after[p][0] == "dir":
                expected[p] = after[p]
        self.assertSameTree(expected, after, "after installing " + fx.filename)
        self.assertNoLeftovers(ws.tree, allow_backup=True)

    def cycle(self, ws, fx, target_kind, layout, *install_extra, **kw):
        """manifest create -> install -> status -> verify -> uninstall; the
        tree asserted after each. Returns the install and verify answers."""
        _, (mpath, doc) = self.create(fx, *kw.get("create_extra", ()))
        self.assertEqual(doc["platform"], fx.platform)
        before = ws.snap()
        j = self.install(ws, fx, *install_extra, manifest=mpath)
        self.assertTrue(j.doc["ok"])
        self.assertEqual(j.doc["layout"], layout)
        self.assertTrue(j.doc.get("layout_reason"), j.doc)
        if kw.get("links"):
            self.assertInstalledThrough(ws, fx, before, kw["links"])
        else:
            self.assertInstalled(ws, fx, before, target_kind)
            self.assertReceiptMatches(ws, fx, target_kind)
        self.assertEqual(read_receipt(ws.tree)["target"]["layout"], layout)
        st = run_json(["status"] + ws.target_args, expect=0)
        self.assertTrue(st.doc["ok"], st.doc)
        # Both SBOMs of this generation: valid against the official schemas
        # (tests/schemas) and the same bytes twice.
        for fmt in ("spdx", "cyclonedx"):
            one = run(["sbom"] + ws.target_args + ["--format", fmt], expect=0)
            two = run(["sbom"] + ws.target_args + ["--format", fmt], expect=0)
            self.assertEqual(one.out, two.out, fmt + ": other bytes")
            self.assertEqual(validate(json.loads(one.out), fmt), [],
                             "%s SBOM of the %s layout" % (fmt, layout))
        v = run_json(["verify", "--level", kw.get("level", "files")]
                     + ws.target_args, expect=kw.get("verify_rc", 0))
        for c in v.doc["checks"]:
            self.assertNotIn("is missing", c.get("detail", ""), c)
        u = run_json(["uninstall"] + ws.target_args, expect=0)
        self.assertTrue(u.doc["changed"])
        self.assertSameTree(without_state(before), without_state(ws.snap()),
                            "after uninstall")
        self.assertOutsideUntouched(ws)
        return j, v


class WindowsGenerations(LayoutCase):
    """bin/ and bin/x64/ zips into CUDA 12 and CUDA 13 trees."""

    def test_bin_zip_into_cuda12(self):
        fx = win9(self, "bin", "bin", version="9.8.0.87")
        ws = self.workspace(platform=WINDOWS, version="12.8.0")
        j, _ = self.cycle(ws, fx, "cuda", "cuda-windows")
        self.assertIn("cudart64_*.dll is in bin", j.doc["layout_reason"])

    def test_x64_zip_into_cuda12(self):
        """9.23's bin/x64 DLLs go into a CUDA 12 tree's bin, beside its
        cudart64_12.dll."""
        fx = win9(self, "x64", "bin/x64")
        _, (_, doc) = self.create(fx)
        self.assertIn("bin/x64/cudnn64_9.dll",
                      [f["path"] for f in doc["files"]])
        self.assertEqual(doc["verify"]["library"], "bin/x64/cudnn64_9.dll")
        subs = [s["library"] for s in doc["verify"]["sublibraries"]]
        self.assertIn("bin/x64/cudnn_engines_tensor_ir64_9.dll", subs)
        self.assertIn("bin/x64/cudnn_ext64_9.dll", subs)
        ws = self.workspace(platform=WINDOWS, version="12.8.0")
        self.cycle(ws, fx, "cuda", "cuda-windows")

    def test_x64_zip_into_cuda13(self):
        fx = win9(self, "x64-13", "bin/x64", cuda_major=13)
        ws = self.workspace(platform=WINDOWS, version="13.0.1")
        cudart_to_x64(ws)
        j, v = self.cycle(ws, fx, "cuda-x64", "cuda-windows-x64",
                          level="load", verify_rc=None)
        self.assertIn("bin\\x64", j.doc["layout_reason"])
        # verify followed the receipt's layout: the libraries were found
        # in bin/x64 (no "is missing" above), and the load layer says why
        # it did not load Windows DLLs here.
        self.assertEqual(checks(v.doc)["load.open"]["status"], "skip")

    def test_bin_zip_into_cuda13(self):
        fx = win9(self, "bin-13", "bin", cuda_major=13, version="9.14.0.64")
        ws = self.workspace(platform=WINDOWS, version="13.0.1")
        cudart_to_x64(ws)
        self.cycle(ws, fx, "cuda-x64", "cuda-windows-x64")

    def test_no_cudart_takes_the_default(self):
        """A tree with no cudart64_*.dll: CUDA 13's default (bin/x64), and
        the report says that it was the default."""
        fx = win9(self, "x64-none", "bin/x64", cuda_major=13)
        ws = self.workspace(platform=WINDOWS, version="13.0.1")
        for n in os.listdir(os.path.join(ws.tree, "bin")):
            if n.startswith("cudart64_"):
                os.remove(os.path.join(ws.tree, "bin", n))
        j, _ = self.cycle(ws, fx, "cuda-x64", "cuda-windows-x64")
        self.assertIn("default", j.doc["layout_reason"])

    def test_prefix_takes_library_bin(self):
        fx = win9(self, "x64-prefix", "bin/x64")
        ws = self.workspace(tree="prefix", platform=WINDOWS)
        self.cycle(ws, fx, "prefix", "prefix-windows")


class LinuxGenerations(LayoutCase):

    def test_linux9_tarball(self):
        fx = fixture(self, "linux9", LINUX, "9.23.0.25", "12", 12,
                     sublibs=SUBLIBS9_NEW, headers=HEADERS9_LINUX)
        _, (_, doc) = self.create(fx)
        paths = {f["path"]: f for f in doc["files"]}
        self.assertEqual(paths["lib/libcudnn.so.9"]["role"], "symlink")
        self.assertEqual(paths["include/cudnn_v9.h"]["role"], "header")
        self.assertEqual(paths["lib/libcudnn_ops_static.a"]["role"], "static_lib")
        self.assertEqual(doc["verify"]["version_number"], 92300)
        self.assertEqual(doc["verify"]["mismatch_status"], 1002)
        ws = self.workspace(version="12.8.0")
        self.cycle(ws, fx, "cuda", "cuda-linux")


class ForeignMachine(LayoutCase):
    """Trees for another machine than the host's: only with --platform."""

    def test_sbsa(self):
        fx = fixture(self, "sbsa", SBSA, "9.8.0.87", "12", 12,
                     headers=HEADERS9_LINUX)
        _, (mpath, doc) = self.create(fx)
        self.assertEqual(doc["platform"], SBSA)
        ws = self.workspace(version="12.8.0")
        sbsa_tree(ws)
        before = ws.snap()
        j = self.install(ws, fx, manifest=mpath, expect=3)
        self.assertError(j, 3, ("TARGET",))
        self.assertIn("--platform linux-sbsa", j.doc["error"]["message"])
        self.assertSameTree(before, ws.snap(), "after the refusal")
        # --platform naming another platform is refused too.
        j = self.install(ws, fx, "--platform", AARCH64, manifest=mpath,
                         expect=3)
        self.assertIn("the archive is for linux-sbsa", j.doc["error"]["message"])
        self.assertSameTree(before, ws.snap(), "after the refusal")
        _, v = self.cycle(ws, fx, "cuda", "cuda-linux", "--platform", SBSA,
                          level="load", verify_rc=None,
                          links={"lib64/": "targets/sbsa-linux/lib/",
                                 "include/": "targets/sbsa-linux/include/"})
        skip = checks(v.doc)["load.open"]
        self.assertEqual(skip["status"], "skip")
        self.assertIn("AArch64", skip["detail"])
        self.assertIn("x86-64", skip["detail"])

    def test_windows_arm64(self):
        fx = win9(self, "arm64", "bin/x64", cuda_major=13,
                  platform=WINDOWS_ARM64, version="9.27.0.42")
        _, (mpath, doc) = self.create(fx)
        self.assertEqual(doc["platform"], WINDOWS_ARM64)
        ws = self.workspace(platform=WINDOWS, version="13.0.1")
        cudart_to_x64(ws)
        before = ws.snap()
        j = self.install(ws, fx, manifest=mpath, expect=3)
        self.assertIn("--platform windows-arm64", j.doc["error"]["message"])
        self.assertSameTree(before, ws.snap())
        self.cycle(ws, fx, "cuda-x64", "cuda-windows-x64", "--platform",
                   WINDOWS_ARM64)

    def test_aarch64_without_a_name_asks_for_the_platform(self):
        fx = fixture(self, "noname", AARCH64, "9.8.0.87", "12", 12,
                     headers=HEADERS9_LINUX)
        plain = os.path.join(self.scratch("plain"), "cudnn-9.8.0.87_cuda12.tar.xz")
        shutil.copy(fx.path, plain)
        out = os.path.join(self.scratch("o"), "m.json")
        j = run_json(["manifest", "create", plain, "-o", out], expect=2)
        self.assertIn("--platform linux-sbsa", j.doc["error"]["message"])
        self.assertFalse(os.path.exists(out))
        run_json(["manifest", "create", plain, "-o", out, "--platform",
                  AARCH64], expect=0)
        with open(out) as f:
            self.assertEqual(json.load(f)["platform"], AARCH64)
        # The name and --platform disagreeing with the machine: refused.
        j = run_json(["manifest", "create", plain, "-o", out + "2",
                      "--platform", LINUX], expect=3)
        self.assertIn("--platform says linux-x86_64", j.doc["error"]["message"])
        self.assertIn("aarch64", j.doc["error"]["message"])

    def test_unknown_platform_is_a_usage_error(self):
        j = run_json(["manifest", "create", "x.tar.xz", "-o", "x.json",
                      "--platform", "linux-ppc"], expect=2)
        for name in ("linux-sbsa", "linux-aarch64", "windows-arm64"):
            self.assertIn(name, j.doc["error"]["message"])


class WrongMachine(LayoutCase):
    """A library of another machine than the archive's platform."""

    def test_arm64_dll_in_x64_zip_refused_by_create(self):
        fx = win9(self, "mixed", "bin")
        # One DLL of the x64 zip replaced by an ARM64 build.
        from fixtures import pe_header
        entries = [e.copy(data=pe_header(0xAA64) + e.data[0x58:])
                   if e.name.endswith("/bin/cudnn_ops64_9.dll") else e
                   for e in fx.entries]
        bad = Fixture(self.scratch("mixed2"), WINDOWS, fx.version, 12, fx.top,
                      entries, SUBLIBS9_NEW)
        out = os.path.join(self.scratch("o"), "m.json")
        j = run_json(["manifest", "create", bad.path, "-o", out], expect=3)
        self.assertIn("different machines", j.doc["error"]["message"])
        self.assertFalse(os.path.exists(out))

    def test_aarch64_so_in_x86_64_tarball_refused_by_install(self):
        """The manifest (exact, hand-written as fixtures.py writes them)
        claims linux-x86_64; install reads the staged library's ELF header
        and refuses before anything reaches the tree."""
        base = fixture(self, "base", LINUX, "9.8.0.87", "12", 12,
                       headers=HEADERS9_LINUX)
        entries = [e.copy(data=elf_header(ELF_AARCH64) + e.data[64:])
                   if e.name.endswith("/lib/libcudnn_ops.so.9.8.0") else e
                   for e in base.entries]
        bad = Fixture(self.scratch("bad"), LINUX, base.version, 12, base.top,
                      entries, SUBLIBS9)
        ws = self.workspace(version="12.8.0")
        before = ws.snap()
        j = self.install(ws, bad, expect=3)
        self.assertError(j, 3, ("ARCHIVE",))
        self.assertIn("libcudnn_ops.so.9.8.0", j.doc["error"]["message"])
        self.assertIn("x86-64", j.doc["error"]["message"])
        self.assertSameTree(without_state(before), without_state(ws.snap()))
        self.assertNoLeftovers(ws.tree)


if __name__ == "__main__":
    main()
