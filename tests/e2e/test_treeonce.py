"""The tree opened once (issue 22, docs/design.md "Commands and the tree
handle"): command rows declare their tree access and the dispatcher opens,
locks and closes the tree. Read rows never wait for the lock; write rows
locked at open fail at once on a held lock, and not with --dry-run; the
recovery the lock brings is reported once."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import FIX, IGNORE_LOCK, CddTestCase, run_json  # noqa: E402


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


if __name__ == "__main__":
    unittest.main()
