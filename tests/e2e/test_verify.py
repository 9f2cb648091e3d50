"""verify end to end on fake cuDNN libraries (tests/fakes/*.c built with cc,
packed by fakecudnn.py into NVIDIA's Linux layout, manifests written by
`manifest create`), installed into generated CUDA 11.6 trees: every failure
mode of issue 3's "Testing without a GPU" list, each asserted by its exit
code and by the name, status and detail of the checks in --json.

  all pass (search path warn + exact fix; pass with LD_LIBRARY_PATH)
  wrong version (8600)            sub-library reporting mismatch (14)
  sub-library missing             sub-library whose dependency is missing
  older copy shadowing ours       no driver (gpu skipped)
  fake driver (gpu pass, corrupt conv, CUDA 12 cudart)
  install whose verify fails      --level files and strays
  no receipt / --manifest         --level bogus
  GPU code (gpu.arch): sm_80 SASS only on a 9.0 device (fail), on 8.6
  (pass), with compute_80 PTX on 9.0 (warn: JIT), no driver (reported,
  not compared)
  Windows trees checked from Linux (PE files, mingw-built): version
  resources agreeing / from two builds, a delay-loaded DLL that is absent,
  .nv_fatb sections
"""

import os
import signal
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fakecudnn  # noqa: E402
from cddtest import (EXIT_CHECK, EXIT_ENV, EXIT_OK, EXIT_USAGE,  # noqa: E402
                     CddTestCase, make_cuda_tree, run, run_json)

MAIN = "libcudnn.so.8"
SUBS = ["libcudnn_%s.so.8" % s for s in fakecudnn.SUBLIBS]
ALL_LIBS = [MAIN] + SUBS

# Everything that changes what verify does is set per run, never inherited.
KNOBS = ("LD_LIBRARY_PATH", "CUDNN_DEPLOY_DRIVER_LIB", "FAKE_CUDNN_VERSION",
         "FAKE_CUDNN_CUDART", "FAKE_CUDNN_CONV_CORRUPT",
         "FAKE_CUDNN_CREATE_STATUS", "FAKE_CUDNN_FAIL_ALGO",
         "FAKE_CUDNN_CONV_CRASH", "FAKE_CUDA_INIT_CRASH",
         "FAKE_CUDNN_CONV_HANG", "FAKE_CUDA_INIT_HANG",
         "FAKE_CUDNN_CHECK_CRASH", "FAKE_CUDNN_CHECK_HANG",
         "FAKE_CUDA_DRIVER_VERSION", "FAKE_CUDA_NO_DEVICE",
         "FAKE_CUDA_INIT_ERROR", "FAKE_CUDA_OOM", "FAKE_CUDA_CC",
         "FAKE_CUDA_EVENT_SPEEDUP", "CUDNN_DEPLOY_TEST_BENCH")


# Where no driver is meant, CUDNN_DEPLOY_DRIVER_LIB names one that is not
# there: a GPU host's own libcuda (the device's) must never meet the fake
# cuDNN, which computes on host memory and crashes on device pointers. The
# cases about this host's own driver lookup pass None (the variable unset).
NO_DRIVER = os.path.join(cddtest.WORK_ROOT, "no-driver", "libcuda.so.1")


def env_with(**extra):
    env = {k: None for k in KNOBS}
    env["CUDNN_DEPLOY_DRIVER_LIB"] = NO_DRIVER
    env.update(extra)
    return env


def system_driver():
    """A libcuda.so.1 this machine's loader could find (then the "no
    driver" case cannot be tested here), or None."""
    try:
        out = subprocess.run(["ldconfig", "-p"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL).stdout.decode("utf-8", "replace")
        for line in out.splitlines():
            if line.strip().startswith("libcuda.so.1 ") and "x86-64" in line:
                return line.rsplit("=>", 1)[-1].strip()
    except OSError:
        pass
    for d in ("/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
              "/usr/lib64", "/lib", "/usr/lib", "/usr/local/nvidia/lib64",
              "/usr/lib/wsl/lib"):
        p = os.path.join(d, "libcuda.so.1")
        if os.path.exists(p):
            return p
    return None


class VerifyCase(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(VerifyCase, cls).setUpClass()
        why = fakecudnn.problem()
        if why:
            raise unittest.SkipTest(why)

    # -- trees and runs ---------------------------------------------------------

    def new_tree(self, name="ws"):
        return make_cuda_tree(os.path.join(self.scratch(name), "tree"),
                              version="11.6.2")

    def install_fake(self, variant="ok", verify=False, name="ws", expect=EXIT_OK,
                     env=None, extra=()):
        """A fresh CUDA 11.6 tree with the fake archive installed; returns
        (tree, install's JsonResult)."""
        tree = self.new_tree(name)
        fx = fakecudnn.archive(variant)
        args = (fx.install_args(tree) + ([] if verify else ["--no-verify"]) +
                list(extra))
        j = run_json(args, env=env or env_with(), expect=expect)
        return tree, j

    def verify(self, tree, *args, **kw):
        """verify --json --cuda-root tree args; kw: expect, env (extra vars;
        the knobs are cleared otherwise)."""
        expect = kw.pop("expect", None)
        env = env_with(**kw.pop("env", {}))
        self.assertFalse(kw, "unknown keywords %r" % kw)
        return run_json(["verify", "--cuda-root", tree] + list(args),
                        env=env, expect=expect)

    # -- check assertions -------------------------------------------------------

    def checks(self, doc, name):
        return [c for c in doc["checks"] if c["name"] == name]

    def check(self, doc, name, status=None, *contains):
        """The one check called name; asserts its status and that its detail
        contains every string in contains."""
        found = self.checks(doc, name)
        self.assertEqual(len(found), 1, "exactly one check %r in:\n%s"
                         % (name, self.listing(doc)))
        c = found[0]
        if status is not None:
            self.assertEqual(c["status"], status, "check %r: %r\n%s"
                             % (name, c["detail"], self.listing(doc)))
        for s in contains:
            self.assertIn(s, c["detail"], "check %r" % name)
        return c

    def listing(self, doc):
        return "\n".join("  %-4s %s: %s" % (c["status"], c["name"], c["detail"])
                         for c in doc["checks"])

    def statuses(self, doc, prefix):
        return {c["name"]: c["status"] for c in doc["checks"]
                if c["name"] == prefix or c["name"].startswith(prefix + ".")
                or c["name"].startswith(prefix + " ")}

    def assertNoFail(self, doc, but=()):
        bad = [c for c in doc["checks"]
               if c["status"] == "fail" and c["name"] not in but]
        self.assertEqual(bad, [], "unexpected failures:\n" + self.listing(doc))

    def assertLoadPasses(self, doc, libs=ALL_LIBS, but=()):
        """load.deps / load.open for libs and load.check for their
        sub-libraries all pass (names in but are left out)."""
        for lib in libs:
            for kind in ("load.deps", "load.open", "load.check"):
                name = "%s %s" % (kind, lib)
                if name in but or (kind == "load.check" and lib == MAIN):
                    continue
                self.check(doc, name, "pass")


class AllPass(VerifyCase):
    """Case 1: a good install; the search-path warning and its fix."""

    @classmethod
    def setUpClass(cls):
        super(AllPass, cls).setUpClass()
        cls.tree = make_cuda_tree(os.path.join(cddtest.WORK_ROOT, "AllPass", "tree"))
        cls.lib64 = os.path.join(cls.tree, "lib64")
        # install runs verify at its end (no --no-verify); no driver here is
        # assumed only by the level assertion below (the fake one is not set).
        cls.j = run_json(fakecudnn.archive("ok").install_args(cls.tree),
                         env=env_with(), expect=None)

    def test_install_verifies_everything(self):
        j = self.j
        self.assertEqual(j.rc, EXIT_OK, self.listing(j.doc) + j.err[-3000:])
        doc = j.doc
        self.assertEqual(doc.get("level"), "load")
        self.check(doc, "files", "pass", "unchanged since install")
        self.check(doc, "files.strays", "pass")
        self.assertLoadPasses(doc)
        self.check(doc, "load.version", "pass", "8500", "8.5.0")
        self.check(doc, "load.cudart", "pass", "11060", "CUDA 11")
        self.assertEqual(doc.get("cudnn_version"), 8500)
        self.assertNoFail(doc)
        # cnn_infer needs ops_infer (DT_NEEDED), resolved to our own copy.
        self.check(doc, "load.deps libcudnn_cnn_infer.so.8", "pass",
                   "libcudnn_ops_infer.so.8 -> this install")

    def test_not_on_search_path_warns_with_exact_fix(self):
        doc = self.j.doc
        c = self.check(doc, "load.search " + MAIN, "warn",
                       "not on the loader's search path")
        self.assertIn("add %s to LD_LIBRARY_PATH, or system-wide to "
                      "/etc/ld.so.conf.d" % self.lib64, c["detail"])
        # The fix as data and as commands for sh (the runs clear SHELL).
        self.assertEqual(doc["shell"], "sh")
        self.assertEqual([f["command"] for f in c["fixes"]], [
            'export LD_LIBRARY_PATH=%s"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"'
            % self.lib64,
            "printf '%%s\\n' %s | sudo tee /etc/ld.so.conf.d/cudnn.conf "
            ">/dev/null && sudo ldconfig" % self.lib64])
        self.assertEqual([f["where"] for f in c["fixes"]],
                         ["this shell", "system-wide"])
        self.assertEqual(c["fixes"][0]["steps"], [
            {"kind": "prepend", "scope": "session",
             "variable": "LD_LIBRARY_PATH", "value": self.lib64,
             "separator": ":"}])
        self.assertEqual([s["kind"] for s in c["fixes"][1]["steps"]],
                         ["write", "run"])
        # The sub-libraries are in the same state: not reported seven times.
        for sub in SUBS:
            self.assertEqual(self.checks(doc, "load.search " + sub), [])
        # A warning alone never fails verify.
        self.assertIs(doc["ok"], True)
        self.assertEqual(doc["exit_code"], 0)

    def test_on_search_path_picks_ours(self):
        j = self.verify(self.tree, env={"LD_LIBRARY_PATH": self.lib64},
                        expect=EXIT_OK)
        self.check(j.doc, "load.search " + MAIN, "pass", "picks ours",
                   os.path.join(self.lib64, MAIN))
        self.assertEqual([c for c in j.doc["checks"] if c["status"] == "warn"],
                         [], self.listing(j.doc))
        self.assertLoadPasses(j.doc)
        self.assertEqual(j.doc["command"].split()[0], "verify")
        self.assertIs(j.doc["changed"], False)

    def test_human_output(self):
        r = run(["verify", "--cuda-root", self.tree], env=env_with(),
                expect=EXIT_OK)
        self.assertEqual(r.out, "", "human text goes to stderr")
        self.assertIn("Verifying %s in %s (level " % (fakecudnn.TOP, self.tree),
                      r.err)
        self.assertIn("Verify: all checks passed", r.err)
        # Short: a layer that passed is one line; the warning in full, with
        # its fix; no single passing check of the load layer.
        self.assertRegex(r.err, r"(?m)^  pass  files: all 25 files present "
                         r"and unchanged since install \(sha256\); no stray")
        self.assertRegex(r.err, r"(?m)^  pass  load: 24 other checks passed$")
        self.assertRegex(r.err, r"(?m)^  warn  load.search ")
        self.assertRegex(r.err, r"(?m)^        > fix \(this shell\): export ")
        self.assertNotIn("load.version", r.err)
        self.assertNotIn("\033[", r.err, "no colour off a terminal")
        # --verbose (anywhere on the line): every check.
        for args in (["--verbose", "verify", "--cuda-root", self.tree],
                     ["verify", "-v", "--cuda-root", self.tree]):
            v = run(args, env=env_with(), expect=EXIT_OK)
            self.assertRegex(v.err, r"(?m)^  pass  load.version: ")
            self.assertRegex(v.err, r"(?m)^  pass  load.open libcudnn.so.8: ")
            self.assertRegex(v.err, r"(?m)^  pass  files.strays: ")
            self.assertNotRegex(v.err, r"(?m)^  pass  load: ")
        # With the folder searched, the load layer passes whole: one line.
        s = run(["verify", "--cuda-root", self.tree],
                env=env_with(LD_LIBRARY_PATH=self.lib64), expect=EXIT_OK)
        self.assertRegex(s.err, r"(?m)^  pass  load: 7 libraries loaded by "
                         r"absolute path, cuDNN 8.5.0, dependencies resolved, "
                         r"sub-library versions agree, CUDA runtime matches, "
                         r"the loader picks this install$")
        self.assertNotRegex(s.err, r"(?m)^  warn")


class Failures(VerifyCase):
    """Cases 2-6: each failure mode named by the right check."""

    @classmethod
    def setUpClass(cls):
        super(Failures, cls).setUpClass()
        cls.ok_tree = make_cuda_tree(os.path.join(cddtest.WORK_ROOT, "Failures", "ok"))
        run_json(fakecudnn.archive("ok").install_args(cls.ok_tree, "--no-verify"),
                 env=env_with(), expect=EXIT_OK)

    def test_wrong_version(self):
        j = self.verify(self.ok_tree, env={"FAKE_CUDNN_VERSION": "8600"},
                        expect=EXIT_CHECK)
        self.check(j.doc, "load.version", "fail", "8600", "8.6.0", "8500",
                   "8.5.0", "another version")
        self.assertEqual(j.doc.get("cudnn_version"), 8600)
        self.assertNoFail(j.doc, but=("load.version",))
        self.assertRegex(j.err, r"Verify: (1 check|[0-9]+ checks) failed, "
                                r"(1 warning|[0-9]+ warnings)\.")

    def test_sublibrary_reports_mismatch(self):
        tree, _ = self.install_fake("mismatch")
        j = self.verify(tree, expect=EXIT_CHECK)
        name = "load.check libcudnn_%s.so.8" % fakecudnn.MISMATCH_SUB
        self.check(j.doc, name, "fail", "cudnnOpsTrainVersionCheck() = 14",
                   "another cuDNN version", MAIN)
        self.check(j.doc, "load.version", "pass")
        self.assertLoadPasses(j.doc, but=(name,))
        self.assertNoFail(j.doc, but=(name,))

    def test_sublibrary_missing(self):
        tree, _ = self.install_fake()
        gone = "lib64/libcudnn_cnn_train.so.8.5.0"
        lib = "libcudnn_cnn_train.so.8"
        os.unlink(os.path.join(tree, gone))
        j = self.verify(tree, expect=EXIT_CHECK)
        doc = j.doc
        # The file and the two links of its chain.
        self.check(doc, "files", "fail", "3 of 25", "reinstall")
        self.check(doc, "files.changed", "fail", gone, "missing")
        chains = {c["detail"] for c in self.checks(doc, "files.chain")}
        self.assertEqual(chains, {
            "lib64/libcudnn_cnn_train.so.8: the symlink chain is broken at " + gone,
            "lib64/libcudnn_cnn_train.so: the symlink chain is broken at " + gone})
        self.assertEqual({c["status"] for c in self.checks(doc, "files.chain")},
                         {"fail"})
        # The load layer: the soname link dangles, so the library is missing
        # (not "not a loadable library"); the others still load and check.
        self.check(doc, "load." + lib, "fail", "is missing",
                   os.path.join(tree, "lib64", lib), "sub-library",
                   "install the whole archive")
        self.assertEqual(self.checks(doc, "load.deps " + lib), [])
        self.assertEqual(self.checks(doc, "load.open " + lib), [])
        self.check(doc, "load.check " + lib, "skip", "did not load")
        self.assertLoadPasses(doc, libs=[l for l in ALL_LIBS if l != lib])
        self.check(doc, "load.version", "pass")

    def test_sublibrary_link_deleted(self):
        """The soname link itself deleted: files and load both name it."""
        tree, _ = self.install_fake()
        os.unlink(os.path.join(tree, "lib64/libcudnn_adv_train.so.8"))
        j = self.verify(tree, expect=EXIT_CHECK)
        self.check(j.doc, "files.changed", "fail", "lib64/libcudnn_adv_train.so.8")
        self.check(j.doc, "load.libcudnn_adv_train.so.8", "fail", "is missing",
                   "sub-library")
        self.assertEqual(self.checks(j.doc, "load.open libcudnn_adv_train.so.8"), [])
        self.assertEqual(self.checks(j.doc, "load.check libcudnn_adv_train.so.8")[0]["status"],
                         "skip")

    def test_dependency_missing(self):
        tree, _ = self.install_fake("missing_dep")
        j = self.verify(tree, expect=EXIT_CHECK)
        lib = "libcudnn_%s.so.8" % fakecudnn.MISSING_DEP_SUB
        dep = fakecudnn.MISSING_DEP
        deps = self.check(j.doc, "load.deps " + lib, "fail", dep, "cuBLAS",
                          "cannot find")
        self.assertIn("LD_LIBRARY_PATH", deps["detail"])
        opened = self.check(j.doc, "load.open " + lib, "fail", dep)
        # The loader's own message, then the diagnosis.
        self.assertIn("cannot open shared object file", opened["detail"])
        self.assertIn("the cause: it needs %s" % dep, opened["detail"])
        self.check(j.doc, "load.check " + lib, "skip")
        self.assertLoadPasses(j.doc, libs=[l for l in ALL_LIBS if l != lib])
        self.check(j.doc, "load.version", "pass")
        self.assertNoFail(j.doc, but=("load.deps " + lib, "load.open " + lib))

    def test_sibling_dependency_missing(self):
        """A DT_NEEDED naming another library of this install counts as
        resolved only when that file is really there: a deleted sibling is
        named by load.deps and given as load.open's cause."""
        tree, _ = self.install_fake()
        os.unlink(os.path.join(tree, "lib64/libcudnn_ops_infer.so.8.5.0"))
        j = self.verify(tree, expect=EXIT_CHECK)
        self.check(j.doc, "load.libcudnn_ops_infer.so.8", "fail", "is missing")
        self.check(j.doc, "load.deps libcudnn_cnn_infer.so.8", "fail",
                   "libcudnn_ops_infer.so.8")
        self.check(j.doc, "load.open libcudnn_cnn_infer.so.8", "fail",
                   "the cause: it needs libcudnn_ops_infer.so.8")

    def test_older_copy_shadows_ours(self):
        old = fakecudnn.old_main_dir()
        lib64 = os.path.join(self.ok_tree, "lib64")
        j = self.verify(self.ok_tree,
                        env={"LD_LIBRARY_PATH": old + ":" + lib64},
                        expect=EXIT_OK)
        c = self.check(j.doc, "load.search " + MAIN, "warn", "BEFORE ours",
                       os.path.join(old, MAIN), os.path.join(lib64, MAIN))
        self.assertIn("add %s to LD_LIBRARY_PATH" % lib64, c["detail"])
        self.assertIn("export LD_LIBRARY_PATH=" + lib64,
                      c["fixes"][0]["command"])
        # The sub-libraries are ours (they differ from the main library's
        # state, so each is reported).
        for sub in SUBS:
            self.check(j.doc, "load.search " + sub, "pass", "picks ours")
        # Ours is what verify loaded (by absolute path), not the 8.4.1 copy.
        self.check(j.doc, "load.version", "pass", "8500")
        self.assertEqual(j.doc.get("cudnn_version"), 8500)
        self.assertNoFail(j.doc)

    def test_older_copy_after_ours(self):
        old = fakecudnn.old_main_dir()
        lib64 = os.path.join(self.ok_tree, "lib64")
        j = self.verify(self.ok_tree,
                        env={"LD_LIBRARY_PATH": lib64 + ":" + old},
                        expect=EXIT_OK)
        self.check(j.doc, "load.search " + MAIN, "pass", "picks ours",
                   "it shadows " + os.path.join(old, MAIN))


class Gpu(VerifyCase):
    """Cases 7-8: the gpu layer without a driver and with the fake one."""

    @classmethod
    def setUpClass(cls):
        super(Gpu, cls).setUpClass()
        cls.tree = make_cuda_tree(os.path.join(cddtest.WORK_ROOT, "Gpu", "tree"))
        run_json(fakecudnn.archive("ok").install_args(cls.tree, "--no-verify"),
                 env=env_with(), expect=EXIT_OK)
        cls.driver = fakecudnn.fake_driver()

    def test_no_driver_skips_gpu(self):
        found = system_driver()
        if found:
            self.skipTest("this machine has an NVIDIA driver (%s)" % found)
        j = self.verify(self.tree, "--level", "gpu", expect=EXIT_OK,
                        env={"CUDNN_DEPLOY_DRIVER_LIB": None})
        self.assertEqual(j.doc.get("level"), "gpu")
        self.check(j.doc, "gpu", "skip", "no NVIDIA driver")
        # Only the architectures, read from the files, not compared.
        self.assertEqual([c["name"] for c in j.doc["checks"]
                          if c["name"].startswith("gpu.")], ["gpu.arch"])
        self.check(j.doc, "gpu.arch", "skip")
        self.check(j.doc, "load.version", "pass")
        # Without --level: no driver, so the default level is load, and the
        # report says that the gpu layer was skipped, and why (as --level gpu
        # does: the skip, and the architectures read from the files).
        j = self.verify(self.tree, expect=EXIT_OK)
        self.assertEqual(j.doc.get("level"), "load")
        self.assertEqual(self.statuses(j.doc, "gpu"),
                         {"gpu": "skip", "gpu.arch": "skip"})
        self.check(j.doc, "gpu", "skip", "no NVIDIA driver")
        self.assertRegex(j.err, r"(?m)^  skip  gpu: no NVIDIA driver")

    def test_driver_named_but_absent_skips(self):
        gone = os.path.join(self.scratch("nodrv"), "libcuda.so.1")
        j = self.verify(self.tree, "--level", "gpu",
                        env={"CUDNN_DEPLOY_DRIVER_LIB": gone}, expect=EXIT_OK)
        self.check(j.doc, "gpu", "skip")

    def test_driver_named_but_absent_says_why(self):
        """The gpu skip says why no driver was found, so a wrong
        CUDNN_DEPLOY_DRIVER_LIB is not mistaken for "no driver"."""
        gone = os.path.join(self.scratch("nodrv"), "libcuda.so.1")
        j = self.verify(self.tree, "--level", "gpu",
                        env={"CUDNN_DEPLOY_DRIVER_LIB": gone}, expect=EXIT_OK)
        self.check(j.doc, "gpu", "skip", "CUDNN_DEPLOY_DRIVER_LIB")

    def test_fake_driver_runs_the_convolution(self):
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver},
                        expect=EXIT_OK)
        doc = j.doc
        self.assertEqual(doc.get("level"), "gpu")
        self.check(doc, "gpu.driver", "pass", "CUDA 11.8", "11.6")
        self.check(doc, "gpu.device", "pass", "device 0 of")
        self.check(doc, "gpu.conv", "pass", "1x3x32x32 * 16x3x3x3",
                   "max relative error")
        self.assertLessEqual(doc["conv_max_rel_err"], 1e-3)
        self.assertEqual(doc.get("driver_cuda_version"), 11080)
        self.assertLoadPasses(doc)
        self.assertNoFail(doc)

    def test_fake_driver_wrong_results(self):
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDNN_CONV_CORRUPT": "1"},
                        expect=EXIT_CHECK)
        c = self.check(j.doc, "gpu.conv", "fail",
                       "differs from the CPU reference", "max relative error",
                       "> 1e-03", "worst at")
        self.assertGreater(j.doc["conv_max_rel_err"], 1e-3, c["detail"])
        self.check(j.doc, "gpu.driver", "pass")
        self.assertNoFail(j.doc, but=("gpu.conv",))

    def test_cudnn_that_crashes_is_a_finding(self):
        """cuDNN dying in the convolution (SIGSEGV) is a failing gpu.conv
        saying how the process running it ended; verify itself survives
        with the checks made before the crash, and the results sent
        before it (the driver's version)."""
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDNN_CONV_CRASH": "1"},
                        expect=EXIT_CHECK)
        self.check(j.doc, "gpu.driver", "pass", "CUDA 11.8")
        self.check(j.doc, "gpu.device", "pass", "device 0 of")
        self.check(j.doc, "gpu.arch")
        self.check(j.doc, "gpu.conv", "fail", "killed by signal %d"
                   % signal.SIGSEGV, "SIGSEGV", "convolution check",
                   "crashed")
        self.assertEqual(j.doc.get("driver_cuda_version"), 11080)
        self.assertNoFail(j.doc, but=("gpu.conv",))
        # The human report too: one line for the crash, and the verdict.
        res = run(["verify", "--cuda-root", self.tree],
                  env=env_with(CUDNN_DEPLOY_DRIVER_LIB=self.driver,
                               FAKE_CUDNN_CONV_CRASH="1"), expect=EXIT_CHECK)
        self.assertRegex(res.err, r"(?m)^  fail  gpu.conv: the process running "
                                  r"the GPU checks was killed by signal")

    def test_driver_that_crashes_in_cuinit_is_a_finding(self):
        """A driver that dies in cuInit: the GPU fit probe and the gpu layer
        each run it apart; gpu.device fails saying so, nothing else does."""
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDA_INIT_CRASH": "1"},
                        expect=EXIT_CHECK)
        self.check(j.doc, "gpu.driver", "pass")
        self.check(j.doc, "gpu.device", "fail", "signal %d" % signal.SIGSEGV,
                   "cuInit")
        self.assertEqual(self.checks(j.doc, "gpu.conv"), [])
        # The sub-libraries' version checks start the driver (as cuDNN 9's
        # do): the first of them dies with it, apart too.
        k = self.version_check_failure(j.doc, "killed by signal %d"
                                       % signal.SIGSEGV)
        self.assertNoFail(j.doc, but=("gpu.device", k))

    def verify_hung(self, knob, bound):
        """verify --gpu-timeout bound with the fake driver and knob=1 (a
        hang): exit 1, well before it would end by itself."""
        t0 = time.monotonic()
        j = self.verify(self.tree, "--gpu-timeout", bound,
                        env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver, knob: "1"},
                        expect=EXIT_CHECK)
        self.assertLess(time.monotonic() - t0, 30,
                        "stopped at its bound, not later")
        return j

    def test_cudnn_that_hangs_is_stopped(self):
        """cuDNN that never returns from the convolution (a hung GPU): the
        process running the GPU checks is stopped once it has made no
        progress for --gpu-timeout seconds, and gpu.conv fails saying so;
        the checks before it stand. Without a bound verify would wait for
        ever."""
        j = self.verify_hung("FAKE_CUDNN_CONV_HANG", "2")
        self.check(j.doc, "gpu.device", "pass", "device 0 of")
        self.check(j.doc, "gpu.conv", "fail", "made no progress for 2 s",
                   "convolution check", "hangs there", "--gpu-timeout")
        self.assertNoFail(j.doc, but=("gpu.conv",))
        # 0: no bound; a bad value is a usage error.
        for bad in ("-1", "soon", "1e8"):
            run(["verify", "--cuda-root", self.tree, "--gpu-timeout", bad],
                env=env_with(), expect=EXIT_USAGE)

    def test_driver_that_hangs_in_cuinit_is_stopped(self):
        """A driver that hangs in cuInit: the GPU fit probe and the gpu
        layer are each stopped at the bound; gpu.device fails saying the
        driver hangs, and nothing else fails."""
        j = self.verify_hung("FAKE_CUDA_INIT_HANG", "1.5")
        self.check(j.doc, "gpu.device", "fail", "made no progress for 1.5 s",
                   "cuInit", "hangs there")
        self.assertEqual(self.checks(j.doc, "gpu.conv"), [])
        k = self.version_check_failure(j.doc, "made no progress for 1.5 s")
        self.assertNoFail(j.doc, but=("gpu.device", k))

    def version_check_failure(self, doc, *contains):
        """The one failing load.check, run apart, saying contains; its
        name."""
        bad = [c for c in doc["checks"]
               if c["name"].startswith("load.check") and c["status"] == "fail"]
        self.assertEqual(len(bad), 1, self.listing(doc))
        for s in ("the process running the sub-libraries' version checks",
                  "calling that sub-library's version check") + contains:
            self.assertIn(s, bad[0]["detail"])
        return bad[0]["name"]

    def test_version_checks_run_apart(self):
        """The sub-libraries' version checks start the driver (cuDNN 9's
        do, and the fake's too): run in verify's own process, they left the
        GPU layer's forked child a driver it could not start (the H200 run
        of 2026-12-03: gpu.device "cuInit failed: CUDA_ERROR_NOT_INITIALIZED"
        on real cuDNN 9.14). They run apart, so the GPU checks pass; and a
        version check that crashes or hangs is that check's failure, not
        verify's death, with the GPU layer still run."""
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver},
                        expect=EXIT_OK)
        self.check(j.doc, "gpu.device", "pass")
        self.check(j.doc, "gpu.conv", "pass")
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDNN_CHECK_CRASH": "1"},
                        expect=EXIT_CHECK)
        k = self.version_check_failure(j.doc, "killed by signal %d"
                                       % signal.SIGSEGV, "SIGSEGV")
        self.check(j.doc, "gpu.conv", "pass")
        self.assertNoFail(j.doc, but=(k,))
        j = self.verify(self.tree, "--gpu-timeout", "1",
                        env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                             "FAKE_CUDNN_CHECK_HANG": "1"},
                        expect=EXIT_CHECK)
        k = self.version_check_failure(j.doc, "made no progress for 1 s",
                                       "cuDNN hangs there")
        self.check(j.doc, "gpu.conv", "pass")
        self.assertNoFail(j.doc, but=(k,))

    def test_release_pick_survives_a_driver_that_crashes(self):
        """The GPU probe of install's release pick and `releases` runs
        apart too: the fake driver's GPU is listed, and a driver dying in
        cuInit is a note, not a dead command."""
        r = run(["releases"], env=env_with(CUDNN_DEPLOY_DRIVER_LIB=self.driver),
                expect=EXIT_OK)
        self.assertIn("GPUs: sm_90 (reported by the driver)", r.err + r.out)
        r = run(["releases"], env=env_with(CUDNN_DEPLOY_DRIVER_LIB=self.driver,
                                           FAKE_CUDA_INIT_CRASH="1"),
                expect=EXIT_OK)
        self.assertIn("the NVIDIA driver crashed while listing the GPUs",
                      r.err + r.out)

    def test_cudart_of_another_cuda_major(self):
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDNN_CUDART": "12010"},
                        expect=EXIT_CHECK)
        self.check(j.doc, "load.cudart", "fail", "CUDA 12.1", "12010",
                   "the tree is CUDA 11", "for CUDA 11")
        self.check(j.doc, "gpu.conv", "pass")
        self.assertNoFail(j.doc, but=("load.cudart",))

    def test_old_driver(self):
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDA_DRIVER_VERSION": "10020"},
                        expect=EXIT_CHECK)
        self.check(j.doc, "gpu.driver", "fail", "10.2", "11.6",
                   "update the NVIDIA driver")

    def test_driver_without_device(self):
        j = self.verify(self.tree, env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                        "FAKE_CUDA_NO_DEVICE": "1"},
                        expect=None)
        self.assertIn(j.rc, (EXIT_OK, EXIT_CHECK))
        gpu = self.statuses(j.doc, "gpu")
        self.assertNotIn("pass", [gpu.get("gpu.conv"), gpu.get("gpu.device")],
                         self.listing(j.doc))


@cddtest.needs_fault_hook
class Bench(VerifyCase):
    """verify --level bench on the fake driver: the three precisions, each
    with TFLOP/s, and the 5x rule both ways (FAKE_CUDA_EVENT_SPEEDUP makes
    the fake's event times those of a faster or slower GPU). A small shape
    (CUDNN_DEPLOY_TEST_BENCH=small, test builds only) keeps the fake's CPU
    convolutions short."""

    @classmethod
    def setUpClass(cls):
        super(Bench, cls).setUpClass()
        cls.tree = make_cuda_tree(os.path.join(cddtest.WORK_ROOT, "Bench",
                                               "tree"))
        run_json(fakecudnn.archive("ok").install_args(cls.tree, "--no-verify"),
                 env=env_with(), expect=EXIT_OK)
        cls.driver = fakecudnn.fake_driver()

    def bench(self, speedup, expect):
        return self.verify(self.tree, "--level", "bench",
                           env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                "CUDNN_DEPLOY_TEST_BENCH": "small",
                                "FAKE_CUDA_EVENT_SPEEDUP": speedup},
                           expect=expect)

    def test_three_precisions(self):
        j = self.bench("1000", EXIT_OK)
        doc = j.doc
        self.check(doc, "bench", "pass", "FP32 conv ", "TFLOP/s",
                   "FMA_MATH math", "at least 5x needed", "limit 1e-03")
        self.check(doc, "bench.tf32", "pass", "TF32 ", "TFLOP/s",
                   "TENSOR_OP_MATH math", "limit 1e-02")
        self.check(doc, "bench.fp16", "pass", "FP16 ", "TFLOP/s",
                   "TENSOR_OP_MATH math", "limit 1e-02")
        for key in ("bench_gpu_tflops", "bench_tf32_gpu_tflops",
                    "bench_fp16_gpu_tflops", "bench_tf32_speedup",
                    "bench_fp16_speedup"):
            self.assertGreater(doc.get(key, 0), 0, key)
        self.assertGreater(doc["bench_fp16_speedup"], 5)
        self.assertNoFail(doc)

    def test_release_build_has_no_bench_knob(self):
        release = os.environ.get("CDD_RELEASE_BIN")
        if not release:
            self.skipTest("no release binary named (CDD_RELEASE_BIN: make test)")
        with open(release, "rb") as f:
            self.assertNotIn(b"CUDNN_DEPLOY_TEST_BENCH", f.read())

    def test_below_five_times_fails(self):
        j = self.bench("0.01", EXIT_CHECK)
        for name in ("bench", "bench.tf32", "bench.fp16"):
            self.check(j.doc, name, "fail", "FAILED: below 5x",
                       "not really running on the GPU")
        self.assertLess(j.doc["bench_speedup"], 5)
        self.check(j.doc, "gpu.conv", "pass")


class GpuArch(VerifyCase):
    """gpu.arch: the fatbinaries of the "sm80" fakes against the fake
    driver's compute capability (FAKE_CUDA_CC)."""

    @classmethod
    def setUpClass(cls):
        super(GpuArch, cls).setUpClass()
        cls.driver = fakecudnn.fake_driver()
        cls.trees = {}
        for v in ("sm80", "sm80_ptx"):
            t = make_cuda_tree(os.path.join(cddtest.WORK_ROOT, "GpuArch", v,
                                            "tree"))
            run_json(fakecudnn.archive(v).install_args(t, "--no-verify"),
                     env=env_with(), expect=EXIT_OK)
            cls.trees[v] = t
        cls.gpu_libs = ["libcudnn_%s.so.8" % s for s in fakecudnn.FATBIN_SUBS]

    def run_gpu(self, variant, cc, expect):
        return self.verify(self.trees[variant], "--level", "gpu",
                           env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver,
                                "FAKE_CUDA_CC": cc}, expect=expect)

    def test_sm80_only_on_hopper_fails(self):
        j = self.run_gpu("sm80", "9.0", EXIT_CHECK)
        c = self.check(j.doc, "gpu.arch", "fail", "compute capability 9.0",
                       "neither SASS for sm_90 nor PTX at or below compute_90",
                       "SASS sm_80", "cannot run on this GPU")
        for lib in self.gpu_libs:
            self.assertIn(lib, c["detail"])
        self.assertNotIn("libcudnn.so.8 (", c["detail"])
        self.check(j.doc, "gpu.conv", "pass")
        # The fit check agrees, from the same device code, and names the
        # newest catalog release that fits (docs/verification.md, GPU fit).
        self.check(j.doc, "gpu.fit", "fail", "compute capability 9.0",
                   "cudnn-deploy install --cudnn 9.")
        self.assertNoFail(j.doc, but=("gpu.arch", "gpu.fit"))

    def test_sm80_on_ampere_passes(self):
        j = self.run_gpu("sm80", "8.6", EXIT_OK)
        c = self.check(j.doc, "gpu.arch", "pass", "compute capability 8.6",
                       "matching SASS in all 2 libraries", "SASS sm_80")
        self.assertIn("no GPU code in libcudnn.so.8", c["detail"])

    def test_older_gpu_fails(self):
        j = self.run_gpu("sm80_ptx", "7.5", EXIT_CHECK)
        self.check(j.doc, "gpu.arch", "fail", "compute capability 7.5",
                   "sm_70..sm_75", "compute_75")

    def test_ptx_only_warns_jit(self):
        j = self.run_gpu("sm80_ptx", "9.0", EXIT_OK)
        c = self.check(j.doc, "gpu.arch", "warn", "no SASS for sm_90",
                       "PTX compute_80", "JIT", "first call",
                       "PTX compute_80 (ISA 8.0)")
        for lib in self.gpu_libs:
            self.assertIn(lib, c["detail"])

    def test_no_driver_reports_architectures(self):
        gone = os.path.join(self.scratch("nodrv"), "libcuda.so.1")
        j = self.verify(self.trees["sm80"], "--level", "gpu",
                        env={"CUDNN_DEPLOY_DRIVER_LIB": gone}, expect=EXIT_OK)
        self.check(j.doc, "gpu", "skip")
        self.check(j.doc, "gpu.arch", "skip", "2 libraries carry SASS sm_80",
                   "not compared with a GPU", "no NVIDIA driver")

    def test_plain_fakes_carry_no_gpu_code(self):
        """The "ok" fakes have no fatbinary: said, as a warning."""
        tree, _ = self.install_fake("ok", name="plain")
        j = self.verify(tree, "--level", "gpu",
                        env={"CUDNN_DEPLOY_DRIVER_LIB": self.driver},
                        expect=EXIT_OK)
        self.check(j.doc, "gpu.arch", "warn", "none of the 7 libraries",
                   "cannot be told from the files")


class WindowsTreeFromLinux(VerifyCase):
    """Windows-layout trees of mingw-built fake DLLs, verified by this
    (Linux) binary: the load layer reads their PE files without loading
    them - version resources, delay-load imports, .nv_fatb."""

    @classmethod
    def setUpClass(cls):
        super(WindowsTreeFromLinux, cls).setUpClass()
        import fakecudnn_win
        why = fakecudnn_win.problem()
        if why:
            raise unittest.SkipTest(why)
        cls.fw = fakecudnn_win

    def win_tree(self, variant, expect=EXIT_OK):
        root = os.path.join(self.scratch("win-" + variant), "v11.6")
        tree = make_cuda_tree(root, platform=cddtest.WINDOWS)
        fx = self.fw.archive(variant)
        run_json(["install", "--cuda-root", tree, "--manifest", fx.manifest,
                  "--archive", fx.path, "--no-verify"], env=env_with(),
                 expect=EXIT_OK)
        return tree

    def test_version_resources_agree(self):
        j = self.verify(self.win_tree("ok"), "--level", "load", expect=None)
        self.check(j.doc, "load.resource", "pass",
                   "all 7 DLLs carry file version 8.5.0.96")
        self.assertEqual(self.checks(j.doc, "load.delay " + self.fw.MAIN), [])

    def test_version_resources_from_two_builds(self):
        j = self.verify(self.win_tree("resmismatch"), "--level", "load",
                        expect=EXIT_CHECK)
        self.check(j.doc, "load.resource", "fail", "different builds",
                   "cudnn_ops_train64_8.dll is 8.4.1.50",
                   "cudnn64_8.dll is 8.5.0.96")

    def test_delay_loaded_dll_missing_warns(self):
        j = self.verify(self.win_tree("delayload"), "--level", "load",
                        expect=None)
        ops = self.fw.dll_name(self.fw.ZLIB_SUB)
        self.check(j.doc, "load.delay " + ops, "warn", "zlibwapi.dll",
                   "zlib", "still loads", "first call")
        # Not an import the loader needs at load time: no failure for it.
        self.assertNotEqual(self.check(j.doc, "load.deps " + ops)["status"],
                            "fail")
        self.assertNoFail(j.doc)

    def test_version_resource_missing_warns(self):
        j = self.verify(self.win_tree("resmissing"), "--level", "load",
                        expect=None)
        self.check(j.doc, "load.resource", "warn",
                   "6 DLLs carry file version 8.5.0.96",
                   "no version resource in cudnn_adv_train64_8.dll")
        self.assertNoFail(j.doc)

    def test_delay_loaded_dll_present_is_listed(self):
        import shutil
        tree = self.win_tree("delayload")
        ops = self.fw.dll_name(self.fw.ZLIB_SUB)
        shutil.copyfile(self.fw.zlibwapi_stub(),
                        os.path.join(tree, "bin", self.fw.ZLIB))
        j = self.verify(tree, "--level", "load", expect=None)
        self.check(j.doc, "load.deps " + ops, "pass",
                   "zlibwapi.dll -> ", "(delay-loaded)")
        self.assertEqual(self.checks(j.doc, "load.delay " + ops), [])

    def test_fatbin_of_windows_dlls(self):
        j = self.verify(self.win_tree("sm80"), "--level", "gpu", expect=None)
        self.check(j.doc, "gpu.arch", "skip", "2 libraries carry SASS sm_80",
                   "not compared with a GPU")


class InstallAndLevels(VerifyCase):
    """Cases 9-12: install whose verify fails, --level files and strays,
    no receipt, bad level."""

    def test_install_whose_verify_fails_keeps_files(self):
        tree, j = self.install_fake("mismatch", verify=True, expect=EXIT_CHECK)
        self.assertIs(j.doc["ok"], False)
        self.assertIs(j.doc["changed"], True)
        self.check(j.doc, "load.check libcudnn_%s.so.8" % fakecudnn.MISMATCH_SUB,
                   "fail", "another cuDNN version")
        # The files stay installed, recorded, and status says so.
        self.assertTrue(os.path.isfile(os.path.join(tree, cddtest.RECEIPT)))
        files = cddtest.receipt_files(cddtest.read_receipt(tree))
        self.assertIn("lib64/libcudnn.so.8.5.0", files)
        for p in files:
            self.assertTrue(os.path.lexists(os.path.join(tree, p)), p)
        run(["status", "--cuda-root", tree], env=env_with(), expect=EXIT_OK)
        # A later verify reaches the same verdict from the receipt alone.
        j2 = self.verify(tree, expect=EXIT_CHECK)
        self.check(j2.doc, "files", "pass")

    def install_whose_gpu_fails(self, knob, extra, *words):
        """install with the fake driver and knob=1, its closing verify's
        gpu.conv failing with words: the install stays done and recorded
        (exit 1), status still reads it."""
        tree, j = self.install_fake(
            verify=True, expect=EXIT_CHECK, extra=extra,
            env=env_with(CUDNN_DEPLOY_DRIVER_LIB=fakecudnn.fake_driver(),
                         **{knob: "1"}))
        self.assertIs(j.doc["changed"], True)
        self.check(j.doc, "gpu.conv", "fail", *words)
        self.assertTrue(os.path.isfile(os.path.join(tree, cddtest.RECEIPT)))
        run(["status", "--cuda-root", tree], env=env_with(), expect=EXIT_OK)

    def test_install_whose_cudnn_crashes_in_verify(self):
        """install's closing verify runs the GPU checks apart too: a cuDNN
        that crashes there leaves the install done and recorded, exit 1
        with the crash as the finding, not a dead process."""
        self.install_whose_gpu_fails("FAKE_CUDNN_CONV_CRASH", (),
                                     "killed by signal")

    def test_install_whose_gpu_hangs_in_verify(self):
        """install --gpu-timeout bounds its closing verify's GPU checks:
        a hung convolution is stopped, the install stays done and recorded,
        exit 1 with the hang as the finding."""
        self.install_whose_gpu_fails("FAKE_CUDNN_CONV_HANG",
                                     ["--gpu-timeout", "2"],
                                     "made no progress for 2 s")

    def test_level_files_and_strays(self):
        tree, _ = self.install_fake()
        stray = "libcudnn_ops_infer.so.8.4.1"
        with open(os.path.join(tree, "lib64", stray), "wb") as f:
            f.write(b"\x7fELF left behind by an older cuDNN")
        j = self.verify(tree, "--level", "files", expect=EXIT_OK)
        self.assertEqual(j.doc.get("level"), "files")
        names = [c["name"] for c in j.doc["checks"]]
        self.assertTrue(names)
        self.assertEqual([n for n in names if not n.startswith("files")], [],
                         self.listing(j.doc))
        self.check(j.doc, "files", "pass")
        self.check(j.doc, "files.strays", "warn", stray, "lib64/",
                   "another cuDNN version")
        # Files named otherwise are none of our business.
        self.assertNotIn("libcudart", self.check(j.doc, "files.strays")["detail"])

    def test_stray_name_with_control_characters(self):
        # A stray's name is the tree's, not ours: ESC, a newline and a
        # bidirectional override are shown escaped, in --json and in the
        # human lines, never raw.
        tree, _ = self.install_fake()
        stray = "libcudnn_ops_infer.so.8.4.1\x1b[2J\nFAKE: all passed\u202e"
        with open(os.path.join(tree, "lib64", stray), "wb") as f:
            f.write(b"\x7fELF left behind")
        j = self.verify(tree, "--level", "files", expect=EXIT_OK)
        detail = self.check(j.doc, "files.strays", "warn",
                            "libcudnn_ops_infer.so.8.4.1\\x1b[2J\\nFAKE",
                            "\\u{202e}")["detail"]
        for raw in ("\x1b", "\n", "\u202e"):
            self.assertNotIn(raw, detail)
        res = run(["verify", "--cuda-root", tree, "--level", "files"],
                  env=env_with(), expect=EXIT_OK)
        for raw in ("\x1b", "\u202e"):
            self.assertNotIn(raw, res.out + res.err)
        lines = [ln for ln in (res.out + res.err).splitlines()
                 if "libcudnn_ops_infer.so.8.4.1" in ln]
        self.assertEqual(len(lines), 1, res.out + res.err)
        self.assertNotIn("FAKE", "".join(
            ln for ln in (res.out + res.err).splitlines()
            if "libcudnn_ops_infer" not in ln))

    def test_level_files_changed_file(self):
        tree, _ = self.install_fake()
        with open(os.path.join(tree, "include/cudnn_version.h"), "ab") as f:
            f.write(b"/* edited */\n")
        j = self.verify(tree, "--level", "files", expect=EXIT_CHECK)
        self.check(j.doc, "files.changed", "fail", "include/cudnn_version.h")
        self.check(j.doc, "files", "fail", "reinstall")

    def test_no_receipt(self):
        tree, _ = self.install_fake()
        copy = self.new_tree("copy")
        # Copy by hand what install put there (symlinks stay symlinks).
        for rel in cddtest.receipt_files(cddtest.read_receipt(tree)):
            src, dst = os.path.join(tree, rel), os.path.join(copy, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            if os.path.islink(src):
                os.symlink(os.readlink(src), dst)
            else:
                shutil.copy2(src, dst)
        j = self.verify(copy, expect=EXIT_ENV)
        err = self.assertError(j, EXIT_ENV, "NOTFOUND")
        self.assertIn("--manifest", err["message"])
        self.assertIn("no receipt", err["message"])
        self.assertEqual(j.doc["checks"], [])

        manifest = fakecudnn.archive("ok").manifest
        j = self.verify(copy, "--manifest", manifest, expect=EXIT_OK)
        self.check(j.doc, "files", "pass", "as the manifest says")
        self.check(j.doc, "files.strays", "pass")
        self.assertLoadPasses(j.doc)
        self.check(j.doc, "load.version", "pass")
        self.assertFalse(os.path.exists(os.path.join(copy, cddtest.STATE)),
                         "verify must not write into the tree")

        os.unlink(os.path.join(copy, "lib64/libcudnn_ops_infer.so.8.5.0"))
        j = self.verify(copy, "--manifest", manifest, "--level", "files",
                        expect=EXIT_CHECK)
        self.check(j.doc, "files.manifest", "fail",
                   "lib64/libcudnn_ops_infer.so.8.5.0")

    def test_bad_level(self):
        tree = self.new_tree()
        j = self.verify(tree, "--level", "bogus", expect=EXIT_USAGE)
        err = self.assertError(j, EXIT_USAGE, "USAGE")
        self.assertIn("bogus", err["message"])
        r = run(["verify", "--cuda-root", tree, "--level", "bogus"],
                env=env_with(), expect=EXIT_USAGE)
        self.assertIn("--level", r.err)


class Planted(VerifyCase):
    """Issue 18, from the attacker's side: an account that can write the
    tree plants a library whose ELF constructor writes a marker file, with
    the original's size, mode and mtime. verify and install's closing
    verify never load it (the marker never appears), and say what changed.
    A thread swapping the file between the good and the planted bytes while
    verify runs in a loop never gets its code run either."""

    OPS = "libcudnn_ops_infer"

    def setUp(self):
        super(Planted, self).setUp()
        self.marker = os.path.join(self.scratch("marker"), "ran")
        # The private copies' folder lands here, so that its removal shows.
        self.tmpdir = self.scratch("tmpdir")

    def assertNotRun(self):
        self.assertFalse(os.path.exists(self.marker),
                         "the planted library's constructor ran")

    def assertCopiesRemoved(self):
        self.assertEqual(os.listdir(self.tmpdir), [],
                         "the private copies were left behind")

    def run_verify(self, tree, expect=None, **env):
        env.setdefault("LD_LIBRARY_PATH", os.path.join(tree, "lib64"))
        env["TMPDIR"] = self.tmpdir
        return self.verify(tree, "--level", "load", expect=expect, env=env)

    def test_planted_sub_library_never_loaded(self):
        """The tree's folder is on LD_LIBRARY_PATH, so a library loaded from
        there (or one needing it by name) would run the planted code."""
        tree, _ = self.install_fake()
        fakecudnn.plant(tree, self.OPS, self.marker)
        j = self.run_verify(tree, expect=EXIT_CHECK)
        self.assertNotRun()
        self.assertCopiesRemoved()
        self.check(j.doc, "files.changed", "fail",
                   "lib64/libcudnn_ops_infer.so.8.5.0")
        lib = self.OPS + ".so.8"
        self.check(j.doc, "load.open " + lib, "skip",
                   "changed since install, not loaded")
        self.check(j.doc, "load.check " + lib, "skip",
                   "changed since install, not loaded")
        # cnn_infer needs it by name: the loader would search for it.
        self.check(j.doc, "load.open libcudnn_cnn_infer.so.8", "skip",
                   "it needs " + lib, "was not proven")
        others = [l for l in ALL_LIBS
                  if l not in (lib, "libcudnn_cnn_infer.so.8")]
        for other in others:
            self.check(j.doc, "load.open " + other, "pass", "proven")
        self.check(j.doc, "load.version", "pass")

    def test_planted_main_library_never_loaded(self):
        tree, _ = self.install_fake()
        fakecudnn.plant(tree, "libcudnn", self.marker)
        j = self.run_verify(tree, expect=EXIT_CHECK)
        self.assertNotRun()
        self.check(j.doc, "load.open " + MAIN, "skip",
                   "changed since install, not loaded")
        self.check(j.doc, "load.version", "skip",
                   "changed since install, not loaded")

    def test_reinstall_never_runs_planted(self):
        """Same size and mtime: the re-install's fast path may call the file
        unchanged; its closing verify still hashes what it loads. Either the
        install repairs the file or it reports it -- the code never runs."""
        tree, _ = self.install_fake()
        path = fakecudnn.plant(tree, self.OPS, self.marker)
        fx = fakecudnn.archive("ok")
        env = env_with(LD_LIBRARY_PATH=os.path.join(tree, "lib64"),
                       TMPDIR=self.tmpdir)
        j = run_json(fx.install_args(tree), env=env,
                     expect=(EXIT_OK, EXIT_CHECK))
        self.assertNotRun()
        self.assertCopiesRemoved()
        with open(path, "rb") as f, \
                open(fakecudnn.sub_library("ops_infer"), "rb") as g:
            repaired = f.read() == g.read()
        if j.rc == EXIT_CHECK:
            self.assertFalse(repaired)
            self.check(j.doc, "load.open " + self.OPS + ".so.8", "skip",
                       "changed since install, not loaded")
        else:
            self.assertTrue(repaired, "install passed with the planted file")

    def test_soname_resolves_to_the_proven_copy(self):
        """libcudnn_cnn_infer needs libcudnn_ops_infer.so.8 by name. A
        planted copy of that name earlier on LD_LIBRARY_PATH is what the
        loader would pick for a bare name -- yet the proven copy loaded
        first answers the name (glibc matches loaded sonames), so it never
        runs. The tree is intact: everything passes."""
        tree, _ = self.install_fake()
        elsewhere = self.scratch("elsewhere")
        data = fakecudnn.planted_library(self.OPS, self.marker)
        with open(os.path.join(elsewhere, self.OPS + ".so.8"), "wb") as f:
            f.write(data)
        j = self.run_verify(tree, expect=EXIT_OK, LD_LIBRARY_PATH=(
            elsewhere + ":" + os.path.join(tree, "lib64")))
        self.assertNotRun()
        self.check(j.doc, "load.search " + self.OPS + ".so.8", "warn",
                   "BEFORE ours")
        self.assertLoadPasses(j.doc)

    def test_concurrent_swap_never_runs_planted(self):
        """A thread flips the installed file between the good and the
        planted bytes (same size, mode, mtime; renamed over it) as fast as
        it can while verify runs 50 times, then install (re-install with
        its closing verify) 10 times."""
        import threading
        tree, _ = self.install_fake()
        real = os.path.join(tree, "lib64", self.OPS + ".so.8.5.0")
        st = os.stat(real)
        stage = self.scratch("stage")
        good, bad = os.path.join(stage, "good"), os.path.join(stage, "bad")
        shutil.copyfile(real, good)
        with open(bad, "wb") as f:
            f.write(fakecudnn.planted_library(self.OPS, self.marker,
                                              st.st_size))
        for p in (good, bad):
            os.chmod(p, st.st_mode & 0o7777)
            os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        # The flips rename within the tree's folder (same filesystem).
        tmp = real + ".flip"
        stop = threading.Event()
        flips = [0]

        def swapper():
            while not stop.is_set():
                src = bad if flips[0] % 2 == 0 else good
                shutil.copyfile(src, tmp)
                os.chmod(tmp, st.st_mode & 0o7777)
                os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
                os.replace(tmp, real)
                flips[0] += 1

        t = threading.Thread(target=swapper)
        t.start()
        outcomes = {"proven": 0, "changed": 0}
        try:
            for _ in range(50):
                j = self.run_verify(tree, expect=(EXIT_OK, EXIT_CHECK))
                c = self.checks(j.doc, "load.open " + self.OPS + ".so.8")
                if c and c[0]["status"] == "pass":
                    outcomes["proven"] += 1
                else:
                    outcomes["changed"] += 1
                self.assertNotRun()
            fx = fakecudnn.archive("ok")
            env = env_with(LD_LIBRARY_PATH=os.path.join(tree, "lib64"),
                           TMPDIR=self.tmpdir)
            for _ in range(10):
                run_json(fx.install_args(tree), env=env,
                         expect=(EXIT_OK, EXIT_CHECK, 3, 4))
                self.assertNotRun()
        finally:
            stop.set()
            t.join()
        sys.stderr.write("\n  swap: %d flips, verify runs: %d loaded the "
                         "proven bytes, %d refused changed bytes\n"
                         % (flips[0], outcomes["proven"], outcomes["changed"]))
        self.assertGreater(flips[0], 50)
        self.assertGreater(outcomes["changed"], 0,
                           "the swap never hit a verify run: no evidence")
        self.assertNotRun()
        self.assertCopiesRemoved()


class StrictModes(VerifyCase):
    """Issue 18: folders another account can write (sshd's StrictModes):
    reported with the fix, and nothing loaded from them."""

    def test_world_writable_library_folder(self):
        tree, _ = self.install_fake()
        lib64 = os.path.join(tree, "lib64")
        os.chmod(lib64, 0o777)
        j = self.verify(tree, "--level", "load", expect=EXIT_OK)
        c = self.check(j.doc, "load.trust", "warn", lib64,
                       "writable by every account", "StrictModes")
        fixes = c.get("fixes") or []
        self.assertTrue(any(f["command"].endswith("chmod o-w " + lib64)
                            for f in fixes), c)
        # Our libraries still load: from their proven private copies.
        self.assertLoadPasses(j.doc)
        os.chmod(lib64, 0o755)
        j = self.verify(tree, "--level", "load", expect=EXIT_OK)
        self.check(j.doc, "load.trust", "pass")

    def test_dependency_from_untrusted_folder_not_loaded(self):
        """libcudnn_adv_infer needs libcublasLt.so.11, which the loader
        would take from a world-writable folder on LD_LIBRARY_PATH: not
        loaded, with the reason; the others load."""
        tree, _ = self.install_fake("missing_dep")
        loose = self.scratch("loose")
        shutil.copy(os.path.join(fakecudnn.cublaslt_stub(),
                                 fakecudnn.MISSING_DEP), loose)
        os.chmod(loose, 0o777)
        j = self.verify(tree, "--level", "load", expect=EXIT_OK,
                        env={"LD_LIBRARY_PATH": loose})
        lib = "libcudnn_%s.so.8" % fakecudnn.MISSING_DEP_SUB
        self.check(j.doc, "load.deps " + lib, "pass", fakecudnn.MISSING_DEP)
        self.check(j.doc, "load.open " + lib, "skip", fakecudnn.MISSING_DEP,
                   loose, "writable by every account")
        self.assertLoadPasses(j.doc, libs=[l for l in ALL_LIBS if l != lib])
        os.chmod(loose, 0o755)
        j = self.verify(tree, "--level", "load", expect=EXIT_OK,
                        env={"LD_LIBRARY_PATH": loose})
        self.check(j.doc, "load.open " + lib, "pass")

    def test_untrusted_dependency_refused_when_memory_runs_out(self):
        """Fail closed: with the N-th allocation failing (failmalloc, for N
        spread over all of one verify's allocations), a dependency that the
        loader would take from a world-writable folder is never loaded (its
        planted constructor never runs), and each run ends in a verdict or
        out of memory, not a crash. Then, with the folder made safe, the
        same planted library does load: the marker can appear."""
        shim = fakecudnn.failmalloc_shim()
        with open(cddtest.BIN, "rb") as f:
            data = f.read()
        # ASan brings its own allocator (and must come first in the
        # process): the shim cannot run under it.
        sanitized = b"__asan_init" in data or b"libasan" in data
        # A wrapper (valgrind's, scripts/valgrind.sh) brings its allocator
        # too, and the shim never sees the binary's calls.
        wrapped = not data.startswith(b"\x7fELF")
        if not shim or sanitized or wrapped or not sys.platform.startswith("linux"):
            self.skipTest("needs glibc's malloc and the unsanitized binary "
                          "itself (no sanitizer, no wrapper such as valgrind)")
        tree, _ = self.install_fake("missing_dep")
        marker = os.path.join(self.scratch("marker"), "ran")
        loose = fakecudnn.planted_dependency(fakecudnn.MISSING_DEP, marker)
        os.chmod(loose, 0o777)
        count = os.path.join(self.scratch("count"), "out")
        args = ["verify", "--cuda-root", tree, "--level", "load"]
        env = {"LD_LIBRARY_PATH": loose, "LD_PRELOAD": shim,
               "TMPDIR": self.scratch("tmp")}
        self.verify(tree, "--level", "load", expect=EXIT_OK,
                    env=dict(env, CDD_FAILMALLOC="count",
                             CDD_FAILMALLOC_OUT=count))
        with open(count) as f:
            total = int(f.read().split()[1])
        self.assertGreater(total, 100)
        # About 400 trials in make test; CDD_FAILMALLOC_ALL=1 (by hand)
        # fails every one of them in turn.
        step = 1 if os.environ.get("CDD_FAILMALLOC_ALL") else max(1, total // 400)
        seen = {}
        for n in range(1, total + 1, step):
            r = run(args, env=env_with(CDD_FAILMALLOC=str(n), **env))
            seen[r.rc] = seen.get(r.rc, 0) + 1
            self.assertIn(r.rc, (EXIT_OK, EXIT_CHECK, EXIT_ENV),
                          "allocation %d: exit %d\n%s" % (n, r.rc, r.err))
            self.assertFalse(os.path.exists(marker),
                             "allocation %d failing: the planted dependency "
                             "was loaded\n%s" % (n, r.err))
        sys.stderr.write("\n  %d allocations, failed in turn at a step of "
                         "%d: exits %r\n" % (total, step, seen))
        self.assertGreater(seen.get(EXIT_ENV, 0), 0)
        os.chmod(loose, 0o755)
        self.verify(tree, "--level", "load", expect=EXIT_OK,
                    env={"LD_LIBRARY_PATH": loose})
        self.assertTrue(os.path.exists(marker),
                        "a trusted folder's library did not load: the "
                        "marker proves nothing")


if __name__ == "__main__":
    cddtest.main()
