"""doctor: environment diagnosis on fake environments built under the test
folder (no GPU, no real CUDA or cuDNN needed).

The fake cuDNN libraries are 64-byte ELF headers (x86-64 shared objects as
far as the loader's search emulation looks) named as NVIDIA names them,
libcudnn.so.8.5.0 with the libcudnn.so.8 symlink: doctor reads versions from
file names and headers, never by loading, so that is all it needs. Every run
gets a controlled environment: PATH, LD_LIBRARY_PATH, HOME, conda, venv and
Python variables are set by the test, and the driver is pointed at a file
that does not exist (CUDNN_DEPLOY_DRIVER_LIB), so the host's own CUDA, cuDNN
and driver do not leak in (the host's ld.so cache and system Python folders
may still add copies; assertions only ever look for what the test made).

    CDD_BIN=build/cudnn-deploy python3 tests/e2e/test_doctor.py -v
"""

import os
import re
import shutil
import struct
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import EXIT_CHECK, EXIT_ENV, EXIT_OK  # noqa: E402

SUBS8 = ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer",
         "adv_train")
NO_DRIVER = "/nonexistent-cdd-test/libcuda.so.1"


def fake_elf():
    """An ELF64 little-endian x86-64 shared-object header: what the loader
    emulation checks before it counts a file as a candidate."""
    ident = b"\x7fELF" + bytes([2, 1, 1, 0]) + bytes(8)
    return ident + struct.pack("<HHI", 3, 62, 1) + bytes(64 - 24)


def put(path, data=b"", mode=0o644):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(path, mode)
    return path


def make_cudnn(libdir, version, subs=SUBS8, skip=()):
    """cuDNN 8 libraries as the tarball has them: libX.so.<version> real
    files and libX.so.8 symlinks."""
    os.makedirs(libdir, exist_ok=True)
    for name in ["libcudnn"] + ["libcudnn_" + s for s in subs if s not in skip]:
        real = "%s.so.%s" % (name, version)
        put(os.path.join(libdir, real), fake_elf(), 0o755)
        os.symlink(real, os.path.join(libdir, name + ".so.8"))
    return libdir


def version_header(major, minor, patch):
    return ("#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n"
            "#define CUDNN_MAJOR %d\n#define CUDNN_MINOR %d\n"
            "#define CUDNN_PATCHLEVEL %d\n#endif\n" % (major, minor, patch))


def fix_lines(c):
    """A check's fixes as the human report writes them: "fix[, label]
    (where): command", one per alternative."""
    out = []
    for f in c.get("fixes", []):
        head = "fix" + (", " + f["label"] if f.get("label") else "")
        if f.get("where"):
            head += " (%s)" % f["where"]
        out.append("%s: %s" % (head, f.get("command", f.get("unavailable"))))
    return out


def checks_of(doc):
    """{name: (status, detail)} of a --json answer; the detail followed by
    the fix lines (rendered for sh: the runs clear SHELL)."""
    return {c["name"]: (c["status"], "\n".join([c["detail"]] + fix_lines(c)))
            for c in doc["checks"]}


class DoctorCase(cddtest.CddTestCase):

    def setUp(self):
        self.dir = self.scratch("env")
        self.home = os.path.join(self.dir, "home")
        os.makedirs(self.home)

    def env(self, **kw):
        """The environment of one run: nothing from the caller's CUDA,
        cuDNN, conda or Python set-up; kw adds variables (None removes)."""
        e = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": None,
             "CUDA_HOME": None, "CUDNN_PATH": None, "CONDA_PREFIX": None,
             "VIRTUAL_ENV": None, "PYTHONPATH": None,
             "PYTHONUSERBASE": None, "HOME": self.home, "SHELL": None,
             "CUDNN_DEPLOY_DRIVER_LIB": NO_DRIVER}
        e.update(kw)
        return e

    def doctor(self, *args, **kw):
        expect = kw.pop("expect", EXIT_OK)
        res = self.cdd_json("doctor", *args, env=self.env(**kw), expect=expect)
        return res, checks_of(res.doc)

    def copies(self, doc, name):
        return [c for c in doc["cudnn_copies"] if c["name"] == name]

    def assertBefore(self, text, first, second):
        self.assertIn(first, text)
        self.assertIn(second, text)
        self.assertLess(text.index(first), text.index(second),
                        "%r should come before %r in:\n%s"
                        % (first, second, text))


class Toolkits(DoctorCase):

    def trees(self):
        a = os.path.join(self.dir, "cuda-11.6")
        b = os.path.join(self.dir, "cuda-12.1")
        cddtest.make_cuda_tree(a, version="11.6.2")
        cddtest.make_cuda_tree(b, version="12.1.1")
        return a, b

    def test_two_cuda_versions_on_path(self):
        a, b = self.trees()
        res, ck = self.doctor(
            PATH="%s/bin:%s/bin:/usr/bin:/bin" % (b, a),
            LD_LIBRARY_PATH="%s/lib64:%s/lib64" % (a, b))
        roots = {t["root"]: t for t in res.doc["toolkits"]}
        self.assertEqual(roots[a]["version"], "11.6.2")
        self.assertEqual(roots[b]["version"], "12.1.1")
        self.assertEqual(roots[b]["path_position"], 1)
        self.assertEqual(roots[a]["path_position"], 2)
        self.assertEqual(roots[a]["library_path_position"], 1)
        self.assertEqual(ck["cuda " + a][0], "pass")
        self.assertIn("CUDA 11.6.2", ck["cuda " + a][1])
        st, detail = ck["path PATH"]
        self.assertEqual(st, "warn", detail)
        self.assertIn("CUDA 12.1 comes first", detail)
        self.assertBefore(detail, "#1 %s/bin (CUDA 12.1)" % b,
                          "#2 %s/bin (CUDA 11.6)" % a)
        # The exact fix: put 11.6's bin first.
        self.assertIn('fix, to use CUDA 11.6 instead (this shell): '
                      'export PATH=%s/bin"${PATH:+:$PATH}"' % a, detail)
        st, detail = ck["path LD_LIBRARY_PATH"]
        self.assertEqual(st, "warn", detail)
        self.assertIn("CUDA 11.6 comes first", detail)
        self.assertIn("export LD_LIBRARY_PATH=%s/lib64" % b, detail)
        # nvcc from one CUDA, libraries from the other.
        st, detail = ck["path PATH vs LD_LIBRARY_PATH"]
        self.assertEqual(st, "warn")
        self.assertIn("CUDA 12.1", detail)
        self.assertIn("CUDA 11.6", detail)
        self.assertEqual(res.rc, EXIT_OK, "warnings do not fail")

    def test_target_wants_its_cuda_first(self):
        a, b = self.trees()
        _, ck = self.doctor("--cuda-root", a,
                            PATH="%s/bin:%s/bin:/usr/bin:/bin" % (b, a))
        st, detail = ck["path PATH"]
        self.assertEqual(st, "warn")
        self.assertIn("To use CUDA 11.6 (the target's): put %s/bin first on "
                      "PATH" % a, detail)
        self.assertIn("fix, to use CUDA 11.6 (the target's) (this shell): "
                      'export PATH=%s/bin"${PATH:+:$PATH}"' % a, detail)
        self.assertIn("CUDA 11.6.2", ck["target"][1])

    def test_one_cuda_passes(self):
        a, _ = self.trees()
        _, ck = self.doctor(PATH="%s/bin:/usr/bin:/bin" % a)
        st, detail = ck["path PATH"]
        self.assertEqual(st, "pass", detail)
        self.assertIn("CUDA 11.6 comes first", detail)

    def test_cuda_path_variables(self):
        a, b = self.trees()
        gone = os.path.join(self.dir, "uninstalled-cuda-11.8")
        res, ck = self.doctor(CUDA_PATH=a, CUDA_PATH_V12_1=b,
                              CUDA_PATH_V11_8=gone, CUDA_PATH_V11_7=a)
        roots = {t["root"]: t for t in res.doc["toolkits"]}
        self.assertIn("CUDA_PATH", roots[a]["found_by"])
        self.assertIn("CUDA_PATH_V12_1", roots[b]["found_by"])
        st, detail = ck["env CUDA_PATH"]
        self.assertEqual(st, "warn")
        self.assertIn("CUDA_PATH_V11_8=%s names no folder" % gone, detail)
        self.assertIn("CUDA_PATH_V11_7=%s is a CUDA 11.6 tree, not 11.7" % a,
                      detail)
        self.assertNotIn("CUDA_PATH_V12_1=", detail)

    def test_unknown_version_tree(self):
        c = os.path.join(self.dir, "cuda-x")
        cddtest.make_cuda_tree(c, version="11.6.2", source="none")
        _, ck = self.doctor(PATH="%s/bin:/usr/bin:/bin" % c)
        st, detail = ck["cuda " + c]
        self.assertEqual(st, "warn")
        self.assertIn("cannot tell which CUDA", detail)


class CudnnCopies(DoctorCase):

    def test_copies_in_loader_order(self):
        d1 = make_cudnn(os.path.join(self.dir, "one"), "8.5.0")
        d2 = make_cudnn(os.path.join(self.dir, "two"), "8.2.4")
        res, ck = self.doctor(LD_LIBRARY_PATH="%s:%s" % (d1, d2))
        st, detail = ck["cudnn libcudnn.so.8"]
        self.assertEqual(st, "warn", detail)
        self.assertBefore(
            detail, "1) %s/libcudnn.so.8 (8.5.0, LD_LIBRARY_PATH #1) <- the "
                    "loader picks this one" % d1,
            "2) %s/libcudnn.so.8 (8.2.4, LD_LIBRARY_PATH #2)" % d2)
        self.assertIn("export LD_LIBRARY_PATH=%s" % d2, detail)
        mains = self.copies(res.doc, "libcudnn.so.8")
        self.assertEqual([(c["path"], c["version"], c["order"], c["wins"])
                          for c in mains[:2]],
                         [(d1 + "/libcudnn.so.8", "8.5.0", 1, True),
                          (d2 + "/libcudnn.so.8", "8.2.4", 2, False)])
        self.assertEqual(mains[0]["version_from"], "file name")
        self.assertEqual(mains[0]["real"], d1 + "/libcudnn.so.8.5.0")
        st, detail = ck["cudnn libcudnn.so.8 sub-libraries"]
        self.assertEqual(st, "pass", detail)
        self.assertIn("all 6 found beside the winner in %s" % d1, detail)
        self.assertEqual(res.rc, EXIT_OK)

        # The other order: the other copy wins.
        res, ck = self.doctor(LD_LIBRARY_PATH="%s:%s" % (d2, d1))
        self.assertIn("1) %s/libcudnn.so.8 (8.2.4" % d2,
                      ck["cudnn libcudnn.so.8"][1])

    def test_same_version_copies_warn_in_the_short_output(self):
        # One copy wins over another: what programs load depends on the
        # order, so it is a warning, shown without -v (issue 23).
        d1 = make_cudnn(os.path.join(self.dir, "one"), "8.5.0")
        d2 = make_cudnn(os.path.join(self.dir, "two"), "8.5.0")
        _, ck = self.doctor(LD_LIBRARY_PATH="%s:%s" % (d1, d2))
        st, detail = ck["cudnn libcudnn.so.8"]
        self.assertEqual(st, "warn", detail)
        self.assertIn("2 copies", detail)
        self.assertIn("harmless", detail)
        r = cddtest.run(["doctor"], env=self.env(
            LD_LIBRARY_PATH="%s:%s" % (d1, d2)), expect=EXIT_OK)
        self.assertRegex(r.err, r"warn +cudnn libcudnn.so.8: 2 copies in the "
                                r"loader's order: 1\) %s/libcudnn.so.8"
                         % re.escape(d1))
        self.assertRegex(r.err, r"\(1 warning\)|, 1 warning\.")

    def test_one_copy_named_in_the_short_output(self):
        # All passed: the folded line still says which copy programs get.
        d1 = make_cudnn(os.path.join(self.dir, "one"), "8.5.0")
        r = cddtest.run(["doctor"], env=self.env(LD_LIBRARY_PATH=d1),
                        expect=EXIT_OK)
        # (The host's own cuDNN 9, if any, is named after it.)
        self.assertRegex(r.err, r"pass +cudnn: the loader picks %s/libcudnn"
                                r"\.so\.8 \(8\.5\.0\)(, its| and .*, their) "
                                r"sub-libraries beside" % re.escape(d1))
        self.assertNotRegex(r.err, r"cudnn: [0-9]+ checks passed")

    def test_mixed_sub_library_fails(self):
        # The winner lacks cnn_train; the only one found is another version.
        d1 = make_cudnn(os.path.join(self.dir, "one"), "8.5.0",
                        skip=("cnn_train",))
        d2 = make_cudnn(os.path.join(self.dir, "two"), "8.2.4")
        res, ck = self.doctor(LD_LIBRARY_PATH="%s:%s" % (d1, d2),
                              expect=EXIT_CHECK)
        st, detail = ck["cudnn libcudnn.so.8 sub-libraries"]
        self.assertEqual(st, "fail", detail)
        self.assertIn("libcudnn_cnn_train.so.8 is 8.2.4", detail)
        self.assertFalse(res.doc["ok"])

    def test_missing_sub_library_fails(self):
        d1 = make_cudnn(os.path.join(self.dir, "one"), "8.5.0",
                        skip=("adv_train",))
        _, ck = self.doctor(LD_LIBRARY_PATH=d1, expect=EXIT_CHECK)
        st, detail = ck["cudnn libcudnn.so.8 sub-libraries"]
        self.assertEqual(st, "fail")
        self.assertIn("libcudnn_adv_train.so.8 missing", detail)

    def test_version_from_header(self):
        # pip's nvidia-cudnn layout: lib/libcudnn.so.8 is the real file,
        # the version is in ../include/cudnn_version.h.
        top = os.path.join(self.dir, "wheel")
        put(os.path.join(top, "lib", "libcudnn.so.8"), fake_elf(), 0o755)
        put(os.path.join(top, "include", "cudnn_version.h"),
            version_header(8, 9, 2))
        res, ck = self.doctor(LD_LIBRARY_PATH=top + "/lib", expect=EXIT_CHECK)
        main = self.copies(res.doc, "libcudnn.so.8")[0]
        self.assertEqual((main["version"], main["version_from"]),
                         ("8.9.2", "cudnn_version.h"))
        # No sub-libraries anywhere: cuDNN 8 would abort at first use.
        self.assertEqual(ck["cudnn libcudnn.so.8 sub-libraries"][0], "fail")

    def test_no_cudnn_anywhere(self):
        res, ck = self.doctor()
        st, detail = ck["cudnn"] if "cudnn" in ck else ("absent", "")
        if not self.copies(res.doc, "libcudnn.so.9"):
            self.assertEqual(st, "warn", detail)
            self.assertIn("no cuDNN", detail)


class Shadowing(DoctorCase):

    def test_conda_copy_shadows(self):
        d1 = make_cudnn(os.path.join(self.dir, "system"), "8.5.0")
        conda = os.path.join(self.dir, "conda-env")
        cddtest.make_prefix(conda)
        make_cudnn(os.path.join(conda, "lib"), "8.2.1")
        res, ck = self.doctor(LD_LIBRARY_PATH=d1, CONDA_PREFIX=conda)
        st, detail = ck["conda libcudnn.so.8"]
        self.assertEqual(st, "warn", detail)
        self.assertIn("has its own cuDNN 8.2.1 at %s/lib/libcudnn.so.8"
                      % conda, detail)
        self.assertIn("shadows the loader's winner copy %s/libcudnn.so.8 "
                      "(8.5.0)" % d1, detail)
        self.assertIn("conda remove cudnn", detail)
        self.assertIn("cudnn-deploy install --prefix %s" % conda, detail)
        where = {c["path"]: c["where"]
                 for c in self.copies(res.doc, "libcudnn.so.8")}
        self.assertEqual(where[conda + "/lib/libcudnn.so.8"], "conda")
        self.assertEqual(where[d1 + "/libcudnn.so.8"], "search path")

        # Targeting the conda environment itself: no shadowing there.
        _, ck = self.doctor("--prefix", conda, LD_LIBRARY_PATH=d1,
                            CONDA_PREFIX=conda)
        self.assertEqual(ck["conda libcudnn.so.8"][0], "pass")
        self.assertIn("is the target", ck["conda libcudnn.so.8"][1])
        # ... but the loader still picks the other copy first.
        st, detail = ck["target.shadow libcudnn.so.8"]
        self.assertEqual(st, "warn")
        self.assertIn("the loader picks %s/libcudnn.so.8 (8.5.0" % d1, detail)

    def test_python_packages(self):
        d1 = make_cudnn(os.path.join(self.dir, "system"), "8.5.0")
        venv = os.path.join(self.dir, "venv")
        site = os.path.join(venv, "lib", "python3.10", "site-packages")
        torch = put(os.path.join(site, "torch", "lib", "libcudnn.so.8"),
                    fake_elf(), 0o755)
        extra = os.path.join(self.dir, "extra-site")
        nv = os.path.join(extra, "nvidia", "cudnn")
        put(os.path.join(nv, "lib", "libcudnn.so.8"), fake_elf(), 0o755)
        put(os.path.join(nv, "include", "cudnn_version.h"),
            version_header(8, 5, 0))
        res, ck = self.doctor(LD_LIBRARY_PATH=d1, VIRTUAL_ENV=venv,
                              PYTHONPATH=extra)
        st, detail = ck["python %s/torch/lib" % site]
        self.assertEqual(st, "warn", detail)
        self.assertIn("PyTorch in %s (VIRTUAL_ENV)" % site, detail)
        self.assertIn("version unknown", detail)
        self.assertIn("shadows the loader's winner", detail)
        st, detail = ck["python %s/nvidia/cudnn/lib" % extra]
        # The same version, but it still wins over the other: a warning.
        self.assertEqual(st, "warn", detail)
        self.assertIn("same version", detail)
        by_path = {c["path"]: c for c in self.copies(res.doc, "libcudnn.so.8")}
        self.assertEqual(by_path[torch]["where"], "python package")
        self.assertEqual(by_path[torch]["origin"], "torch (VIRTUAL_ENV)")
        self.assertEqual(by_path[nv + "/lib/libcudnn.so.8"]["version"], "8.5.0")

    def test_venv_found_through_path(self):
        # A venv used only through PATH (no VIRTUAL_ENV), as in container
        # images: its python3 leads to its site-packages.
        venv = os.path.join(self.dir, "venv")
        put(os.path.join(venv, "bin", "python3"), "#!/bin/sh\n", 0o755)
        put(os.path.join(venv, "pyvenv.cfg"), "home = /usr/bin\n")
        site = os.path.join(venv, "lib", "python3.12", "site-packages")
        nv = os.path.join(site, "nvidia", "cudnn")
        make_cudnn(os.path.join(nv, "lib"), "8.9.7")
        d1 = make_cudnn(os.path.join(self.dir, "system"), "8.5.0")
        _, ck = self.doctor(PATH="%s/bin:/usr/bin:/bin" % venv,
                            LD_LIBRARY_PATH=d1)
        st, detail = ck["python %s/nvidia/cudnn/lib" % site]
        self.assertEqual(st, "warn", detail)
        self.assertIn("pip's nvidia-cudnn package in %s (python3 on PATH) "
                      "has its own cuDNN 8.9.7" % site, detail)


class Variables(DoctorCase):

    def test_cudnn_path(self):
        top = os.path.join(self.dir, "cudnn")
        make_cudnn(os.path.join(top, "lib"), "8.5.0")
        _, ck = self.doctor(CUDNN_PATH=top)
        st, detail = ck["env CUDNN_PATH"]
        self.assertEqual(st, "warn")
        self.assertIn("ignored by the dynamic loader", detail)
        self.assertIn("export LD_LIBRARY_PATH=%s/lib" % top, detail)
        # With its lib on the search path, it is only information.
        _, ck = self.doctor(CUDNN_PATH=top, LD_LIBRARY_PATH=top + "/lib")
        self.assertEqual(ck["env CUDNN_PATH"][0], "pass")
        _, ck = self.doctor(CUDNN_PATH=os.path.join(self.dir, "nothing"))
        self.assertIn("names no folder", ck["env CUDNN_PATH"][1])

    def test_no_driver_is_a_skip(self):
        res, ck = self.doctor()
        st, detail = ck["driver"]
        self.assertEqual(st, "skip")
        self.assertIn("no NVIDIA driver found", detail)
        self.assertEqual(res.rc, EXIT_OK)
        self.assertEqual(res.doc["driver"]["found"], False)
        # The human form: one line per finding on stderr, nothing on stdout.
        out = self.cdd("doctor", env=self.env(), expect=EXIT_OK)
        self.assertEqual(out.out, "")
        self.assertIn("skip  driver: no NVIDIA driver found", out.err)


class Target(DoctorCase):

    def test_libdir_not_on_path(self):
        ws = self.workspace()
        lib64 = ws.path("lib64")
        _, ck = self.doctor("--cuda-root", ws.tree)
        st, detail = ck["target.search"]
        self.assertEqual(st, "warn")
        self.assertIn("%s is not on the loader's search path" % lib64, detail)
        self.assertIn('export LD_LIBRARY_PATH=%s"${LD_LIBRARY_PATH:+:'
                      '$LD_LIBRARY_PATH}"' % lib64, detail)
        self.assertIn("fix (system-wide): printf '%%s\\n' %s | sudo tee "
                      "/etc/ld.so.conf.d/cudnn.conf >/dev/null && sudo "
                      "ldconfig" % lib64, detail)
        self.assertIn("/etc/ld.so.conf.d", detail)
        _, ck = self.doctor("--cuda-root", ws.tree,
                            LD_LIBRARY_PATH="/nowhere:" + lib64)
        st, detail = ck["target.search"]
        self.assertEqual(st, "pass", detail)
        self.assertIn("#2", detail)

    def test_libdir_reached_through_symlink(self):
        ws = self.workspace(targets_links=True)
        real = ws.path("targets/x86_64-linux/lib")
        _, ck = self.doctor("--cuda-root", ws.tree, LD_LIBRARY_PATH=real)
        self.assertEqual(ck["target.search"][0], "pass", ck["target.search"])

    def test_target_shadowed(self):
        ws = self.workspace()
        make_cudnn(ws.path("lib64"), "8.5.0")
        other = make_cudnn(os.path.join(self.dir, "old"), "8.2.4")
        _, ck = self.doctor("--cuda-root", ws.tree,
                            LD_LIBRARY_PATH="%s:%s" % (other, ws.path("lib64")))
        self.assertIn("holds libcudnn.so.8 8.5.0 not installed by "
                      "cudnn-deploy", ck["target"][1])
        st, detail = ck["target.shadow libcudnn.so.8"]
        self.assertEqual(st, "warn", detail)
        self.assertIn("the loader picks %s/libcudnn.so.8 (8.2.4, "
                      "LD_LIBRARY_PATH #1), not the target's %s (8.5.0)"
                      % (other, ws.path("lib64/libcudnn.so.8")), detail)
        self.assertIn("export LD_LIBRARY_PATH=%s" % ws.path("lib64"), detail)
        # Order fixed: the target's copy wins.
        _, ck = self.doctor("--cuda-root", ws.tree,
                            LD_LIBRARY_PATH="%s:%s" % (ws.path("lib64"), other))
        self.assertEqual(ck["target.shadow libcudnn.so.8"][0], "pass")

    def test_installed_by_cudnn_deploy(self):
        ws = self.workspace()
        self.install(ws, cddtest.FIX.linux)
        _, ck = self.doctor("--cuda-root", ws.tree)
        self.assertIn("installed by cudnn-deploy", ck["target"][1])
        self.assertIn("8.5.0", ck["target"][1])

    def test_tampered_state_is_a_finding_not_a_refusal(self):
        # doctor opens the tree's root alone to read its version, so a
        # state folder it cannot trust is reported (target: fail, why and
        # the way on) with every other check still made, tree untouched.
        ws = self.workspace()
        self.install(ws, cddtest.FIX.linux)
        state = os.path.join(ws.tree, cddtest.STATE)
        elsewhere = os.path.join(self.dir, "elsewhere")
        shutil.copytree(state, elsewhere, symlinks=True)
        shutil.rmtree(state)
        os.symlink(elsewhere, state)
        before = ws.snap(ignore=())
        res, ck = self.doctor("--cuda-root", ws.tree, expect=EXIT_CHECK)
        status, detail = ck["target"]
        self.assertEqual(status, "fail", detail)
        self.assertIn("cannot be trusted", detail)
        self.assertIn("a link is not accepted", detail)
        self.assertIn("cudnn-deploy status", detail)
        self.assertIn("target.search", " ".join(ck))
        self.assertSameTree(before, ws.snap(ignore=()))
        # A receipt that is a folder: the same, naming the receipt.
        os.unlink(state)
        shutil.copytree(elsewhere, state, symlinks=True)
        receipt = os.path.join(ws.tree, cddtest.RECEIPT)
        os.unlink(receipt)
        os.mkdir(receipt)
        res, ck = self.doctor("--cuda-root", ws.tree, expect=EXIT_CHECK)
        status, detail = ck["target"]
        self.assertEqual(status, "fail", detail)
        self.assertIn("receipt.json", detail)

    def test_missing_target(self):
        res = self.cdd_json("doctor", "--cuda-root",
                            os.path.join(self.dir, "nope"), env=self.env())
        self.assertError(res, EXIT_ENV, "NOTFOUND")

    def test_two_targets_is_usage(self):
        ws = self.workspace()
        res = self.cdd_json("doctor", "--cuda-root", ws.tree, "--prefix",
                            ws.tree, env=self.env())
        self.assertError(res, 2, "USAGE")


if __name__ == "__main__":
    cddtest.main()
