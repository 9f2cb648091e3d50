"""The tree opened once (issue 22, docs/design.md "Commands and the tree
handle"): command rows declare their tree access and the dispatcher opens,
locks and closes the tree. Read rows never wait for the lock; write rows
locked at open fail at once on a held lock, and not with --dry-run; the
recovery the lock brings is reported once. Rows that read only the tree's own
files (releases; doctor, test_doctor.py) open its root alone, so tampered
state does not stop them; rows that read our state refuse it."""
import os
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import (FIX, IGNORE_LOCK, RECEIPT, STATE, CddTestCase,  # noqa: E402
                     run_json)


def tamper_link(tree, elsewhere):
    """.cudnn-deploy replaced by a link to a copy of it elsewhere."""
    state = os.path.join(tree, STATE)
    shutil.copytree(state, elsewhere, symlinks=True)
    shutil.rmtree(state)
    os.symlink(elsewhere, state)


def tamper_receipt_dir(tree, elsewhere):
    """receipt.json replaced by a folder."""
    os.unlink(os.path.join(tree, RECEIPT))
    os.mkdir(os.path.join(tree, RECEIPT))


TAMPERINGS = (("state folder a link", tamper_link, STATE),
              ("receipt a folder", tamper_receipt_dir, RECEIPT))


class TreeAccess(CddTestCase):

    def test_read_rows_run_while_the_lock_is_held(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        with cddtest.LockHolder(ws.tree):
            before = ws.snap(IGNORE_LOCK)
            for args in (["status"], ["status", "--check"],
                         ["sbom", "-o", os.path.join(self.scratch("sbom"), "s.json")],
                         ["uninstall", "--dry-run"]):
                with self.subTest(args=args):
                    j = run_json(args + ws.target_args, expect=0)
                    self.assertTrue(j.doc["target"])
                    self.assertEqual(j.doc["exit_code"], 0)
            self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_write_rows_fail_at_once_and_name_the_target(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        with cddtest.LockHolder(ws.tree) as holder:
            for args in (["uninstall"], ["recover"]):
                with self.subTest(args=args):
                    j = run_json(args + ws.target_args + ["--lock-timeout", "0"],
                                 expect=4)
                    self.assertEqual(j.doc["error"]["code"], "LOCKED")
                    self.assertIn(str(holder.pid), j.doc["error"]["message"])
                    self.assertTrue(j.doc["target"])

    def test_tree_without_state_is_not_locked_by_uninstall_or_recover(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        for args in (["uninstall"], ["recover"]):
            with self.subTest(args=args):
                run_json(args + ws.target_args, expect=0)
                self.assertSameTree(before, ws.snap(ignore=()))


class TamperedState(CddTestCase):
    """`--cuda-root` on a tree whose state folder cannot be trusted."""

    def test_releases_reads_the_version_only(self):
        for what, tamper, _ in TAMPERINGS:
            with self.subTest(what):
                ws = self.workspace(what.replace(" ", "-"))
                self.install(ws, FIX.linux)
                want = run_json(["releases"] + ws.target_args, expect=0).doc
                tamper(ws.tree, os.path.join(ws.dir, "elsewhere"))
                before = ws.snap(ignore=())
                got = run_json(["releases"] + ws.target_args, expect=0).doc
                self.assertEqual(got["releases"], want["releases"])
                self.assertEqual(got.get("choice"), want.get("choice"))
                self.assertSameTree(before, ws.snap(ignore=()))

    def test_status_refuses_naming_the_state_file(self):
        for what, tamper, rel in TAMPERINGS:
            with self.subTest(what):
                ws = self.workspace(what.replace(" ", "-"))
                self.install(ws, FIX.linux)
                tamper(ws.tree, os.path.join(ws.dir, "elsewhere"))
                before = ws.snap(ignore=())
                j = run_json(["status"] + ws.target_args, expect=3)
                self.assertEqual(j.doc["error"]["code"], "STATE")
                self.assertIn(rel, j.doc["error"]["message"])
                self.assertTrue(j.doc["target"])
                self.assertSameTree(before, ws.snap(ignore=()))


if __name__ == "__main__":
    unittest.main()
