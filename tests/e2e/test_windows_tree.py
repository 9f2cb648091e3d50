"""The tree handle on the Windows build (under Wine in CI): a Windows-layout
tree whose bin is a link inside the tree installs and uninstalls exactly; a
bin that leads out of the tree is refused (the final path of the folder
handle is not beneath the root) with nothing written there; a destination
that exists under another case (bin\\CUDNN64_8.DLL) is replaced, not
doubled, and uninstall brings its bytes back. Under Wine, links are Unix
symlinks (what its filesystem allows); Wine shows them to the program as
the folders they lead to, so the final-path check is what refuses them.

Runs only against the Windows executable (CDD_WINDOWS=1)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import FIX, WINDOWS, CddTestCase, run_json  # noqa: E402
from test_windows_layout import ON_WINDOWS_BUILD, tree_state, win  # noqa: E402


@unittest.skipUnless(ON_WINDOWS_BUILD,
                     "Windows build only (CDD_WINDOWS=1: make test-windows)")
class WindowsTree(CddTestCase):

    def setUp(self):
        self.base = self.scratch("base")
        self.root = os.path.join(self.base, "CUDA", "v11.6")
        self.outside = os.path.join(self.base, "outside")
        os.makedirs(os.path.join(self.outside, "bin"))
        with open(os.path.join(self.outside, "sentinel.txt"), "w") as f:
            f.write("sentinel\n")
        cddtest.make_cuda_tree(self.root, platform=WINDOWS)
        self.outside_before = cddtest.snapshot(self.outside)

    def args(self, *cmd):
        return list(cmd) + ["--cuda-root", win(self.root)]

    def install(self, expect=0):
        return run_json(self.args("install") +
                        ["--manifest", win(FIX.windows.manifest_path),
                         "--archive", win(FIX.windows.path), "--no-verify"],
                        expect=expect)

    def assertOutsideUntouched(self):
        self.assertEqual(cddtest.snapshot(self.outside), self.outside_before)

    def test_bin_linked_inside_the_tree(self):
        inner = os.path.join(self.root, "targets", "win", "bin")
        os.makedirs(os.path.dirname(inner))
        os.rename(os.path.join(self.root, "bin"), inner)
        os.symlink(os.path.join("targets", "win", "bin"),
                   os.path.join(self.root, "bin"))
        before = tree_state(self.root)
        j = self.install()
        self.assertIs(j.doc["changed"], True)
        self.assertTrue(os.path.isfile(os.path.join(inner, "cudnn64_8.dll")))
        self.assertEqual(os.readlink(os.path.join(self.root, "bin")),
                         os.path.join("targets", "win", "bin"))
        run_json(self.args("status", "--check"), expect=0)
        run_json(self.args("uninstall"), expect=0)
        self.assertEqual(tree_state(self.root), before)
        self.assertOutsideUntouched()

    def test_bin_leading_out_is_refused(self):
        bin_ = os.path.join(self.root, "bin")
        for n in os.listdir(bin_):
            os.rename(os.path.join(bin_, n), os.path.join(self.outside, "bin", n))
        os.rmdir(bin_)
        os.symlink(os.path.join(self.outside, "bin"), bin_)
        self.outside_before = cddtest.snapshot(self.outside)
        before = tree_state(self.root)
        j = self.install(expect=None)
        self.assertEqual(j.rc, 3, j.err)
        self.assertEqual(j.doc["error"]["code"], "UNSAFE")
        self.assertIn("out of the tree", j.doc["error"]["message"])
        self.assertEqual(tree_state(self.root), before)
        self.assertOutsideUntouched()

    def test_case_variant_replaced_not_doubled(self):
        old = b"MZ old upper-case copy"
        with open(os.path.join(self.root, "bin", "CUDNN64_8.DLL"), "wb") as f:
            f.write(old)
        j = self.install()
        plan = cddtest.plan_of(j.doc)
        self.assertEqual(plan.get("bin/cudnn64_8.dll"), "replace", plan)
        bin_ = os.path.join(self.root, "bin")
        same = [n for n in os.listdir(bin_) if n.lower() == "cudnn64_8.dll"]
        self.assertEqual(len(same), 1, same)
        with open(os.path.join(bin_, same[0]), "rb") as f:
            self.assertEqual(cddtest.sha256_bytes(f.read()),
                             FIX.windows.expected("cuda")["bin/cudnn64_8.dll"][1])
        run_json(self.args("uninstall"), expect=0)
        same = [n for n in os.listdir(bin_) if n.lower() == "cudnn64_8.dll"]
        self.assertEqual(len(same), 1, same)
        with open(os.path.join(bin_, same[0]), "rb") as f:
            self.assertEqual(f.read(), old)
        self.assertOutsideUntouched()


if __name__ == "__main__":
    cddtest.main()
