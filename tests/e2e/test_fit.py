"""End-to-end tests of the fit checks (docs/verification.md, "GPU fit" and
"Bare-name loads"):

- gpu.fit in verify: catalog releases installed through `install --cudnn`
  (a TEST catalog, local look-alike archives) judged against GPUs given with
  --gpu-cc, over a matrix of releases x compute capabilities; a failing GPU
  names the newest catalog release that fits (the selection `install
  --cudnn` uses), in the text and in --json (gpu_fit*);
- load.barename in verify and python.barename in doctor: cuDNN's own
  bare-name loads of its sub-libraries, resolved by the loader's rules
  (DT_RPATH, LD_LIBRARY_PATH, DT_RUNPATH, ld.so cache), in the tree and in a
  fake Python environment with an nvidia-cudnn-cu12 wheel tree (fake
  libraries with sonames built by the C compiler where an RPATH matters);
  the pytorch/pytorch#188892 case: the wheel's 9.20 getting another
  version's libcudnn_engines_tensor_ir.so.9 from LD_LIBRARY_PATH;
- fit in doctor for a wheel's cuDNN.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from archives import tar_xz_bytes  # noqa: E402
from fixtures import linux_entries  # noqa: E402
from test_catalog import (HEADERS9, SUBLIBS9, redistrib,  # noqa: E402
                          sha256)

# Test facts (the real ones have the same shape): 8.9.7 stops at Hopper,
# 9.10 still has Maxwell, 9.13 starts at Turing.
R897, R910, R913, R920 = "8.9.7.29", "9.10.0.56", "9.13.0.50", "9.20.0.48"
FACTS = {
    "drivers": {"cuda12": {"linux": "525.60.13", "windows": "527.41"}},
    "releases": {
        "8.9.7": {"layout": "cudnn8", "matrix": "test 8.9.7",
                  "cuda12": {"cuda": "12.0-12.2", "cc": "5.0-9.0"}},
        "9.10.0": {"layout": "cudnn9", "matrix": "test 9.10.0",
                   "cuda12": {"cuda": "12.0-12.9", "cc": "5.0-12.0"}},
        "9.13.0": {"layout": "cudnn9", "matrix": "test 9.13.0",
                   "cuda12": {"cuda": "12.0-12.9", "cc": "7.5-12.0"}},
        "9.20.0": {"layout": "cudnn9", "matrix": "test 9.20.0",
                   "cuda12": {"cuda": "12.0-12.9", "cc": "7.5-12.0"}}},
    "respins": {}}

ENV = {k: None for k in ("CUDNN_DEPLOY_CATALOG", "CUDNN_DEPLOY_DRIVER_LIB",
                         "LD_LIBRARY_PATH", "VIRTUAL_ENV", "CONDA_PREFIX",
                         "PYTHONPATH", "PYTHONUSERBASE", "CUDNN_PATH")}

TENSOR_IR = "libcudnn_engines_tensor_ir.so.9"


def archive(version):
    sub = SUBLIBS9 if version.startswith("9") else (
        "ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer",
        "adv_train")
    top, entries = linux_entries(version, "12", sublibs=sub,
                                 headers=HEADERS9)
    return top + ".tar.xz", tar_xz_bytes(entries, 1)


def host_cache_names():
    """The sonames this host's ld.so cache resolves: a bare name found there
    is the host's business, and tests of "nothing else has it" use others."""
    try:
        out = subprocess.run(["ldconfig", "-p"], capture_output=True,
                             text=True, check=False).stdout
    except OSError:
        return set()
    return {line.split()[0] for line in out.splitlines()[1:] if line.strip()}


def unclaimed(names):
    """The first of names the host's cache does not resolve, or None."""
    cached = host_cache_names()
    return next((n for n in names if n not in cached), None)


SUBNAMES9 = ["libcudnn_%s.so.9" % s for s in SUBLIBS9]


def checks_of(doc):
    return {c["name"]: c for c in doc["checks"]}


def cc_compile(out, soname, rpath=None, new_dtags=False):
    """A shared library with a soname (and DT_RPATH, or with new_dtags
    DT_RUNPATH) built by the C compiler."""
    src = out + ".c"
    with open(src, "w") as f:
        f.write("int fake_%d(void) { return 0; }\n" % (abs(hash(out)) % 1000))
    cmd = ["cc", "-shared", "-fPIC", "-o", out, src,
           "-Wl,-soname," + soname]
    if rpath:
        cmd += ["-Wl,-rpath," + rpath,
                "-Wl,--enable-new-dtags" if new_dtags
                else "-Wl,--disable-new-dtags"]
    subprocess.run(cmd, check=True)
    os.unlink(src)


@unittest.skipUnless(sys.platform.startswith("linux"), "Linux loader rules")
class GpuFit(cddtest.CddTestCase):
    """gpu.fit: the matrix of releases x compute capabilities."""

    @classmethod
    def setUpClass(cls):
        cddtest.CddTestCase.setUpClass()
        cls.root = os.path.join(cddtest.WORK_ROOT, "fit-fixtures")
        shutil.rmtree(cls.root, ignore_errors=True)
        os.makedirs(cls.root)
        cls.catalog = os.path.join(cls.root, "catalog")
        os.makedirs(cls.catalog)
        cls.local = {}
        for v in (R897, R910, R913):
            name, data = archive(v)
            path = os.path.join(cls.root, name)
            with open(path, "wb") as f:
                f.write(data)
            cls.local[v] = path
            label = ".".join(v.split(".")[:3])
            doc = redistrib(label, v, {"cuda12": (name, data)})
            with open(os.path.join(cls.catalog, "redistrib_%s.json" % label),
                      "w") as f:
                json.dump(doc, f)
        with open(os.path.join(cls.catalog, "facts.json"), "w") as f:
            json.dump(FACTS, f)
        cls.trees = {}

    def tree(self, version):
        """A CUDA 12.2 tree with the catalog's cuDNN version installed (for a
        GPU every release supports)."""
        if version not in self.trees:
            ws = self.workspace(name="t" + version.replace(".", ""),
                                version="12.2.1")
            cddtest.run_json(
                ["install"] + ws.target_args +
                ["--cudnn", version, "--archive", self.local[version],
                 "--catalog", self.catalog, "--gpu-cc", "8.6", "--driver",
                 "580.65.06", "--no-verify"], env=ENV, expect=0)
            type(self).trees[version] = ws
        return self.trees[version]

    def verify(self, version, *ccs):
        ws = self.tree(version)
        args = ["verify"] + ws.target_args + ["--level", "load", "--catalog",
                                              self.catalog]
        for cc in ccs:
            args += ["--gpu-cc", cc]
        res = cddtest.run_json(args, env=ENV)
        return res.doc, checks_of(res.doc)["gpu.fit"]

    def test_matrix(self):
        # (installed, GPUs, status, newest that fits or None, words)
        cases = [
            (R913, ["8.6"], "pass", None,
             ["every GPU fits", "compute capability 8.6"]),
            (R913, ["7.5", "12.0"], "pass", None, ["sm_75 to sm_120"]),
            (R913, ["6.1"], "fail", R910,
             ["compute capability 6.1", "GPU sm_61 is older than this "
              "release supports (sm_75 and newer)"]),
            (R913, ["5.2", "9.0"], "fail", R910, ["compute capability 5.2"]),
            (R910, ["6.1"], "pass", None, ["sm_50 to sm_120"]),
            (R910, ["3.5"], "fail", None,
             ["No catalog release fits this tree's CUDA"]),
            (R897, ["8.9"], "pass", None, ["sm_50 to sm_90"]),
            # Newer than the matrix, no device code to tell: a warning.
            (R897, ["12.0"], "warn", R913,
             ["newer than this release supports", "PTX"]),
        ]
        for inst, ccs, status, newest, words in cases:
            with self.subTest(installed=inst, gpus=ccs):
                doc, chk = self.verify(inst, *ccs)
                self.assertEqual(chk["status"], status, chk["detail"])
                self.assertEqual(doc.get("gpu_fit"), status)
                self.assertEqual(doc.get("gpu_fit_basis"), "catalog")
                self.assertIn("cuDNN %s supports" % inst, chk["detail"])
                for w in words:
                    self.assertIn(w, chk["detail"])
                if newest:
                    self.assertEqual(doc.get("gpu_fit_newest"), newest)
                    self.assertIn("cudnn-deploy install --cudnn " + newest,
                                  chk["detail"])
                else:
                    self.assertNotIn("gpu_fit_newest", doc)

    def test_no_gpu_no_fit_check(self):
        """No driver and no --gpu-cc: verify's gpu layer says why; doctor
        says once that --gpu-cc names a GPU."""
        if "libcuda.so.1" in host_cache_names():
            self.skipTest("this machine has an NVIDIA driver")
        ws = self.tree(R913)
        res = cddtest.run_json(["verify"] + ws.target_args +
                               ["--level", "load", "--catalog", self.catalog],
                               env=ENV)
        self.assertNotIn("gpu.fit", checks_of(res.doc))
        self.assertNotIn("gpu_fit", res.doc)
        res = cddtest.run_json(["doctor", "--catalog", self.catalog], env=ENV)
        chk = checks_of(res.doc)["fit"]
        self.assertEqual(chk["status"], "skip")
        self.assertIn("--gpu-cc", chk["detail"])

    def test_release_not_in_catalog_is_unknown(self):
        empty = self.scratch("empty-catalog")
        with open(os.path.join(empty, "facts.json"), "w") as f:
            json.dump({"drivers": {}, "releases": {}, "respins": {}}, f)
        label = "9.10.0"
        name, data = archive(R910)
        with open(os.path.join(empty, "redistrib_%s.json" % label), "w") as f:
            json.dump(redistrib(label, R910, {"cuda12": (name, data)}), f)
        ws = self.tree(R913)
        res = cddtest.run_json(["verify"] + ws.target_args +
                               ["--level", "load", "--catalog", empty,
                                "--gpu-cc", "6.1"], env=ENV)
        chk = checks_of(res.doc)["gpu.fit"]
        self.assertEqual(chk["status"], "skip", chk["detail"])
        self.assertIn("not in the catalog", chk["detail"])

    def test_bad_gpu_cc_is_usage(self):
        ws = self.tree(R913)
        res = cddtest.run_json(["verify"] + ws.target_args +
                               ["--gpu-cc", "sm_86"], env=ENV,
                               expect=cddtest.EXIT_USAGE)
        self.assertIn("compute capability", res.doc["error"]["message"])

    def test_tree_barename_gets_another_version(self):
        """The tree's libcudnn.so.9 loads libcudnn_ops.so.9 by bare name;
        LD_LIBRARY_PATH holds a 9.14.0 copy: a warning with the fix."""
        ws = self.tree(R913)
        other = self.scratch("sys-lib")
        with open(os.path.join(other, "libcudnn_ops.so.9.14.0"), "wb") as f:
            f.write(b"\x7fELF other version")
        os.symlink("libcudnn_ops.so.9.14.0",
                   os.path.join(other, "libcudnn_ops.so.9"))
        env = dict(ENV, LD_LIBRARY_PATH=other)
        res = cddtest.run_json(["verify"] + ws.target_args +
                               ["--level", "load"], env=env)
        checks = checks_of(res.doc)
        bad = checks["load.barename libcudnn_ops.so.9"]
        self.assertEqual(bad["status"], "warn", bad["detail"])
        for w in ("LD_LIBRARY_PATH", "cuDNN 9.14.0", R913, "Fix:",
                  os.path.join(other, "libcudnn_ops.so.9")):
            self.assertIn(w, bad["detail"])
        # A name nobody else has resolves nowhere but is beside the main
        # library (this host's ld.so cache may hold real cuDNN copies: those
        # names are the host's, and warn rightly).
        free = unclaimed(n for n in SUBNAMES9 if n != "libcudnn_ops.so.9")
        if free:
            ok = checks["load.barename"]
            self.assertEqual(ok["status"], "pass", ok["detail"])
            self.assertIn("no copy on the loader's search path", ok["detail"])
            self.assertIn(free, ok["detail"])
            self.assertNotIn("load.barename " + free, checks)
        # Without the other copy, no warning for ops (unless the host has
        # one of its own).
        if "libcudnn_ops.so.9" not in host_cache_names():
            res = cddtest.run_json(["verify"] + ws.target_args +
                                   ["--level", "load"], env=ENV)
            checks = checks_of(res.doc)
            self.assertNotIn("load.barename libcudnn_ops.so.9", checks)
            self.assertIn("libcudnn_ops.so.9",
                          checks["load.barename"]["detail"])


@unittest.skipUnless(sys.platform.startswith("linux"), "Linux loader rules")
@unittest.skipUnless(shutil.which("cc"), "needs a C compiler")
class WheelEnv(cddtest.CddTestCase):
    """doctor in a Python environment with an nvidia-cudnn-cu12 wheel."""

    def make_env(self, rpath=None, new_dtags=False, name="env"):
        root = self.scratch(name)
        venv = os.path.join(root, "venv")
        site = os.path.join(venv, "lib", "python3.12", "site-packages")
        lib = os.path.join(site, "nvidia", "cudnn", "lib")
        inc = os.path.join(site, "nvidia", "cudnn", "include")
        os.makedirs(lib)
        os.makedirs(inc)
        os.makedirs(os.path.join(site, "nvidia_cudnn_cu12-%s.dist-info" % R920))
        with open(os.path.join(inc, "cudnn_version.h"), "w") as f:
            f.write("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 20\n"
                    "#define CUDNN_PATCHLEVEL 0\n")
        # A wheel has no symlinks: each library under its soname.
        cc_compile(os.path.join(lib, "libcudnn.so.9"), "libcudnn.so.9",
                   rpath=rpath, new_dtags=new_dtags)
        for s in SUBLIBS9 + ("engines_tensor_ir",):
            name = "libcudnn_%s.so.9" % s
            with open(os.path.join(lib, name), "wb") as f:
                f.write(b"\x7fELF fake " + name.encode())
        # The system's cuDNN 9.14 copy of tensor_ir on LD_LIBRARY_PATH.
        sysdir = os.path.join(root, "usr-lib")
        os.makedirs(sysdir)
        with open(os.path.join(sysdir, TENSOR_IR + ".14.0"), "wb") as f:
            f.write(b"\x7fELF system 9.14")
        os.symlink(TENSOR_IR + ".14.0", os.path.join(sysdir, TENSOR_IR))
        self.catalog = os.path.join(root, "catalog")
        os.makedirs(self.catalog)
        name, data = archive(R920)
        with open(os.path.join(self.catalog, "redistrib_9.20.0.json"),
                  "w") as f:
            json.dump(redistrib("9.20.0", R920, {"cuda12": (name, data)}), f)
        name, data = archive(R910)
        with open(os.path.join(self.catalog, "redistrib_9.10.0.json"),
                  "w") as f:
            json.dump(redistrib("9.10.0", R910, {"cuda12": (name, data)}), f)
        with open(os.path.join(self.catalog, "facts.json"), "w") as f:
            json.dump(FACTS, f)
        return venv, lib, sysdir

    def doctor(self, venv, sysdir, *extra, json_out=True, **more):
        # PATH and HOME of our own: a host's python3 on PATH or user site
        # with a wheel of its own (the GPU machine has /opt/torch/.venv
        # first on PATH) would add an environment the case did not make.
        env = dict(ENV, VIRTUAL_ENV=venv, LD_LIBRARY_PATH=sysdir,
                   PATH=self.scratch("no-python-bin"),
                   HOME=self.scratch("home"), **more)
        args = ["doctor", "--catalog", self.catalog] + list(extra)
        if json_out:
            return cddtest.run_json(args, env=env)
        return cddtest.run(args, env=env)

    def test_wheel_gets_the_system_tensor_ir(self):
        venv, lib, sysdir = self.make_env()
        res = self.doctor(venv, sysdir, "--gpu-cc", "8.6")
        checks = checks_of(res.doc)
        chk = checks["python.barename " + TENSOR_IR]
        self.assertEqual(chk["status"], "warn", chk["detail"])
        for w in ("the Python environment", R920, "cuDNN 9.14.0",
                  "LD_LIBRARY_PATH", os.path.join(sysdir, TENSOR_IR),
                  "pytorch/pytorch#188892", "Fix:"):
            self.assertIn(w, chk["detail"])
        # A sub-library nobody else has resolves to nothing else.
        free = unclaimed(SUBNAMES9)
        if free:
            self.assertNotIn("python.barename " + free, checks)
            self.assertEqual(checks["python.barename"]["status"], "pass")
            self.assertIn(free, checks["python.barename"]["detail"])
        # Shown without -v, in the human report too.
        out = self.doctor(venv, sysdir, "--gpu-cc", "8.6", json_out=False)
        self.assertIn("pytorch/pytorch#188892", out.out + out.err)

    def test_two_environments_get_names_of_their_own(self):
        """Two environments with the same bare-name problem: one check
        each, named after its site folder (JSON readers key on names)."""
        venv, lib, sysdir = self.make_env()
        conda, _, _ = self.make_env(name="conda")
        res = self.doctor(venv, sysdir, "--gpu-cc", "8.6", CONDA_PREFIX=conda)
        names = [c["name"] for c in res.doc["checks"]]
        self.assertEqual(len(names), len(set(names)), names)
        for prefix in (venv, conda):
            site = os.path.join(prefix, "lib", "python3.12", "site-packages")
            chk = checks_of(res.doc)["python.barename %s %s" % (site, TENSOR_IR)]
            self.assertEqual(chk["status"], "warn", chk["detail"])
            self.assertIn("the Python environment " + site, chk["detail"])
        self.assertNotIn("python.barename " + TENSOR_IR, names)

    def test_rpath_origin_wins_over_ld_library_path(self):
        """DT_RPATH ($ORIGIN, no RUNPATH) is searched before
        LD_LIBRARY_PATH: the wheel's own copy."""
        venv, lib, sysdir = self.make_env(rpath="$ORIGIN")
        checks = checks_of(self.doctor(venv, sysdir).doc)
        self.assertNotIn("python.barename " + TENSOR_IR, checks)
        chk = checks["python.barename"]
        self.assertEqual(chk["status"], "pass", chk["detail"])
        self.assertIn("its own copy (DT_RPATH) for", chk["detail"])
        self.assertIn(TENSOR_IR, chk["detail"])

    def test_runpath_comes_after_ld_library_path(self):
        """DT_RUNPATH is searched after LD_LIBRARY_PATH: the other copy."""
        venv, lib, sysdir = self.make_env(rpath="$ORIGIN", new_dtags=True)
        chk = checks_of(self.doctor(venv, sysdir).doc)[
            "python.barename " + TENSOR_IR]
        self.assertEqual(chk["status"], "warn", chk["detail"])
        self.assertIn("LD_LIBRARY_PATH", chk["detail"])

    def test_fit_of_the_wheel(self):
        venv, lib, sysdir = self.make_env()
        res = self.doctor(venv, sysdir, "--gpu-cc", "6.1")
        fit = checks_of(res.doc)["fit " + os.path.join(lib, "libcudnn.so.9")]
        self.assertEqual(fit["status"], "fail", fit["detail"])
        self.assertIn("cuDNN 9.20.0 supports sm_75 to sm_120 with CUDA 12",
                      fit["detail"])
        self.assertIn("cudnn-deploy install --cudnn " + R910, fit["detail"])


if __name__ == "__main__":
    cddtest.main()
