"""The base class of the end-to-end tests (CddTestCase: workspaces, running
the binary, assertions about trees) and main(), which runs a test script
and says in its exit status whether everything was skipped.
"""

import atexit
import os
import shutil
import sys
import unittest

from cddenv import BIN, FAST_ROOT, GROUP, WORK_ROOT
from cddrun import binary_problem, describe, install_args, run, run_json
from layoutmodel import LINUX
from snapshots import (STATE, diff_snapshots, leftovers, read_receipt,
                       receipt_files, without_state)
from trees import Workspace


class CddTestCase(unittest.TestCase):
    """Base of the end-to-end tests: workspaces, running the binary, and
    assertions about trees."""

    needs_binary = True
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if cls.needs_binary:
            why = binary_problem()
            if why and not BIN:
                raise unittest.SkipTest(why)
            if why:
                raise AssertionError(why)

    # -- workspaces -----------------------------------------------------------

    def _case_dirs(self):
        """[Class, test]: this test's folder under WORK_ROOT; [test] when
        WORK_ROOT is a ctest group's (cddenv.py), which names the class."""
        parts = self.id().split(".")
        return parts[-1:] if GROUP else parts[-2:]

    def workspace(self, name="ws", tree="cuda", platform=LINUX, fast=False, **tree_kw):
        """A fresh workspace. fast: on FAST_ROOT (RAM) when there is one."""
        root = FAST_ROOT if fast and FAST_ROOT else WORK_ROOT
        if root is FAST_ROOT and root and not os.path.isdir(root):
            os.makedirs(root)
            atexit.register(shutil.rmtree, root, True)
        folder = os.path.join(root, *(self._case_dirs() + [name]))
        return Workspace(folder, tree, platform, **tree_kw)

    def scratch(self, name):
        d = os.path.join(WORK_ROOT, *(self._case_dirs() + [name]))
        if os.path.lexists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        return d

    # -- running ----------------------------------------------------------------

    def cdd(self, *args, **kw):
        return run(list(args), **kw)

    def cdd_json(self, *args, **kw):
        return run_json(list(args), **kw)

    def install(self, ws, fixture, *extra, **kw):
        """install --json into a workspace; kw: expect (default 0),
        manifest, archive, env."""
        expect = kw.pop("expect", 0)
        args = install_args(ws, fixture, kw.pop("manifest", None),
                            kw.pop("archive", None), *extra)
        return run_json(args, expect=expect, **kw)

    # -- assertions -------------------------------------------------------------

    def assertSameTree(self, expected, actual, msg=""):
        lines = diff_snapshots(expected, actual)
        if lines:
            self.fail("%s\ntrees differ:\n  %s" % (msg, "\n  ".join(lines)))

    def assertOutsideUntouched(self, ws):
        lines = ws.outside_changes()
        if lines:
            self.fail("files outside the tree changed:\n  " + "\n  ".join(lines))

    def assertNoLeftovers(self, root, allow_backup=False):
        bad = leftovers(root, allow_backup)
        if bad:
            self.fail("left behind in %s/%s: %s" % (root, STATE, bad))

    def assertError(self, jres, rc, codes=None, msg=""):
        """A failed --json answer: exit rc, error.code in codes."""
        self.assertEqual(jres.rc, rc, msg + describe(["..."], jres.rc, jres.out, jres.err))
        self.assertFalse(jres.doc["ok"])
        err = jres.doc.get("error") or {}
        if codes is not None:
            if isinstance(codes, str):
                codes = (codes,)
            self.assertIn(err.get("code"), codes,
                          "%s error %r" % (msg, err))
        return err

    def assertInstalled(self, ws, fixture, before, target_kind=None):
        """The tree is `before` plus exactly the fixture's files in their
        layout (plus the folders that hold them; their modes are not
        asserted), and nothing but known state is left in .cudnn-deploy."""
        target_kind = target_kind or ws.kind
        after = without_state(ws.snap())
        expected = without_state(before)
        for d in fixture.expected_dirs(target_kind):
            if d not in expected:
                got = after.get(d)
                expected[d] = got if got and got[0] == "dir" else ("dir", None, "<created>")
        expected.update(fixture.expected(target_kind))
        self.assertSameTree(expected, after,
                            "after installing %s" % fixture.filename)
        self.assertNoLeftovers(ws.tree, allow_backup=True)

    def assertReceiptMatches(self, ws, fixture, target_kind=None):
        target_kind = target_kind or ws.kind
        files = receipt_files(read_receipt(ws.tree))
        expected = fixture.expected(target_kind)
        self.assertEqual(sorted(files), sorted(expected),
                         "receipt paths vs installed paths")
        for p, (kind, content, _) in expected.items():
            if kind == "file":
                self.assertEqual(files[p].get("sha256"), content, p)
                if "size" in files[p]:
                    self.assertEqual(files[p]["size"],
                                     os.path.getsize(ws.path(p)), p)


# The exit status of a script whose every selected test was skipped
# (tests/CMakeLists.txt gives it to ctest as SKIP_RETURN_CODE, so ctest
# reports the entry as "Skipped", not "Passed"); automake's convention.
EXIT_ALL_SKIPPED = 77


def _skips(result, skipped, whole_classes):
    what = ["%d tests" % len(skipped)] if skipped else []
    what += ["%d classes" % whole_classes] if whole_classes else []
    reasons = sorted(set(why for _, why in result.skipped))
    return "%s skipped (%s)" % (" and ".join(what), "; ".join(reasons[:3]))


def exit_status(result):
    """0 when the run passed, EXIT_ALL_SKIPPED when nothing ran but skips
    (a test's or a whole class's), 1 when anything failed or nothing was
    selected at all. A partly skipped run passes; the count is printed."""
    skipped = [t for t, _ in result.skipped if isinstance(t, unittest.TestCase)]
    whole_classes = len(result.skipped) - len(skipped)
    bad = (len(result.failures) + len(result.errors)
           + len(getattr(result, "unexpectedSuccesses", ())))
    passed = result.testsRun - len(skipped) - bad
    if bad:
        return 1
    if passed <= 0:
        if not result.skipped:
            sys.stderr.write("cddtest: no test was selected\n")
            return 1
        sys.stderr.write("cddtest: all skipped: %s\n"
                         % _skips(result, skipped, whole_classes))
        return EXIT_ALL_SKIPPED
    if result.skipped:
        sys.stderr.write("cddtest: %d passed, %s\n"
                         % (passed, _skips(result, skipped, whole_classes)))
    return 0


def main():
    """unittest's command line (-v, test names, -k ...); the exit status
    as exit_status() says."""
    program = unittest.main(verbosity=2, exit=False)
    sys.exit(exit_status(program.result))
