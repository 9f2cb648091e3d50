"""Parallel extraction and the unchanged re-install.

- --jobs 1, 2 and 8 make the same tree, the same receipt and the same plan.
- A failure in one worker (bad data, an injected fault at any step) or a
  signal leaves the tree as it was and no stage behind.
- The tar.xz pipeline (decode on one thread, hash and write on another)
  makes the same tree as one thread, and undoes every failure too.
- The unchanged re-install (same archive, tree matching the receipt by
  type, size and identity record or hash: test_identity.py) extracts and
  stages nothing; a file whose size or bytes changed, or another archive,
  takes the full path;
  install --check-tree and status --check re-hash the tree.

"Stages nothing" is measured with the fault injector: the unchanged
re-install makes exactly one mutating filesystem operation (taking the
lock), so failing the second one must not fail it, while anything that
begins a transaction does fail."""

import json
import os
import shutil
import signal
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from steps import last_firing, shard_steps, step_shard  # noqa: E402
from cddtest import (FIX, WINDOWS, CddTestCase, comparable_state,  # noqa: E402
                     plan_of, run, run_json, spawn)

FAULT = "CUDNN_DEPLOY_TEST_FAULT"


def fault_env(spec):
    if not cddtest.has_fault_hook():
        raise unittest.SkipTest("needs a test build (-DCDD_FAULT_INJECTION=ON)")
    return cddtest.clean_env({FAULT: spec})


def receipt_core(tree):
    """The receipt without what differs from run to run."""
    doc = cddtest.read_receipt(tree)
    for k in ("transaction", "installed_at"):
        doc.pop(k, None)
    for f in doc["files"]:
        f.pop("mtime_ns", None)
    return doc


class Jobs(CddTestCase):

    def install_jobs(self, fx, jobs, platform):
        ws = self.workspace("j%d" % jobs, platform=platform)
        j = self.install(ws, fx, "--jobs", jobs)
        self.assertIs(j.doc["changed"], True)
        return ws, j

    def same_for_all_jobs(self, fx, platform, counts):
        ref = None
        for n in counts:
            ws, j = self.install_jobs(fx, n, platform)
            got = (comparable_state(ws.tree), receipt_core(ws.tree),
                   [(i["path"], i["action"]) for i in j.doc["plan"]])
            if ref is None:
                ref = got
                continue
            self.assertSameTree(ref[0], got[0], "--jobs %d" % n)
            self.assertEqual(ref[1], got[1], "receipt with --jobs %d" % n)
            self.assertEqual(ref[2], got[2], "plan order with --jobs %d" % n)
            self.assertNoLeftovers(ws.tree)

    def test_zip_same_tree_receipt_and_plan_for_1_2_8_jobs(self):
        self.same_for_all_jobs(FIX.windows, WINDOWS, (1, 2, 8))

    def test_tar_xz_pipeline_same_as_one_thread(self):
        self.same_for_all_jobs(FIX.linux, cddtest.LINUX, (1, 4))

    def test_receipt_records_modification_times(self):
        ws, _ = self.install_jobs(FIX.windows, 2, WINDOWS)
        for f in cddtest.read_receipt(ws.tree)["files"]:
            st = os.lstat(os.path.join(ws.tree, f["path"]))
            self.assertEqual(int(f["mtime_ns"]), st.st_mtime_ns, f["path"])

    def test_jobs_must_be_a_positive_number(self):
        ws = self.workspace(platform=WINDOWS)
        for bad in ("0", "-1", "x", "1.5"):
            r = run(cddtest.install_args(ws, FIX.windows, None, None,
                                         "--jobs", bad), expect=2)
            self.assertIn("--jobs", r.err)


class WorkerFailure(CddTestCase):

    def corrupt_fixture(self):
        """FIX.windows with one small entry's data damaged, and a manifest
        that pins every file but not the archive: the failure is found by
        the worker that reads that entry, not by the archive hash."""
        fx = FIX.windows
        d = self.scratch("bad")
        name = fx.top + "/include/cudnn_version.h"
        with open(fx.path, "rb") as f:
            data = cddtest.zip_corrupt_data(f.read(), name)
        bad = cddtest.write_bytes(os.path.join(d, fx.filename), data)
        man = fx.manifest_variant(os.path.join(d, "m.json"), None,
                                  sha256=None, size=None)
        return bad, man

    def test_bad_entry_in_one_worker_leaves_tree_and_no_stage(self):
        bad, man = self.corrupt_fixture()
        for jobs in (2, 8):
            ws = self.workspace("j%d" % jobs, platform=WINDOWS)
            before = comparable_state(ws.tree)
            j = self.install(ws, FIX.windows, "--jobs", jobs, expect=3,
                             manifest=man, archive=bad)
            self.assertError(j, 3, ("CORRUPT", "CHECKSUM"))
            self.assertIn("cudnn_version.h", j.doc["error"]["message"])
            self.assertSameTree(before, comparable_state(ws.tree))
            self.assertNoLeftovers(ws.tree)

    def fault_loop(self, fx, platform, jobs):
        """Fail the n-th mutating operation, n = 1, 2, ... until the
        install succeeds: every failure leaves the tree as it was. Returns
        the step that succeeded."""
        ws = self.workspace("loop", platform=platform)
        before = comparable_state(ws.tree)
        args = cddtest.install_args(ws, fx, None, None, "--jobs", jobs)
        if step_shard():
            return self.fault_loop_shard(ws, before, args)
        for n in range(1, 5000):
            r = run(["--json"] + args, env=fault_env("fail:%d" % n))
            if r.rc == 0:
                break
            self.assertEqual(r.rc, 4, "fail:%d: %s" % (n, r.err))
            self.assertSameTree(before, comparable_state(ws.tree),
                                "after failing operation %d" % n)
            self.assertNoLeftovers(ws.tree)
        else:
            self.fail("the install never got through")
        self.assertGreater(n, 10, "the loop must have failed real steps")
        self.assertNoLeftovers(ws.tree)
        return n

    def fault_loop_shard(self, ws, before, args):
        """fault_loop over this shard's steps (CDD_STEP_SHARD, steps.py)
        of the operations counted first (by bisection: the last step whose
        failure fails the install)."""
        def fires(n):
            r = run(["--json"] + args, env=fault_env("fail:%d" % n))
            self.assertIn(r.rc, (0, 4), "fail:%d: %s" % (n, r.err))
            if r.rc == 0:  # installed: the next probe starts from before
                shutil.rmtree(ws.tree)
                shutil.copytree(self.before_copy, ws.tree, symlinks=True)
            return r.rc == 4
        self.before_copy = self.scratch("before-copy")
        shutil.rmtree(self.before_copy)
        shutil.copytree(ws.tree, self.before_copy, symlinks=True)
        total = last_firing(fires, 5000)
        self.assertGreater(total, 9, "the loop must have failed real steps")
        for n in shard_steps(total):
            r = run(["--json"] + args, env=fault_env("fail:%d" % n))
            if n == total + 1:
                self.assertEqual(r.rc, 0, "fail:%d: %s" % (n, r.err))
                continue
            if r.rc == 0:
                # A failure the install absorbs (a clean-up): installed.
                # The loop without shards ends at the first of these; here
                # the steps past it are tried too, each from "before".
                shutil.rmtree(ws.tree)
                shutil.copytree(self.before_copy, ws.tree, symlinks=True)
                continue
            self.assertEqual(r.rc, 4, "fail:%d: %s" % (n, r.err))
            self.assertSameTree(before, comparable_state(ws.tree),
                                "after failing operation %d" % n)
            self.assertNoLeftovers(ws.tree)
        return total + 1

    def test_every_injected_fault_undone_with_4_workers(self):
        n4 = self.fault_loop(FIX.windows, WINDOWS, 4)
        # The number of operations does not depend on the workers: the
        # loop finds the same failure points with one thread.
        n1 = self.fault_loop(FIX.windows, WINDOWS, 1)
        self.assertEqual(n4, n1)

    def test_every_injected_fault_undone_in_xz_pipeline(self):
        self.fault_loop(FIX.linux_mini, cddtest.LINUX, 4)


class Cancel(CddTestCase):

    def big_zip(self):
        top, entries = cddtest.windows_entries(big=True)
        return cddtest.Fixture(self.scratch("big"), WINDOWS, "8.5.0.96", 11,
                               top, entries)

    def test_sigint_stops_every_worker_and_rolls_back(self):
        fx = self.big_zip()
        ws = self.workspace(platform=WINDOWS)
        before = comparable_state(ws.tree)
        state_dir = os.path.join(ws.tree, cddtest.STATE)
        p = spawn(cddtest.install_args(ws, fx, None, None, "--jobs", 4))
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and p.poll() is None:
            if os.path.isdir(state_dir) and any(
                    n.startswith("stage-") for n in os.listdir(state_dir)):
                break
            time.sleep(0.002)
        if p.poll() is None:
            p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        if p.returncode == 0:
            self.skipTest("the install finished before the signal arrived")
        self.assertEqual(p.returncode, 4, err.decode(errors="replace"))
        self.assertSameTree(before, comparable_state(ws.tree))
        self.assertNoLeftovers(ws.tree)


class Unchanged(CddTestCase):

    def installed(self, fx=None, manifest=None, archive=None):
        fx = fx or FIX.windows
        ws = self.workspace(platform=WINDOWS)
        self.install(ws, fx, manifest=manifest, archive=archive)
        return ws

    def reinstall(self, ws, *extra, **kw):
        return self.install(ws, FIX.windows, *extra, **kw)

    def state_files(self, ws):
        d = os.path.join(ws.tree, cddtest.STATE)
        out = {}
        for n in sorted(os.listdir(d)):
            st = os.lstat(os.path.join(d, n))
            data = None
            if os.path.isfile(os.path.join(d, n)):
                with open(os.path.join(d, n), "rb") as f:
                    data = f.read()
            out[n] = (st.st_mtime_ns, data)
        return out

    def test_unchanged_reinstall_changes_and_stages_nothing(self):
        ws = self.installed()
        tree, state = ws.snap(), self.state_files(ws)
        # One mutating operation (the lock): failing the second one must
        # not matter, so no transaction, stage or receipt write happened.
        j = self.reinstall(ws, env=fault_env("fail:2"))
        self.assertIs(j.doc["changed"], False)
        self.assertEqual(set(plan_of(j.doc).values()), {"unchanged"})
        self.assertEqual(len(j.doc["plan"]), len(FIX.windows.files))
        self.assertSameTree(tree, ws.snap())
        now = self.state_files(ws)
        self.assertEqual(state.keys(), now.keys())
        for n in ("receipt.json", "manifest.json", "log.jsonl"):
            self.assertEqual(state[n], now[n], n)

    def test_the_archive_is_still_hashed(self):
        ws = self.installed()
        j = self.reinstall(ws, "--sha256", "0" * 64, expect=3)
        self.assertError(j, 3, "CHECKSUM")
        self.assertNoLeftovers(ws.tree)

    def assertFullPath(self, ws, **kw):
        """The re-install began a transaction: failing its second mutating
        operation fails it (and leaves the tree as it was)."""
        before = comparable_state(ws.tree)
        j = self.reinstall(ws, env=fault_env("fail:2"), expect=4, **kw)
        self.assertError(j, 4, "FAULT")
        self.assertSameTree(before, comparable_state(ws.tree))
        self.assertNoLeftovers(ws.tree)

    def test_changed_mtime_is_hashed_and_same_bytes_stage_nothing(self):
        # A touched file no longer matches its identity record: it is
        # hashed, and the same bytes need no transaction.
        ws = self.installed()
        p = ws.path("include/cudnn.h")
        st = os.lstat(p)
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns + 1000))
        j = self.reinstall(ws, env=fault_env("fail:2"))
        self.assertIs(j.doc["changed"], False, "same bytes: nothing to do")

    def test_changed_size_forces_the_full_path_and_repairs(self):
        ws = self.installed()
        p = ws.path("include/cudnn.h")
        with open(p, "ab") as f:
            f.write(b"/* local edit */\n")
        self.assertFullPath(ws)
        j = self.reinstall(ws)
        self.assertIs(j.doc["changed"], True)
        self.assertEqual(plan_of(j.doc)["include/cudnn.h"], "replace")
        self.assertEqual(cddtest.sha256_file(p),
                         cddtest.sha256_bytes(FIX.windows.files["include/cudnn.h"].data))

    def test_another_archive_forces_the_full_path(self):
        fx = FIX.windows
        d = self.scratch("other")
        man = fx.manifest_variant(os.path.join(d, "m.json"), None,
                                  sha256=None, size=None)
        files = [e for e in fx.entries if e.kind == cddtest.FILE]
        dirs = [e for e in fx.entries if e.kind != cddtest.FILE]
        other = cddtest.write_bytes(os.path.join(d, fx.filename),
                                    cddtest.zip_bytes(dirs + files[::-1]))
        ws = self.installed(manifest=man)
        self.assertFullPath(ws, manifest=man, archive=other)
        # Same files, but the receipt now names the other archive.
        j = self.reinstall(ws, manifest=man, archive=other)
        self.assertIs(j.doc["changed"], True)
        self.assertEqual(set(plan_of(j.doc).values()), {"unchanged"})
        # Now the receipt names the other archive: the fast path again.
        j = self.reinstall(ws, manifest=man, archive=other,
                           env=fault_env("fail:2"))
        self.assertIs(j.doc["changed"], False)

    def test_check_tree_and_status_check_rehash(self):
        ws = self.installed()
        p = ws.path("bin/cudnn64_8.dll")
        st = os.lstat(p)
        with open(p, "r+b") as f:
            f.seek(10)
            b = f.read(1)
            f.seek(10)
            f.write(bytes([b[0] ^ 0xFF]))
        os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))
        # Size and mtime alone cannot see it (status without --check); the
        # re-install's identity check can (the ctime changed; the files are
        # still in the racy window anyway, so they are hashed: test_identity).
        j = run_json(["status"] + ws.target_args, expect=0)
        j = run_json(["status", "--check", "--jobs", "3"] + ws.target_args,
                     expect=1)
        bad = [i for i in j.doc["files"] if i["action"] != "unchanged"]
        self.assertEqual([i["path"] for i in bad], ["bin/cudnn64_8.dll"])
        j = self.reinstall(ws, "--check-tree")
        self.assertIs(j.doc["changed"], True)
        self.assertEqual(plan_of(j.doc)["bin/cudnn64_8.dll"], "replace")
        run_json(["status", "--check"] + ws.target_args, expect=0)
        j = self.reinstall(ws, "--check-tree", env=fault_env("fail:2"))
        self.assertIs(j.doc["changed"], False)

    def test_receipt_without_times_still_takes_the_fast_path(self):
        # The re-install no longer trusts the receipt's times: the identity
        # records (or a hash) decide, so a receipt without them changes
        # nothing, and stages nothing.
        ws = self.installed()
        rp = ws.path(cddtest.RECEIPT)
        with open(rp) as f:
            doc = json.load(f)
        for f in doc["files"]:
            f.pop("mtime_ns", None)
        with open(rp, "w") as f:
            json.dump(doc, f)
        j = self.reinstall(ws, env=fault_env("fail:2"))
        self.assertIs(j.doc["changed"], False)


if __name__ == "__main__":
    cddtest.main()
