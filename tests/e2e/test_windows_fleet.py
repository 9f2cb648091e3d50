"""Fleet features against the Windows executable (CDD_WINDOWS=1, under Wine
or natively): `install --with zlibwapi` puts a real (fake, cross-built)
zlibwapi.dll beside the cuDNN DLLs that import it, and verify's dependency
and load checks then pass; `env --shell cmd` output run by cmd.exe sets
the variables it says."""

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fakecudnn_win  # noqa: E402
import fleetfix  # noqa: E402
from cddtest import (EXIT_OK, WINDOWS, CddTestCase, make_cuda_tree,  # noqa: E402
                     run, run_json)
from fakecudnn_win import ZLIB  # noqa: E402

ON_WINDOWS_BUILD = os.environ.get("CDD_WINDOWS") == "1"
UNDER_WINE = ON_WINDOWS_BUILD and os.name != "nt"
OPS = fakecudnn_win.dll_name("ops_infer")


def win(path):
    path = os.path.abspath(path)
    return "Z:" + path.replace("/", "\\") if UNDER_WINE else path


@unittest.skipUnless(ON_WINDOWS_BUILD,
                     "Windows build only (CDD_WINDOWS=1: make test-windows)")
class WindowsFleet(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(WindowsFleet, cls).setUpClass()
        why = fakecudnn_win.problem()
        if why:
            raise unittest.SkipTest(why)

    def new_tree(self, name):
        root = os.path.join(self.scratch(name), "Program Files", "CUDA",
                            "v11.6")
        os.makedirs(os.path.dirname(root))
        return make_cuda_tree(root, platform=WINDOWS)

    def test_with_zlibwapi_then_verify_deps_pass(self):
        tree = self.new_tree("zlib")
        fx = fakecudnn_win.archive("zlibwapi")
        with open(fakecudnn_win.zlibwapi_stub(), "rb") as f:
            dll = f.read()
        d = self.scratch("comp")
        z = fleetfix.ZlibZip(d, dll=dll)
        import json
        with open(fx.manifest) as f:
            doc = json.load(f)
        doc["components"] = [fleetfix.component(z)]
        man = cddtest.write_json(os.path.join(d, "m.json"), doc)
        env = {"WINEPATH": None, "CUDNN_DEPLOY_DRIVER_LIB": None}
        res = run_json(["install", "--cuda-root", win(tree), "--manifest",
                        win(man), "--archive", win(fx.path), "--with",
                        "zlibwapi=" + win(z.path), "--no-verify"],
                       env=env, expect=EXIT_OK)
        self.assertTrue(os.path.isfile(os.path.join(tree, "bin", ZLIB)))
        self.assertTrue(res.doc["changed"])
        v = run_json(["verify", "--cuda-root", win(tree), "--level", "load"],
                     env=env, expect=None)
        checks = {c["name"]: c for c in v.doc["checks"]}
        listing = "\n".join("%s %s: %s" % (c["status"], c["name"],
                                           c["detail"])
                            for c in v.doc["checks"])
        for name in ("load.deps " + OPS, "load.open " + OPS,
                     "load.check " + OPS):
            self.assertEqual(checks[name]["status"], "pass", listing)
        self.assertIn(ZLIB, checks["load.deps " + OPS]["detail"], listing)
        self.assertEqual(v.rc, EXIT_OK, listing)

    def test_env_cmd_output_runs_in_cmd(self):
        wine_run = os.environ.get("CDD_WINE_RUN")
        if UNDER_WINE and not wine_run:
            self.skipTest("no CDD_WINE_RUN to start cmd.exe under Wine")
        tree = self.new_tree("env cmd & (x86)")
        # A batch file: the batch form ('%' as "%%").
        out = run(["env", "--cuda-root", win(tree), "--shell", "cmd-batch"],
                  expect=0).out
        bat = os.path.join(self.scratch("bat"), "t.bat")
        with open(bat, "w", newline="\r\n") as f:
            # `set NAME` prints NAME=value safely (an echo of a value with
            # '&' in it would run the rest as a command).
            f.write("@echo off\n" + out + "set CUDA_PATH\nset CUDA_HOME\nset PATH\n")
        cmd = ["cmd", "/c", win(bat)]
        if UNDER_WINE:
            cmd = [wine_run] + cmd
        # Output into a file, not a pipe: a Wine server or service this
        # wine starts (the previous one may have just timed out) would
        # inherit a pipe and hold it open long after cmd has exited.
        got = os.path.join(os.path.dirname(bat), "out.txt")
        with open(got, "wb") as o:
            subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=o,
                           timeout=120)
        with open(got, "rb") as o:
            text = o.read().decode("utf-8", "replace").replace("\r", "")
        lines = {l.split("=", 1)[0]: l.split("=", 1)[1]
                 for l in text.splitlines() if "=" in l}
        self.assertEqual(lines.get("CUDA_PATH"), win(tree), text)
        self.assertEqual(lines.get("CUDA_HOME"), win(tree), text)
        self.assertTrue(lines.get("PATH", "").startswith(win(tree) +
                                                         "\\bin;"), text)

    def test_env_powershell_text(self):
        tree = self.new_tree("ps")
        out = run(["env", "--cuda-root", win(tree), "--shell", "powershell"],
                  expect=0).out
        self.assertIn("$env:CUDA_PATH = '%s'" % win(tree), out)
        self.assertIn("$env:PATH = '%s\\bin'" % win(tree), out)
        pwsh = shutil.which("pwsh") or shutil.which("powershell")
        if not pwsh:
            return  # no PowerShell here: the text is what we can check
        p = subprocess.run([pwsh, "-NoProfile", "-Command",
                            out + "\nWrite-Output $env:CUDA_PATH"],
                           stdout=subprocess.PIPE, timeout=120)
        self.assertEqual(p.stdout.decode().strip().splitlines()[-1],
                         win(tree))


if __name__ == "__main__":
    cddtest.main()
