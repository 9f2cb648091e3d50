"""verify of the Windows build end to end, on fake cuDNN DLLs (tests/fakes/*.c
cross-compiled with mingw-w64 by fakecudnn_win.py, packed in NVIDIA's
Windows zip layout, manifests by the .exe's own `manifest create`) installed
into a `...\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.6` tree:

  all good       install verifies at its end: load.open / load.version /
                 load.check pass for cudnn64_8.dll and the six sub-libraries
  error 126      cudnn_ops_infer64_8.dll imports a zlibwapi.dll that is not
                 there: load.deps names it (with the zlib-for-Windows hint),
                 load.open gives the 126 translation and the cause
  shadowing      an older cudnn64_8.dll (8401) in a folder before the tree's
                 bin on PATH: load.search says the loader picks that copy
  delay load     cudnn_ops_infer64_8.dll delay-loads the absent zlibwapi.dll:
                 the real loader loads it (load.open passes), load.delay warns
  two builds     cudnn_ops_train64_8.dll's version resource says 8.4.1.50:
                 load.resource fails naming both DLLs and versions
  gpu            with a fake nvcuda.dll (fake_cuda.c cross-built) as the
                 driver: the gpu layer runs on Windows too -- driver,
                 device, the convolution against the CPU reference
  gpu hang       a convolution that never returns: the process running the
                 GPU checks (this program started afresh) is stopped at
                 --gpu-timeout; gpu.conv fails with the reason (exit 1)
  gpu crash      a convolution that dies of an access violation: gpu.conv
                 fails naming exception 0xC0000005, the checks before it
                 stand, the report is whole (exit 1)

Runs only against the Windows executable (CDD_WINDOWS=1), under Wine (PATH
is set through WINEPATH, which Wine puts in front of its PATH) or natively.
"""

import os
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fakecudnn_win  # noqa: E402
from cddtest import (EXIT_CHECK, EXIT_OK, WINDOWS, CddTestCase,  # noqa: E402
                     make_cuda_tree, run_json)
from fakecudnn_win import MAIN, ZLIB  # noqa: E402

ON_WINDOWS_BUILD = os.environ.get("CDD_WINDOWS") == "1"
UNDER_WINE = ON_WINDOWS_BUILD and os.name != "nt"
TOOLKIT = os.path.join("NVIDIA GPU Computing Toolkit", "CUDA", "v11.6")
SUBS = [fakecudnn_win.dll_name(s) for s in fakecudnn_win.SUBLIBS]
OPS = fakecudnn_win.dll_name("ops_infer")
KNOBS = ("CUDNN_DEPLOY_DRIVER_LIB", "FAKE_CUDNN_VERSION", "FAKE_CUDNN_CUDART",
         "FAKE_CUDNN_CONV_HANG", "WINEPATH")


def win(path):
    """The path as a Windows program is given it (Z:\\... under Wine)."""
    path = os.path.abspath(path)
    if UNDER_WINE:
        return "Z:" + path.replace("/", "\\")
    return path


def slashes(s):
    """Compare paths whatever separator the tool printed."""
    return s.replace("\\", "/")


def env_path(*dirs):
    """The environment putting dirs (in order) before the rest of PATH."""
    env = {k: None for k in KNOBS}
    if not dirs:
        return env
    if UNDER_WINE:
        env["WINEPATH"] = ";".join(win(d) for d in dirs)
    else:
        env["PATH"] = ";".join(list(dirs) + [os.environ.get("PATH", "")])
    return env


@unittest.skipUnless(ON_WINDOWS_BUILD,
                     "Windows build only (CDD_WINDOWS=1: make test-windows)")
class WindowsVerifyCase(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(WindowsVerifyCase, cls).setUpClass()
        why = fakecudnn_win.problem()
        if why:
            raise unittest.SkipTest(why)

    def new_tree(self, name):
        root = os.path.join(self.scratch(name), "Program Files", TOOLKIT)
        os.makedirs(os.path.dirname(root))
        return make_cuda_tree(root, platform=WINDOWS)

    def install(self, tree, variant, *extra, **kw):
        fx = fakecudnn_win.archive(variant)
        return run_json(["install", "--cuda-root", win(tree), "--manifest",
                         win(fx.manifest), "--archive", win(fx.path)]
                        + list(extra), **kw)

    def verify(self, tree, env, expect):
        return run_json(["verify", "--cuda-root", win(tree), "--level",
                         "load"], env=env, expect=expect)

    # -- check assertions (as test_verify.py) -----------------------------------

    def listing(self, doc):
        return "\n".join("  %-4s %s: %s" % (c["status"], c["name"], c["detail"])
                         for c in doc["checks"])

    def checks(self, doc, name):
        return [c for c in doc["checks"] if c["name"] == name]

    def check(self, doc, name, status, *contains):
        found = self.checks(doc, name)
        self.assertEqual(len(found), 1, "exactly one check %r in:\n%s"
                         % (name, self.listing(doc)))
        c = found[0]
        self.assertEqual(c["status"], status, "check %r: %r\n%s"
                         % (name, c["detail"], self.listing(doc)))
        for s in contains:
            self.assertIn(slashes(s), slashes(c["detail"]), "check %r" % name)
        return c

    # -- the cases --------------------------------------------------------------

    def test_all_good(self):
        tree = self.new_tree("good")
        bin_dir = os.path.join(tree, "bin")
        j = self.install(tree, "ok", env=env_path(bin_dir), expect=None)
        doc = j.doc
        self.assertEqual(j.rc, EXIT_OK, self.listing(doc) + j.err[-3000:])
        self.assertEqual(doc.get("layout"), "cuda-windows", doc)
        self.check(doc, "files", "pass")
        for lib in [MAIN] + SUBS:
            self.check(doc, "load.open " + lib, "pass", "loaded",
                       win(os.path.join(bin_dir, lib)))
            self.check(doc, "load.deps " + lib, "pass")
        for sub in fakecudnn_win.SUBLIBS:
            self.check(doc, "load.check " + fakecudnn_win.dll_name(sub), "pass",
                       "%s() = 0" % fakecudnn_win.CHECK_SYMBOLS[sub])
        self.check(doc, "load.version", "pass", "cudnnGetVersion() = 8500",
                   "cuDNN 8.5.0")
        self.check(doc, "load.cudart", "pass", "11060", "CUDA 11")
        self.check(doc, "load.search " + MAIN, "pass", "picks ours",
                   win(os.path.join(bin_dir, MAIN)))
        # cnn_infer imports ops_infer, found beside it (the DLL's own folder,
        # drive letter and all).
        self.check(doc, "load.deps " + fakecudnn_win.dll_name("cnn_infer"),
                   "pass", OPS + " -> " + win(os.path.join(bin_dir, OPS)))
        self.assertEqual(doc.get("cudnn_version"), 8500)
        self.assertEqual([c for c in doc["checks"]
                          if c["status"] in ("fail", "warn")], [],
                         self.listing(doc))

    def gpu_tree(self, name):
        """A tree with the fake cuDNN installed, and the environment that
        puts its bin first and takes the fake nvcuda.dll as the driver."""
        tree = self.new_tree(name)
        bin_dir = os.path.join(tree, "bin")
        self.install(tree, "ok", "--no-verify", env=env_path(bin_dir),
                     expect=EXIT_OK)
        env = env_path(bin_dir)
        env["CUDNN_DEPLOY_DRIVER_LIB"] = win(fakecudnn_win.fake_driver())
        return tree, env

    def test_gpu_layer_that_hangs_is_stopped_at_its_bound(self):
        """The GPU checks run in a process of their own (isolate_win32.c:
        the program started afresh): a convolution that never returns is
        stopped when it has made no progress for --gpu-timeout seconds, and
        the report says where it hung, after the checks made before it."""
        tree, env = self.gpu_tree("hang")
        env["FAKE_CUDNN_CONV_HANG"] = "1"
        t0 = time.monotonic()
        j = run_json(["verify", "--cuda-root", win(tree), "--level", "gpu",
                      "--gpu-timeout", "3"], env=env, expect=None)
        took = time.monotonic() - t0
        doc = j.doc
        self.assertEqual(j.rc, EXIT_CHECK, self.listing(doc) + j.err[-3000:])
        self.assertNotIn("error", doc, doc)
        self.check(doc, "gpu.driver", "pass")
        self.check(doc, "gpu.device", "pass")
        self.check(doc, "gpu.conv", "fail", "made no progress for 3 s and "
                   "was stopped", "running the convolution check in cuDNN",
                   "hangs there")
        self.assertLess(took, 90, "ended at its bound, not later")

    def test_gpu_layer_that_crashes_is_a_finding(self):
        """An access violation inside cuDNN's convolution kills the process
        running the GPU checks, not cudnn-deploy: gpu.conv fails naming the
        exception, the checks before it stand, and the load layer's own
        results (made in the tool's process) are all there."""
        tree, env = self.gpu_tree("crash")
        env["FAKE_CUDNN_CONV_CRASH"] = "1"
        j = run_json(["verify", "--cuda-root", win(tree), "--level", "gpu",
                      "--gpu-timeout", "60"], env=env, expect=None)
        doc = j.doc
        self.assertEqual(j.rc, EXIT_CHECK, self.listing(doc) + j.err[-3000:])
        self.check(doc, "load.version", "pass", "8500")
        self.check(doc, "gpu.driver", "pass", "CUDA 11.8")
        self.check(doc, "gpu.device", "pass", "device 0 of 1")
        self.check(doc, "gpu.conv", "fail", "crashed with exception "
                   "0xC0000005 (an access violation)",
                   "running the convolution check in cuDNN",
                   "cudnn-deploy and this report survive it")
        fails = [c["name"] for c in doc["checks"] if c["status"] == "fail"]
        self.assertEqual(fails, ["gpu.conv"], self.listing(doc))

    def test_driver_that_crashes_in_cuinit_is_a_finding(self):
        """A driver that takes an access violation in cuInit: the GPU probe
        (gpu.fit's listing) and the GPU layer each run it in a process of
        their own; gpu.device fails naming the exception, nothing else
        fails, and the report is whole."""
        tree, env = self.gpu_tree("cuinit")
        env["FAKE_CUDA_INIT_CRASH"] = "1"
        j = run_json(["verify", "--cuda-root", win(tree), "--level", "gpu",
                      "--gpu-timeout", "60"], env=env, expect=None)
        doc = j.doc
        self.assertEqual(j.rc, EXIT_CHECK, self.listing(doc) + j.err[-3000:])
        self.check(doc, "gpu.driver", "pass")
        self.check(doc, "gpu.device", "fail", "0xC0000005 (an access "
                   "violation)", "cuInit")
        fails = [c["name"] for c in doc["checks"] if c["status"] == "fail"]
        self.assertEqual(fails, ["gpu.device"], self.listing(doc))

    def test_gpu_layer_with_a_fake_driver(self):
        """The gpu layer of the Windows build (in a process of its own: the
        program started afresh, isolate_win32.c) with fake_cuda.c as
        nvcuda.dll:
        the driver's CUDA version against the tree's, the device, and the
        convolution on the fake cuDNN against the CPU reference."""
        tree, env = self.gpu_tree("gpu")
        j = run_json(["verify", "--cuda-root", win(tree), "--level", "gpu",
                      "--gpu-timeout", "60"], env=env, expect=None)
        doc = j.doc
        self.assertEqual(j.rc, EXIT_OK, self.listing(doc) + j.err[-3000:])
        self.check(doc, "gpu.driver", "pass", "CUDA 11.8")
        self.check(doc, "gpu.device", "pass", "device 0 of 1")
        self.check(doc, "gpu.conv", "pass", "against the CPU reference")
        self.assertEqual(doc.get("driver_cuda_version"), 11080)
        self.assertEqual([c for c in doc["checks"] if c["status"] == "fail"],
                         [], self.listing(doc))

    def test_missing_zlibwapi_is_error_126(self):
        tree = self.new_tree("zlib")
        bin_dir = os.path.join(tree, "bin")
        self.install(tree, "zlibwapi", "--no-verify", env=env_path(bin_dir),
                     expect=EXIT_OK)
        self.assertFalse(os.path.exists(os.path.join(bin_dir, ZLIB)))
        doc = self.verify(tree, env_path(bin_dir), EXIT_CHECK).doc
        self.assertIs(doc["ok"], False)
        deps = self.check(doc, "load.deps " + OPS, "fail", ZLIB,
                          "zlib for Windows", "ZLIB_WINAPI")
        self.assertIn("cannot find", deps["detail"])
        opn = self.check(doc, "load.open " + OPS, "fail", "126",
                         "the cause: it needs " + ZLIB)
        self.assertIn("cannot load", opn["detail"])
        # The loader's translation names the missing DLL, not ops_infer.
        self.assertIn(ZLIB, opn["detail"].split("; the cause")[0],
                      self.listing(doc))
        self.check(doc, "load.check " + OPS, "skip")
        # cnn_infer imports ops_infer (which is there): only proven copies
        # are loaded (issue 18), so it is not loaded either, and the check
        # names the library of ours that failed (whose check names zlibwapi).
        cnn = fakecudnn_win.dll_name("cnn_infer")
        self.check(doc, "load.deps " + cnn, "pass")
        self.check(doc, "load.open " + cnn, "fail", "needs " + OPS,
                   "load.open " + OPS)
        self.check(doc, "load.check " + cnn, "skip")
        # Everything that does not need ops_infer still loads and checks.
        self.check(doc, "load.open " + MAIN, "pass")
        self.check(doc, "load.version", "pass", "8500")
        for sub in ("ops_train", "cnn_train", "adv_infer", "adv_train"):
            self.check(doc, "load.open " + fakecudnn_win.dll_name(sub), "pass")
            self.check(doc, "load.check " + fakecudnn_win.dll_name(sub), "pass")

    def test_older_copy_earlier_on_path_shadows(self):
        tree = self.new_tree("shadow")
        bin_dir = os.path.join(tree, "bin")
        old = fakecudnn_win.old_main_dir()
        self.install(tree, "ok", "--no-verify", env=env_path(bin_dir),
                     expect=EXIT_OK)
        doc = self.verify(tree, env_path(old, bin_dir), EXIT_OK).doc
        c = self.check(doc, "load.search " + MAIN, "warn", "BEFORE ours",
                       win(os.path.join(old, MAIN)),
                       win(os.path.join(bin_dir, MAIN)), "PATH")
        # The old copy is the one the loader picks: named first.
        self.assertLess(slashes(c["detail"]).index(slashes(win(old))),
                        slashes(c["detail"]).index(slashes(win(bin_dir))))
        # verify itself loads ours by absolute path: the version is right.
        self.check(doc, "load.version", "pass", "8500")
        self.check(doc, "load.open " + MAIN, "pass")

    def test_delay_loaded_zlibwapi_loads_but_warns(self):
        tree = self.new_tree("delay")
        bin_dir = os.path.join(tree, "bin")
        self.install(tree, "delayload", "--no-verify", env=env_path(bin_dir),
                     expect=EXIT_OK)
        self.assertFalse(os.path.exists(os.path.join(bin_dir, ZLIB)))
        doc = self.verify(tree, env_path(bin_dir), EXIT_OK).doc
        # The loader does not resolve a delay-load import at load time.
        self.check(doc, "load.open " + OPS, "pass", "loaded")
        self.check(doc, "load.check " + OPS, "pass")
        self.check(doc, "load.deps " + OPS, "pass")
        self.check(doc, "load.delay " + OPS, "warn", ZLIB, "still loads",
                   "first call")

    def test_version_resources_of_two_builds(self):
        tree = self.new_tree("twobuilds")
        bin_dir = os.path.join(tree, "bin")
        self.install(tree, "resmismatch", "--no-verify",
                     env=env_path(bin_dir), expect=EXIT_OK)
        doc = self.verify(tree, env_path(bin_dir), EXIT_CHECK).doc
        self.check(doc, "load.resource", "fail",
                   fakecudnn_win.dll_name("ops_train") + " is 8.4.1.50",
                   MAIN + " is 8.5.0.96")
        # Each DLL on its own still loads and passes its own check.
        self.check(doc, "load.check " + fakecudnn_win.dll_name("ops_train"),
                   "pass")

    def test_bin_folder_writable_by_everyone(self):
        """Issue 18, the Windows StrictModes: the DACL of a library folder
        (GetNamedSecurityInfoW, walked ACE by ACE in loader_win32.c) that
        lets Everyone add and delete files is a load.trust warning with the
        icacls fix. Under Wine the DACL is what Wine synthesizes from the
        Unix mode (no stored descriptor): 0755 gives Everyone read and
        execute (0x1200a9), 0777 adds FILE_ADD_FILE, FILE_DELETE_CHILD and
        DELETE (0x1301ff), so the chmod below is a real change of the DACL
        the code reads; on Windows icacls grants the same."""
        tree = self.new_tree("trust")
        bin_dir = os.path.join(tree, "bin")
        self.install(tree, "ok", "--no-verify", env=env_path(bin_dir),
                     expect=EXIT_OK)
        doc = self.verify(tree, env_path(bin_dir), EXIT_OK).doc
        self.check(doc, "load.trust", "pass")
        if UNDER_WINE:
            os.chmod(bin_dir, 0o777)
        else:
            subprocess.run(["icacls", bin_dir, "/grant", "*S-1-1-0:(OI)(CI)M"],
                           check=True, stdout=subprocess.DEVNULL)
        try:
            doc = self.verify(tree, env_path(bin_dir), EXIT_OK).doc
            c = self.check(doc, "load.trust", "warn", win(bin_dir),
                           "S-1-1-0", "may write", "StrictModes")
            fixes = [f["command"] for f in c.get("fixes") or []]
            self.assertTrue(any("icacls" in f and "/remove:g" in f and
                                "*S-1-1-0" in f for f in fixes),
                            (fixes, self.listing(doc)))
            # Our DLLs still load: from their proven private copies.
            self.check(doc, "load.open " + MAIN, "pass")
            self.check(doc, "load.version", "pass", "8500")
        finally:
            if UNDER_WINE:
                os.chmod(bin_dir, 0o755)
            else:
                subprocess.run(["icacls", bin_dir, "/remove:g", "*S-1-1-0"],
                               check=True, stdout=subprocess.DEVNULL)
        doc = self.verify(tree, env_path(bin_dir), EXIT_OK).doc
        self.check(doc, "load.trust", "pass")


if __name__ == "__main__":
    cddtest.main()
