"""All-or-nothing on Windows: an upgrade of a Windows-layout CUDA tree is
failed, then killed (TerminateProcess), at each of its filesystem steps in
turn (CUDNN_DEPLOY_TEST_FAULT=fail:N / kill:N), and the tree must end
exactly as before (failure) or, after `recover`, exactly as before or after
(kill) -- with MoveFileExW, FlushFileBuffers and LockFileEx doing the work
instead of rename(2), fsync(2) and fcntl(2).

Runs only against the Windows executable (CDD_WINDOWS=1), under Wine in CI.
"""

import os
import re
import shutil
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import WINDOWS, CddTestCase, comparable_state, run, run_json  # noqa: E402
from test_windows_layout import ON_WINDOWS_BUILD, win  # noqa: E402

FAULT_ENV = "CUDNN_DEPLOY_TEST_FAULT"
MARK_ENV = "CUDNN_DEPLOY_TEST_FAULT_MARK"  # the kill appends a line there
KILLED = 137  # cdd_kill_self(): TerminateProcess(GetCurrentProcess(), 137)
# Wine's TerminateProcess of a process with other threads can hang (the
# caller, as the server call returns, runs a signal handler that waits for a
# mutex a killed thread held) or end with another status (seen: 1):
# docs/windows.md, "A kill that Wine does not finish". Past the mark, such a
# run is killed from outside after this long, as the kill meant.
KILL_GRACE = 60
MAX_STEPS = 400
SUBLIBS = ("ops_infer",)
# The kill loop's runs carry Wine's error channel (CDD_WINEDEBUG, see
# wine-run.sh): twice, on a new machine's first suite run (a fresh prefix,
# the whole suite at -j2), a run here exited 1 with nothing on stdout or
# stderr, which is what Wine's own failures look like under WINEDEBUG=-all.
# Wine's lines ("0124:err:module:...") are kept apart from the program's
# and shown when a run fails.
WINE_ERRORS = {"CDD_WINEDEBUG": "err+all"}
WINE_LINE = re.compile(r"^[0-9a-f]{4,8}:(err|fixme|warn|trace):")


def split_wine(err):
    """(the program's stderr, Wine's own lines) of a run's stderr."""
    ours, wine = [], []
    for line in err.splitlines(True):
        (wine if WINE_LINE.match(line) else ours).append(line)
    return "".join(ours), "".join(wine)


def mini(name, version, headers):
    """A small Windows archive (two DLLs, a few headers and import libraries)
    so that a step loop stays quick under Wine."""
    top, entries = cddtest.windows_entries(version, "11", sublibs=SUBLIBS,
                                           headers=headers)
    return cddtest.Fixture(os.path.join(cddtest.WORK_ROOT, "fixtures", name),
                           WINDOWS, version, 11, top, entries, SUBLIBS)


@unittest.skipUnless(ON_WINDOWS_BUILD,
                     "Windows build only (CDD_WINDOWS=1: make test-windows)")
@cddtest.needs_fault_hook
class WindowsFaults(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.old = mini("win_mini_old", "8.4.1.50", ("cudnn.h", "cudnn_version.h"))
        cls.new = mini("win_mini", "8.5.0.96",
                       ("cudnn.h", "cudnn_ops_infer.h", "cudnn_version.h"))

    def setUp(self):
        # A tree with the old release installed: the starting point of every
        # step, copied fresh each time.
        self.base = self.scratch("base")
        self.pristine = os.path.join(self.base, "pristine", "CUDA", "v11.6")
        cddtest.make_cuda_tree(self.pristine, platform=WINDOWS)
        run_json(self.args(self.old, self.pristine), expect=0)
        self.before = comparable_state(self.pristine)
        ref = self.fresh("reference")
        run_json(self.args(self.new, ref), expect=0)
        self.after = comparable_state(ref)
        self.assertNotEqual(self.before, self.after)

    def args(self, fx, root):
        return ["install", "--cuda-root", win(root), "--manifest",
                win(fx.manifest_path), "--archive", win(fx.path), "--no-verify"]

    def fresh(self, name):
        root = os.path.join(self.base, name, "CUDA", "v11.6")
        if os.path.lexists(os.path.dirname(root)):
            shutil.rmtree(os.path.dirname(root))
        shutil.copytree(self.pristine, root, symlinks=True)
        return root

    def test_kill_then_fail_at_every_step(self):
        # kill:N -- the process dies at step N; `recover` then finishes or
        # undoes the transaction.
        seen = {"before": 0, "after": 0}
        wine = {"hung": 0, "status": 0}
        total = None
        mark = os.path.join(self.base, "kill-mark")
        for n in range(1, MAX_STEPS + 1):
            root = self.fresh("step")
            what = "kill:%d" % n
            if os.path.exists(mark):
                os.unlink(mark)
            try:
                r = run(self.args(self.new, root),
                        env=dict(WINE_ERRORS, **{FAULT_ENV: what,
                                                 MARK_ENV: win(mark)}),
                        timeout=KILL_GRACE)
            except cddtest.CommandTimeout as e:
                # Killed by run() from outside: what the kill meant, if the
                # process got to it (the mark), else a real hang of ours.
                self.assertTrue(os.path.exists(mark), "%s: hung before its "
                                "kill point\n%s" % (what, e))
                wine["hung"] += 1
                r = None
            wine_err = ""
            if r is not None:
                err, wine_err = split_wine(r.err)
                r = r._replace(err=err)
                wine_err = "\n--- Wine ---\n" + wine_err if wine_err else ""
            reached = os.path.exists(mark)
            if r is not None and r.rc == 0:
                self.assertFalse(reached, what + ": killed, yet exit 0")
                total = n - 1
                self.assertEqual(comparable_state(root), self.after)
                break
            if not reached:
                self.fail("%s: exit %r without reaching its kill point\n%s%s"
                          % (what, r.rc, r.err, wine_err))
            with open(mark) as f:
                self.assertEqual(f.read().split()[:2], ["kill", str(n)], what)
            if r is not None and r.rc != KILLED:
                # Past the kill: nothing of ours ran (stderr is empty).
                self.assertEqual(r.err, "", "%s: exit %r\n%s%s"
                                 % (what, r.rc, r.err, wine_err))
                wine["status"] += 1
            run_json(["recover", "--cuda-root", win(root)], expect=0,
                     env=WINE_ERRORS)
            state = comparable_state(root)
            self.assertIn(state, (self.before, self.after),
                          what + ": neither before nor after")
            seen["before" if state == self.before else "after"] += 1
            self.assertEqual(cddtest.leftovers(root, allow_backup=True), [], what)
        self.assertIsNotNone(total, "kill:N never stopped firing")
        self.assertGreater(total, 5)
        self.assertGreater(seen["before"], 0)
        self.assertGreater(seen["after"], 0)

        # fail:N -- the step fails: exit 4 and exactly "before" (or, for a
        # failure the command may absorb after its commit, exit 0 and
        # exactly "after").
        for n in range(1, total + 2):
            root = self.fresh("step")
            what = "fail:%d" % n
            j = run_json(self.args(self.new, root),
                         env=dict(WINE_ERRORS, **{FAULT_ENV: what}))
            state = comparable_state(root)
            if j.rc == 4:
                self.assertEqual(j.doc["error"]["code"], "FAULT", what + ": " + j.err)
                self.assertEqual(state, self.before, what + ": not undone")
            else:
                self.assertEqual(j.rc, 0, "%s: exit %r\n%s" % (what, j.rc, j.err))
                self.assertEqual(state, self.after, what)
            self.assertEqual(cddtest.leftovers(root, allow_backup=True), [], what)
        sys.stderr.write("\n  %d steps; killed runs recovered to before %d, "
                         "after %d; Wine's kill hung %d times, ended with "
                         "another status %d times\n"
                         % (total, seen["before"], seen["after"], wine["hung"],
                            wine["status"]))


if __name__ == "__main__":
    cddtest.main()
