"""Crash safety: a tree is at every instant exactly as before or exactly as
after.

- kill by step: CUDNN_DEPLOY_TEST_FAULT=kill:N makes the N-th mutating
  filesystem operation SIGKILL the process. For N = 1, 2, ... until the
  command completes, run `recover` and assert the tree equals the "before"
  or the "after" state (lock and log excepted), with nothing left over.
- fail by step: CUDNN_DEPLOY_TEST_FAULT=fail:N makes it fail instead; the
  command exits 4 and the tree is exactly "before" without any recovery.
- kill by time: SIGKILL an install of a large archive after a random
  (seeded) delay, recover, before-or-after.
- SIGINT / SIGTERM roll back and exit 4.
- A later install/uninstall recovers an interrupted transaction first.

The by-step loops use the small "mini" archives (same layout, one
sub-library) because each step runs the binary several times.

CDD_STEP_SHARD=K/N (steps.py) spreads each by-step loop over N processes.
"""

import os
import random
import shutil
import signal
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fleetfix  # noqa: E402
from steps import last_firing, shard_steps, step_shard  # noqa: E402
from cddtest import (FIX, CddTestCase, comparable_state, diff_snapshots,  # noqa: E402
                     install_args, run, run_json, spawn)

MAX_STEPS = 3000            # a command with more operations is a bug here

KILLED = -signal.SIGKILL
FAULT_ENV = "CUDNN_DEPLOY_TEST_FAULT"


class Scenario(object):
    """A command on a tree prepared by installing `setup` fixtures first.
    tree: "cuda" or "prefix" (a conda environment); platform: the tree's
    layout; argv: a function of the workspace giving the command line, for
    commands other than a plain install or `COMMAND --cuda-root TREE`."""

    def __init__(self, name, setup, command, fixture=None, fast=True,
                 tree="cuda", platform=cddtest.LINUX, argv=None):
        self.name, self.setup, self.command = name, setup, command
        self.fixture, self.fast = fixture, fast
        self.tree, self.platform, self.argv = tree, platform, argv

    def args(self, ws):
        if self.argv:
            return self.argv(ws)
        if self.command == "install":
            return install_args(ws, getattr(FIX, self.fixture))
        return [self.command] + ws.target_args


_ZLIB = {}


def zlibwapi_install(ws):
    """install --with zlibwapi=ZIP of the Windows archive, with a manifest
    that offers the component (test_fleet's fixtures, made once)."""
    if not _ZLIB:
        d = os.path.join(cddtest.TMP_ROOT, "kill-zlibwapi")
        os.makedirs(d, exist_ok=True)
        z = fleetfix.zlib_zip(os.path.join(d, "zip"))
        _ZLIB["zip"] = z.path
        _ZLIB["manifest"] = fleetfix.manifest_with_zlibwapi(
            FIX.windows, os.path.join(d, "manifest.json"), z)
    return install_args(ws, FIX.windows, _ZLIB["manifest"], None,
                        "--with", "zlibwapi=" + _ZLIB["zip"])


SCENARIOS = {
    "install": Scenario("install", [], "install", "linux_mini"),
    "upgrade": Scenario("upgrade", ["linux_mini_old"], "install", "linux_mini"),
    "uninstall": Scenario("uninstall", ["linux_mini"], "uninstall"),
    "uninstall_upgrade": Scenario("uninstall_upgrade", ["linux_mini_old", "linux_mini"],
                                  "uninstall"),
    # An optional component staged and committed with the archive (issue
    # 18): install --with zlibwapi into a Windows-layout tree.
    "install_with": Scenario("install_with", [], "install", fast=True,
                             platform=cddtest.WINDOWS, argv=zlibwapi_install),
    # The conda activation scripts, written in their own transaction into a
    # prefix that has cuDNN installed (env --write-activation).
    "activation": Scenario("activation", ["linux_mini"], "env", tree="prefix",
                           argv=lambda ws: ["env"] + ws.target_args
                           + ["--write-activation"]),
}

# Per-process caches: reference states and operation counts per scenario.
_TEMPLATE = {}
_REFERENCE = {}
_OPS = {}
_MID_COMMIT = {}


def journal_present(root):
    d = os.path.join(root, cddtest.STATE)
    return os.path.isdir(d) and any(n.startswith("journal") for n in os.listdir(d))


class CrashCase(CddTestCase):

    # -- preparing trees -------------------------------------------------------

    def template(self, scen):
        """scen's starting tree, prepared once by really installing its setup
        fixtures; fresh() copies it (a tree's state is self-describing, so a
        copy is the same tree, and copying is much cheaper than installing)."""
        if scen.name not in _TEMPLATE:
            ws = self.workspace("template-" + scen.name, tree=scen.tree,
                                platform=scen.platform, fast=scen.fast)
            for fx in scen.setup:
                run(install_args(ws, getattr(FIX, fx)), expect=0)
            _TEMPLATE[scen.name] = ws.tree
        return _TEMPLATE[scen.name]

    def fresh(self, scen, tag="it"):
        """A workspace whose tree is scen's starting point (in RAM when
        possible, except for the large archive)."""
        template = self.template(scen)
        ws = self.workspace(tag, tree=None, platform=scen.platform, fast=scen.fast)
        if scen.tree == "prefix":
            ws.kind = "prefix"
        shutil.copytree(template, ws.tree, symlinks=True)
        return ws

    def reference(self, scen):
        """(before, after) comparable states of scen, from one clean run."""
        # Per test case too: each case has its own folders, and what a
        # command writes may name them.
        key = (scen.name, tuple(self._case_dirs()))
        if key not in _REFERENCE:
            # The trials' own path: what a command writes may name the
            # tree (activation scripts hold the prefix).
            ws = self.fresh(scen)
            before = comparable_state(ws.tree)
            run(scen.args(ws), expect=0)
            after = comparable_state(ws.tree)
            self.assertNotEqual(before, after, "the command changes nothing?")
            _REFERENCE[key] = (before, after)
        return _REFERENCE[key]

    def op_count(self, scen):
        """How many mutating operations the command performs: the largest N
        for which kill:N still fires (kill:N+1 lets it complete)."""
        if scen.name in _OPS:
            return _OPS[scen.name]

        def fires(n):
            ws = self.fresh(scen, "probe")
            r = run(scen.args(ws), env={FAULT_ENV: "kill:%d" % n})
            if r.rc not in (0, KILLED):
                self.fail("kill:%d: unexpected exit %r\n%s" % (n, r.rc, r.err))
            return r.rc == KILLED

        _OPS[scen.name] = last_firing(fires, MAX_STEPS)
        return _OPS[scen.name]

    # -- assertions --------------------------------------------------------------

    def assertBeforeOrAfter(self, ws, scen, what):
        before, after = self.reference(scen)
        got = comparable_state(ws.tree)
        if got == before:
            verdict = "before"
        elif got == after:
            verdict = "after"
        else:
            self.fail("%s: the tree is neither before nor after\n"
                      "vs before:\n  %s\nvs after:\n  %s" % (
                          what, "\n  ".join(diff_snapshots(before, got)),
                          "\n  ".join(diff_snapshots(after, got))))
        bad = cddtest.leftovers(ws.tree, allow_backup=True)
        self.assertEqual(bad, [], what)
        self.assertOutsideUntouched(ws)
        return verdict

    def recover(self, ws, what):
        j = run_json(["recover"] + ws.target_args)
        self.assertEqual(j.rc, 0, "%s: recover failed\n%s" % (what, j.err))
        return j

    # -- the loops ---------------------------------------------------------------

    def kill_by_step(self, scen):
        """kill:N for N = 1, 2, ... until the command completes. Each step
        is a subtest on a fresh tree, so one bad step does not hide others."""
        self.reference(scen)
        seen = {"before": 0, "after": 0}
        if step_shard():
            return self.kill_by_step_shard(scen, seen)
        for n in range(1, MAX_STEPS + 1):
            ws = self.fresh(scen)
            what = "%s, kill:%d" % (scen.name, n)
            r = run(scen.args(ws), env={FAULT_ENV: "kill:%d" % n})
            if r.rc == 0:
                # The fault never fired: the command ran to its end.
                self.assertEqual(self.assertBeforeOrAfter(ws, scen, what), "after", what)
                self.assertGreater(n, 1, "kill:1 did not fire: is fault injection built in?")
                if scen.name in _OPS:
                    self.assertEqual(_OPS[scen.name], n - 1, "operation count changed")
                _OPS[scen.name] = n - 1
                return seen
            with self.subTest(step=what):
                self.assertEqual(r.rc, KILLED, "%s: exit %r\n%s" % (what, r.rc, r.err))
                self.recover(ws, what)
                seen[self.assertBeforeOrAfter(ws, scen, what)] += 1
        self.fail("%s: still killed after %d steps" % (scen.name, MAX_STEPS))

    def kill_by_step_shard(self, scen, seen):
        """kill_by_step over this shard's steps (CDD_STEP_SHARD) of the
        counted operations; the step past the last must complete."""
        total = self.op_count(scen)
        for n in shard_steps(total):
            ws = self.fresh(scen)
            what = "%s, kill:%d" % (scen.name, n)
            r = run(scen.args(ws), env={FAULT_ENV: "kill:%d" % n})
            with self.subTest(step=what):
                if n == total + 1:
                    self.assertEqual(r.rc, 0, "%s: past the last operation, "
                                     "exit %r\n%s" % (what, r.rc, r.err))
                    self.assertEqual(self.assertBeforeOrAfter(ws, scen, what),
                                     "after", what)
                    continue
                self.assertEqual(r.rc, KILLED, "%s: exit %r\n%s" % (what, r.rc, r.err))
                self.recover(ws, what)
                seen[self.assertBeforeOrAfter(ws, scen, what)] += 1
        return seen

    def fail_by_step(self, scen):
        """fail:N for N = 1 .. (operations + 1): exit 4 and exactly "before"
        (no recovery needed), or, where the failure is one the command may
        absorb, exit 0 and exactly "after"; past the last operation, exit 0."""
        before, after = self.reference(scen)
        total = self.op_count(scen)
        for n in shard_steps(total):
            ws = self.fresh(scen)
            what = "%s, fail:%d" % (scen.name, n)
            with self.subTest(step=what):
                j = run_json(scen.args(ws), env={FAULT_ENV: "fail:%d" % n})
                got = comparable_state(ws.tree)
                if j.rc == 4:
                    self.assertSameTree(before, got, what + ": a failed command must undo itself")
                    # The error reported is the cause (the injected fault),
                    # not a later one from cleaning up.
                    self.assertEqual(j.doc["error"]["code"], "FAULT", what + ": " + j.err)
                elif j.rc == 0:
                    self.assertSameTree(after, got, what + ": exit 0 (the injected failure "
                                        "was absorbed or never fired), so the tree must be "
                                        "exactly 'after'")
                else:
                    self.fail("%s: exit %r (want 4)\n%s" % (what, j.rc, j.err))
                self.assertEqual(cddtest.leftovers(ws.tree, allow_backup=True), [], what)
                self.assertOutsideUntouched(ws)
                if n == total + 1:
                    self.assertEqual(j.rc, 0, "fail:%d is past the last operation" % n)


@cddtest.needs_fault_hook
class KillByStep(CrashCase):

    def test_install(self):
        seen = self.kill_by_step(SCENARIOS["install"])
        self.assertGreater(seen["before"], 0)

    def test_upgrade(self):
        seen = self.kill_by_step(SCENARIOS["upgrade"])
        self.assertGreater(seen["before"], 0)

    def test_uninstall(self):
        self.kill_by_step(SCENARIOS["uninstall"])

    def test_uninstall_of_upgrade(self):
        self.kill_by_step(SCENARIOS["uninstall_upgrade"])

    def test_install_with_component(self):
        seen = self.kill_by_step(SCENARIOS["install_with"])
        self.assertGreater(seen["before"], 0)

    def test_write_activation(self):
        seen = self.kill_by_step(SCENARIOS["activation"])
        self.assertGreater(seen["before"], 0)


@cddtest.needs_fault_hook
class FailByStep(CrashCase):

    def test_install(self):
        self.fail_by_step(SCENARIOS["install"])

    def test_upgrade(self):
        self.fail_by_step(SCENARIOS["upgrade"])

    def test_uninstall(self):
        self.fail_by_step(SCENARIOS["uninstall"])

    def test_uninstall_of_upgrade(self):
        self.fail_by_step(SCENARIOS["uninstall_upgrade"])

    def test_install_with_component(self):
        self.fail_by_step(SCENARIOS["install_with"])

    def test_write_activation(self):
        self.fail_by_step(SCENARIOS["activation"])


@cddtest.needs_fault_hook
class InterruptedThenRunAgain(CrashCase):
    """install and uninstall recover an interrupted transaction first."""

    def kill_mid_commit(self, scen):
        """A workspace whose last command was killed with its journal on
        disk (in the middle of the range of such steps)."""
        if scen.name not in _MID_COMMIT:
            total = self.op_count(scen)
            with_journal = []
            for n in range(total, 0, -1):
                ws = self.fresh(scen, "probe")
                r = run(scen.args(ws), env={FAULT_ENV: "kill:%d" % n})
                self.assertEqual(r.rc, KILLED)
                if journal_present(ws.tree):
                    with_journal.append(n)
                elif with_journal:
                    break
            self.assertTrue(with_journal, "no step leaves a journal: is the commit journaled?")
            _MID_COMMIT[scen.name] = with_journal[len(with_journal) // 2]
        n = _MID_COMMIT[scen.name]
        ws = self.fresh(scen)
        run(scen.args(ws), env={FAULT_ENV: "kill:%d" % n}, expect=KILLED)
        self.assertTrue(journal_present(ws.tree))
        return ws

    def test_install_after_interrupted_install(self):
        scen = SCENARIOS["install"]
        _, after = self.reference(scen)
        ws = self.kill_mid_commit(scen)
        run(scen.args(ws), expect=0)
        self.assertSameTree(after, comparable_state(ws.tree))
        self.assertEqual(cddtest.leftovers(ws.tree), [])
        self.cdd("status", "--check", *ws.target_args, expect=0)

    def test_install_after_interrupted_upgrade(self):
        scen = SCENARIOS["upgrade"]
        _, after = self.reference(scen)
        ws = self.kill_mid_commit(scen)
        run(scen.args(ws), expect=0)
        self.assertSameTree(after, comparable_state(ws.tree))
        self.cdd("status", "--check", *ws.target_args, expect=0)

    def test_uninstall_after_interrupted_install(self):
        scen = SCENARIOS["install"]
        before, _ = self.reference(scen)
        ws = self.kill_mid_commit(scen)
        # Finished or undone, the install is then uninstalled: pristine.
        run(["uninstall"] + ws.target_args, expect=0)
        self.assertSameTree(before, comparable_state(ws.tree))
        self.assertEqual(cddtest.leftovers(ws.tree), [])

    def test_status_reports_interrupted_transaction(self):
        ws = self.kill_mid_commit(SCENARIOS["upgrade"])
        before = comparable_state(ws.tree)
        r = run(["status"] + ws.target_args)
        text = (r.out + r.err).lower()
        self.assertTrue("recover" in text or "interrupted" in text,
                        "status should say that a transaction was interrupted\n" + text)
        self.assertSameTree(before, comparable_state(ws.tree), "status is read-only")


class KillByTime(CrashCase):
    """SIGKILL at random moments of an install of a large archive."""

    ROUNDS = 10
    SEED = 20220801

    def big_scenario(self):
        return Scenario("install_big", [], "install", "linux_big", fast=False)

    def test_kill_at_random_times(self):
        scen = self.big_scenario()
        ws = self.fresh(scen, "reference")
        before = comparable_state(ws.tree)
        t0 = time.monotonic()
        run(scen.args(ws), expect=0)
        duration = time.monotonic() - t0
        _REFERENCE[(scen.name, tuple(self._case_dirs()))] = (
            before, comparable_state(ws.tree))
        # Delays cover the whole install, not only its start.
        top = min(max(0.5, 1.2 * duration), 5.0)
        rnd = random.Random(self.SEED)
        verdicts = []
        for i in range(self.ROUNDS):
            delay = rnd.uniform(0, top)
            ws = self.fresh(scen)
            p = spawn(scen.args(ws))
            time.sleep(delay)
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.communicate(timeout=60)
            what = "round %d, SIGKILL after %.3f s (rc %r)" % (i, delay, p.returncode)
            self.recover(ws, what)
            verdicts.append(self.assertBeforeOrAfter(ws, scen, what))
        sys.stderr.write("\n  kill by time (install %.2f s): %s\n" % (duration, verdicts))


class Signals(CrashCase):
    """SIGINT and SIGTERM roll the install back and exit 4."""

    def interrupt(self, sig):
        scen = Scenario("install_big", [], "install", "linux_big", fast=False)
        ws = self.fresh(scen)
        before = comparable_state(ws.tree)
        state_dir = os.path.join(ws.tree, cddtest.STATE)
        p = spawn(scen.args(ws))
        deadline = time.monotonic() + 30
        # Wait until it is staging (a stage-* folder exists), then signal.
        while time.monotonic() < deadline and p.poll() is None:
            if os.path.isdir(state_dir) and any(
                    n.startswith("stage-") for n in os.listdir(state_dir)):
                break
            time.sleep(0.005)
        if p.poll() is None:
            time.sleep(0.05)
            p.send_signal(sig)
        out, err = p.communicate(timeout=60)
        if p.returncode == 0:
            self.skipTest("the install finished before the signal arrived")
        self.assertEqual(p.returncode, 4, "exit %r\n%s" % (p.returncode, err.decode(errors="replace")))
        self.assertSameTree(before, comparable_state(ws.tree), "a signal must roll back")
        self.assertEqual(cddtest.leftovers(ws.tree), [])
        self.assertOutsideUntouched(ws)
        # Nothing to recover afterwards.
        j = run_json(["recover"] + ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], False)

    def test_sigint(self):
        self.interrupt(signal.SIGINT)

    def test_sigterm(self):
        self.interrupt(signal.SIGTERM)


if __name__ == "__main__":
    cddtest.main()
