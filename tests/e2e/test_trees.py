"""Real-shaped trees and the tree handle: a Linux CUDA tree whose lib64 and
include are links into targets/x86_64-linux/ (relative, as NVIDIA ships
them, and absolute), the root named through a link (/usr/local/cuda ->
cuda-11.6), a Windows-layout tree whose bin is a link inside the tree, and
a Windows-layout tree that already holds a destination under another case
(bin/CUDNN64_8.DLL): each installs, verifies and uninstalls exactly, with
nothing outside the tree touched. Also the tree handle's refusals that
belong to the structure (a link on the way that leaves the tree, a link into
.cudnn-deploy, a backup that is not what the receipt recorded) -- the
attacker's catalogue is test_tamper.py."""

import json
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import (FIX, IGNORE_LOCK, IGNORE_LOCK_LOG, WINDOWS,  # noqa: E402
                     CddTestCase, plan_of, run_json)

LIB = "targets/x86_64-linux/lib"
INC = "targets/x86_64-linux/include"


def relocate(expected, moves):
    """Expected snapshot entries with the first folder of each path moved
    (lib64/x -> targets/x86_64-linux/lib/x)."""
    out = {}
    for p, v in expected.items():
        for frm, to in moves:
            if p == frm or p.startswith(frm + "/"):
                p = to + p[len(frm):]
                break
        out[p] = v
    return out


class TreeCase(CddTestCase):

    def assertOneErrorLine(self, j):
        """The error is one line of stderr (whatever progress preceded it)."""
        errs = [l for l in j.err.splitlines() if "error:" in l]
        self.assertEqual(len(errs), 1, j.err)
        return errs[0]

    def round_trip(self, ws, fx, expected_after, root_arg=None):
        """install, verify (files), status --check, uninstall: the tree is
        expected_after (outside the state folder) and then exactly what it
        was; outside the tree nothing changes."""
        args = ["--cuda-root", root_arg or ws.tree]
        before = ws.snap(IGNORE_LOCK_LOG)
        j = run_json(cddtest.install_args(args, fx), expect=0)
        self.assertIs(j.doc["changed"], True)
        after = cddtest.without_state(ws.snap())
        for d in list(after):
            # Folders install had to create (share/doc/cudnn...) are not
            # asserted by content.
            if after[d][0] == "dir" and d not in expected_after:
                expected_after[d] = after[d]
        self.assertSameTree(expected_after, after)
        self.cdd("verify", "--level", "files", *args, expect=0)
        self.cdd("status", "--check", *args, expect=0)
        j = self.cdd_json("uninstall", *args, expect=0)
        self.assertIs(j.doc["changed"], True)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertNoLeftovers(ws.tree)
        self.assertOutsideUntouched(ws)
        return j


class LinuxShapes(TreeCase):

    def test_lib64_and_include_linked_into_targets(self):
        ws = self.workspace(targets_links=True)
        before = cddtest.without_state(ws.snap())
        expected = dict(before)
        expected.update(relocate(FIX.linux.expected(),
                                 [("lib64", LIB), ("include", INC)]))
        self.round_trip(ws, FIX.linux, expected)
        self.assertEqual(os.readlink(ws.path("lib64")), LIB)

    def test_absolute_links_inside_the_tree(self):
        # Some installers write absolute links: they stay inside, so they are
        # followed like relative ones.
        ws = self.workspace(targets_links=True)
        for name, to in (("lib64", LIB), ("include", INC)):
            os.unlink(ws.path(name))
            os.symlink(os.path.join(ws.tree, to), ws.path(name))
        ws._outside = ws.outside_state()
        before = cddtest.without_state(ws.snap())
        expected = dict(before)
        expected.update(relocate(FIX.linux.expected(),
                                 [("lib64", LIB), ("include", INC)]))
        self.round_trip(ws, FIX.linux, expected)

    def test_root_named_through_a_link(self):
        # /usr/local/cuda -> cuda-11.6: the root is resolved once, at open;
        # the same tree answers by either name.
        ws = self.workspace(targets_links=True)
        link = os.path.join(ws.dir, "cuda")
        os.symlink("tree", link)
        ws._outside = ws.outside_state()
        before = cddtest.without_state(ws.snap())
        expected = dict(before)
        expected.update(relocate(FIX.linux.expected(),
                                 [("lib64", LIB), ("include", INC)]))
        self.round_trip(ws, FIX.linux, expected, root_arg=link)
        self.assertEqual(os.readlink(link), "tree")

    def test_link_on_the_way_that_leaves_is_refused(self):
        # include -> a folder beside the tree holding its own cudnn.h.
        ws = self.workspace()
        shutil.rmtree(ws.path("include"))
        os.symlink("../outside/include", ws.path("include"))
        ws._outside = ws.outside_state()
        before = ws.snap(IGNORE_LOCK)
        j = self.install(ws, FIX.linux, expect=None)
        self.assertError(j, 3, ("UNSAFE",))
        line = self.assertOneErrorLine(j)
        self.assertIn("tree/include", line)
        self.assertIn("leads out of the tree", line)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.assertOutsideUntouched(ws)
        self.assertNoLeftovers(ws.tree)

    def test_link_into_the_state_folder_is_refused(self):
        # lib64 -> .cudnn-deploy: installed files would land among the state.
        ws = self.workspace()
        shutil.rmtree(ws.path("lib64"))
        os.makedirs(ws.path(".cudnn-deploy"))
        os.symlink(".cudnn-deploy", ws.path("lib64"))
        before = ws.snap(IGNORE_LOCK)
        j = self.install(ws, FIX.linux, expect=None)
        self.assertError(j, 3, ("UNSAFE",))
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.assertOutsideUntouched(ws)

    def test_backup_not_as_recorded_refuses_uninstall(self):
        # An upgrade backs up the old files with their size and sha256; a
        # backup changed since is tampered state: exit 3, one line naming
        # the receipt and the record, nothing touched.
        ws = self.workspace()
        self.install(ws, FIX.linux_old)
        self.install(ws, FIX.linux)
        rc = cddtest.read_receipt(ws.tree)
        rec = [b for b in rc["backed_up"] if isinstance(b, dict) and "sha256" in b]
        self.assertTrue(rec, rc["backed_up"])
        bk = ws.path(os.path.join(cddtest.BACKUP, rc["transaction"], rec[0]["path"]))
        self.assertTrue(os.path.isfile(bk), bk)
        with open(bk, "r+b") as f:
            b = f.read(1)
            f.seek(0)
            f.write(bytes([b[0] ^ 1]))
        before = ws.snap(IGNORE_LOCK)
        j = self.cdd_json("uninstall", *ws.target_args, expect=None)
        self.assertError(j, 3, ("STATE",))
        self.assertIn("receipt.json", j.doc["error"]["message"] + j.err)
        self.assertIn("backed_up[", j.doc["error"]["message"])
        self.assertOneErrorLine(j)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.assertOutsideUntouched(ws)
        # The backup swapped for a link: the same answer.
        os.unlink(bk)
        os.symlink(os.path.join(ws.outside, "sentinel.txt"), bk)
        before = ws.snap(IGNORE_LOCK)
        j = self.cdd_json("uninstall", *ws.target_args, expect=None)
        self.assertError(j, 3, ("STATE",))
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.assertOutsideUntouched(ws)

    def test_upgrade_and_uninstall_restore_recorded_backups(self):
        # The round trip that the records must not break: old -> new ->
        # uninstall gives the old install back, byte for byte.
        ws = self.workspace(targets_links=True)
        self.install(ws, FIX.linux_old)
        old = cddtest.comparable_state(ws.tree)
        j = self.install(ws, FIX.linux)
        self.assertIn("replace", set(plan_of(j.doc).values()))
        rc = cddtest.read_receipt(ws.tree)
        for b in rc["backed_up"]:
            self.assertIsInstance(b, dict, "every backup is recorded: %r" % b)
            self.assertTrue("sha256" in b or "symlink" in b, b)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertEqual(cddtest.comparable_state(ws.tree), old)
        self.assertOutsideUntouched(ws)


class WindowsShapes(TreeCase):

    def test_bin_linked_inside_the_tree(self):
        ws = self.workspace(platform=WINDOWS)
        os.makedirs(ws.path("targets/win"))
        os.rename(ws.path("bin"), ws.path("targets/win/bin"))
        os.symlink("targets/win/bin", ws.path("bin"))
        before = cddtest.without_state(ws.snap())
        expected = dict(before)
        expected.update(relocate(FIX.windows.expected(),
                                 [("bin", "targets/win/bin")]))
        self.round_trip(ws, FIX.windows, expected)

    def test_case_variant_is_replaced_not_doubled(self):
        # The tree holds bin/CUDNN64_8.DLL (an older copy, upper case): NTFS
        # would open it as bin/cudnn64_8.dll, so it is the file to replace
        # and back up. The new file takes the manifest's name; uninstall
        # brings the old one back under its own.
        ws = self.workspace(platform=WINDOWS)
        old = b"MZ old upper-case copy"
        with open(ws.path("bin/CUDNN64_8.DLL"), "wb") as f:
            f.write(old)
        before = ws.snap(IGNORE_LOCK_LOG)
        j = self.install(ws, FIX.windows)
        plan = plan_of(j.doc)
        self.assertEqual(plan.get("bin/cudnn64_8.dll"), "replace", plan)
        names = [n for n in os.listdir(ws.path("bin")) if n.lower() == "cudnn64_8.dll"]
        self.assertEqual(names, ["cudnn64_8.dll"])
        rc = cddtest.read_receipt(ws.tree)
        paths = [b["path"] if isinstance(b, dict) else b for b in rc["backed_up"]]
        self.assertIn("bin/CUDNN64_8.DLL", paths)
        bk = ws.path(os.path.join(cddtest.BACKUP, rc["transaction"], "bin/CUDNN64_8.DLL"))
        with open(bk, "rb") as f:
            self.assertEqual(f.read(), old)
        self.cdd("verify", "--level", "files", *ws.target_args, expect=0)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertOutsideUntouched(ws)

    def test_folder_case_variant_is_used_not_doubled(self):
        # The tree's folder is Bin (and Lib): install goes into it, as
        # Windows would, instead of adding bin beside it. The file takes
        # the manifest's name, the folder keeps the tree's.
        ws = self.workspace(platform=WINDOWS)
        os.rename(ws.path("bin"), ws.path("Bin"))
        os.rename(ws.path("lib"), ws.path("LIB"))
        before = ws.snap(IGNORE_LOCK_LOG)
        j = self.install(ws, FIX.windows)
        plan = plan_of(j.doc)
        self.assertEqual(plan.get("Bin/cudnn64_8.dll"), "new", sorted(plan))
        self.assertEqual(plan.get("LIB/x64/cudnn.lib"), "new", sorted(plan))
        self.assertFalse(os.path.lexists(ws.path("bin")))
        self.assertFalse(os.path.lexists(ws.path("lib")))
        self.assertTrue(os.path.isfile(ws.path("Bin/cudnn64_8.dll")))
        self.cdd("verify", "--level", "files", *ws.target_args, expect=0)
        self.cdd("status", "--check", *ws.target_args, expect=0)
        # A re-install finds everything in place.
        j = self.install(ws, FIX.windows)
        self.assertIs(j.doc["changed"], False)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertOutsideUntouched(ws)

    def test_exact_name_wins_over_a_variant(self):
        # Both spellings present (possible on a case-sensitive filesystem):
        # the exact one is replaced, the variant left alone.
        ws = self.workspace(platform=WINDOWS)
        for n in ("CUDNN64_8.DLL", "cudnn64_8.dll"):
            with open(ws.path("bin/" + n), "wb") as f:
                f.write(b"MZ " + n.encode())
        j = self.install(ws, FIX.windows)
        self.assertEqual(plan_of(j.doc).get("bin/cudnn64_8.dll"), "replace")
        with open(ws.path("bin/CUDNN64_8.DLL"), "rb") as f:
            self.assertEqual(f.read(), b"MZ CUDNN64_8.DLL")
        self.assertOutsideUntouched(ws)


if __name__ == "__main__":
    cddtest.main()
