"""The Windows build on a Windows-style CUDA tree: a generated Windows cuDNN
zip installed into `...\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.6` under a
folder whose path has spaces and non-ASCII names, found the ways a Windows
user's tree is found (CUDA_PATH_V11_6, --cuda-root, and under Wine the
default root under %ProgramFiles%), then re-installed (nothing changes), checked,
uninstalled (the tree is as before); a DLL held open by another program
makes the install fail as "in use", naming the file, with the tree
untouched.

Runs only against the Windows executable (CDD_WINDOWS=1): under Wine in CI
(CDD_BIN is then tests/wine/cdd-wine.sh, and paths are given as Z:\\...), or
natively on Windows. Skipped otherwise.
"""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import FIX, WINDOWS, CddTestCase, run, run_json  # noqa: E402

ON_WINDOWS_BUILD = os.environ.get("CDD_WINDOWS") == "1"
UNDER_WINE = ON_WINDOWS_BUILD and os.name != "nt"

# A user's folder with spaces and non-ASCII letters, as on a German or
# Japanese Windows, above the installer's own spaced names.
ODD_PARENT = os.path.join("Program Files (sim)", "Zoë Ünïcødé 日本 ✓")
TOOLKIT = os.path.join("NVIDIA GPU Computing Toolkit", "CUDA", "v11.6")


def win(path):
    """The path as a Windows program is given it: Z:\\... under Wine (Wine
    maps Z: to /), unchanged on Windows."""
    path = os.path.abspath(path)
    if UNDER_WINE:
        return "Z:" + path.replace("/", "\\")
    return path


def tree_state(root, ignore=cddtest.IGNORE_LOCK_LOG):
    """{relative path: (kind, sha256)}: modes left out (Windows has none to
    compare; Wine maps them from attributes). The lock, the log, the
    identity records (a cache any run may renew: a re-install renews the
    records that were too fresh to trust last time, which on a slow first
    run in a new Wine prefix is all of them) and the verify record are not
    part of what the tree holds."""
    snap = cddtest.snapshot(root, ignore)
    return {p: v[:2] for p, v in snap.items()} if snap is not None else None


def dest_files(fx):
    """{destination path: sha256} the Windows CUDA layout must produce."""
    return {d: v[1] for d, v in fx.expected("cuda").items()}


@unittest.skipUnless(ON_WINDOWS_BUILD,
                     "Windows build only (CDD_WINDOWS=1: make test-windows)")
class WindowsLayoutCase(CddTestCase):

    def setUp(self):
        self.base = self.scratch("base")
        self.parent = os.path.join(self.base, ODD_PARENT)
        self.root = os.path.join(self.parent, TOOLKIT)
        os.makedirs(os.path.dirname(self.root))
        cddtest.make_cuda_tree(self.root, platform=WINDOWS)
        self.before = tree_state(self.root)


    def assertInstalled(self, fx):
        for rel, sha in dest_files(fx).items():
            p = os.path.join(self.root, rel)
            self.assertTrue(os.path.isfile(p), "missing " + rel)
            self.assertEqual(cddtest.sha256_file(p), sha, rel)
        names = lambda d: sorted(os.listdir(os.path.join(self.root, d)))
        dlls = [n for n in names("bin") if n.startswith("cudnn")]
        self.assertEqual(len(dlls), 7, dlls)
        self.assertIn("cudnn64_8.dll", dlls)
        self.assertEqual(len([n for n in names("include")
                              if n.startswith("cudnn")]), 9)
        libs = names(os.path.join("lib", "x64"))
        self.assertEqual(len([n for n in libs if n.startswith("cudnn")]), 14)
        self.assertIn("cudart.lib", libs)  # the toolkit's own files stay

    def test_install_reinstall_status_uninstall(self):
        fx = FIX.windows
        args = ["install", "--cuda", "v11.6", "--manifest", win(fx.manifest_path),
                "--archive", win(fx.path), "--no-verify"]
        # 1. Found through CUDA_PATH_V11_6, which the CUDA installer sets.
        r = run_json(args, env={"CUDA_PATH_V11_6": win(self.root)}, expect=0)
        self.assertTrue(r.doc["changed"])
        self.assertEqual(r.doc.get("layout"), "cuda-windows", r.doc)
        target = r.doc["target"]
        # The non-ASCII names came through argv, the environment, the file
        # system and back out as UTF-8.
        self.assertTrue(target.replace("\\", "/").endswith(
            "Zoë Ünïcødé 日本 ✓/NVIDIA GPU Computing Toolkit/CUDA/v11.6"), target)
        if UNDER_WINE:
            self.assertTrue(target.startswith("Z:"), target)
        self.assertInstalled(fx)
        self.assertNoLeftovers(self.root)
        receipt = cddtest.read_receipt(self.root)
        self.assertEqual(sorted(f["path"] for f in receipt["files"]),
                         sorted(dest_files(fx)))
        after = tree_state(self.root)

        # 2. Again, by --cuda-root: every file identical, nothing changes.
        r = run_json(["install", "--cuda-root", win(self.root)] + args[3:],
                     expect=0)
        self.assertFalse(r.doc["changed"], r.doc)
        self.assertEqual(tree_state(self.root), after)

        # 3. status, by --cuda-root with forward slashes (also valid on
        # Windows), checks every hash.
        root_fwd = win(self.root).replace("\\", "/")
        r = run_json(["status", "--cuda-root", root_fwd, "--check"], expect=0)
        self.assertEqual(r.doc["target"].replace("\\", "/").rstrip("/"),
                         root_fwd.rstrip("/"))

        # 4. uninstall: exactly as before the install.
        r = run_json(["uninstall", "--cuda-root", win(self.root)], expect=0)
        self.assertTrue(r.doc["changed"])
        self.assertEqual(tree_state(self.root), self.before)

    @unittest.skipUnless(UNDER_WINE, "would write to the real Program Files")
    def test_default_root_under_program_files(self):
        """`--cuda v11.6` with no CUDA_PATH_V11_6: the tree is looked for
        where the CUDA installer puts it, %ProgramFiles%/NVIDIA GPU Computing
        Toolkit/CUDA/v11.6 (Wine takes %ProgramFiles% from its registry:
        C:/Program Files, in the test prefix)."""
        fx = FIX.windows
        root = os.path.join(os.environ["CDD_WINEPREFIX"], "drive_c",
                            "Program Files", TOOLKIT)
        if os.path.lexists(root):
            shutil.rmtree(root)
        cddtest.make_cuda_tree(root, platform=WINDOWS)
        before = tree_state(root)
        try:
            r = run_json(["install", "--cuda", "v11.6", "--manifest",
                          win(fx.manifest_path), "--archive", win(fx.path),
                          "--no-verify"], expect=0)
            self.assertEqual(
                r.doc["target"], "C:/Program Files/NVIDIA GPU Computing "
                "Toolkit/CUDA/v11.6")
            self.assertTrue(os.path.isfile(os.path.join(root, "bin",
                                                        "cudnn64_8.dll")))
            run_json(["uninstall", "--cuda", "v11.6"], expect=0)
            self.assertEqual(tree_state(root), before)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    def test_archive_in_unicode_folder(self):
        """The archive and manifest themselves under the odd folder: the
        archive reader opens non-ASCII names too."""
        fx = FIX.windows
        here = os.path.join(self.base, "Téléchargements ✓")
        os.makedirs(here)
        zip_path = os.path.join(here, os.path.basename(fx.path))
        man_path = os.path.join(here, "manifest ü.json")
        for src, dst in ((fx.path, zip_path), (fx.manifest_path, man_path)):
            with open(src, "rb") as a, open(dst, "wb") as b:
                b.write(a.read())
        r = run_json(["install", "--cuda-root", win(self.root), "--manifest",
                      win(man_path), "--archive", win(zip_path), "--no-verify"],
                     expect=0)
        self.assertTrue(r.doc["changed"])
        self.assertInstalled(fx)
        run_json(["uninstall", "--cuda-root", win(self.root)], expect=0)
        self.assertEqual(tree_state(self.root), self.before)

    def test_upgrade_over_dll_in_use_rolls_back(self):
        """A program (a Python session with cuDNN loaded, say) holds
        bin/cudnn64_8.dll open: the upgrade waits briefly, then fails as
        "in use" naming that file, and the tree is exactly as before."""
        holder_exe = os.environ.get("CDD_HOLDFILE_EXE")
        if not holder_exe:
            self.skipTest("CDD_HOLDFILE_EXE not set (built by the Windows suite)")
        old, new = FIX.windows_old, FIX.windows
        base = ["--cuda-root", win(self.root), "--no-verify"]
        run_json(["install", "--manifest", win(old.manifest_path), "--archive",
                  win(old.path)] + base, expect=0)
        installed = cddtest.comparable_state(self.root)
        dll = os.path.join(self.root, "bin", "cudnn64_8.dll")
        cmd = [holder_exe, win(dll)]
        if UNDER_WINE:
            cmd = [os.environ["CDD_WINE_RUN"]] + cmd
        holder = subprocess.Popen(cmd, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE)
        try:
            self.assertEqual(holder.stdout.readline().strip(), b"held")
            r = run_json(["install", "--manifest", win(new.manifest_path),
                          "--archive", win(new.path)] + base)
        finally:
            holder.stdin.close()
            holder.wait(timeout=60)
            holder.stdout.close()
        self.assertError(r, cddtest.EXIT_ENV, "BUSY")
        msg = r.doc["error"]["message"]
        self.assertIn("in use", msg)
        self.assertIn("cudnn64_8.dll", msg)
        self.assertEqual(cddtest.comparable_state(self.root), installed)
        self.assertNoLeftovers(self.root)
        # Released: the same upgrade goes through.
        r = run_json(["install", "--manifest", win(new.manifest_path),
                      "--archive", win(new.path)] + base, expect=0)
        self.assertTrue(r.doc["changed"])
        self.assertInstalled(new)


if __name__ == "__main__":
    cddtest.main()
