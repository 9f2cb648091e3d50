"""The life cycle on generated archives and trees: install (every layout),
re-install, upgrade with backup, dry run, uninstall back to the exact
previous state, status, refusals (CUDA version, site-packages, unpinned
archives), manifest create round trips, and the tree lock."""

import json
import os
import shutil
import stat
import sys
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import (FIX, IGNORE_LOCK, IGNORE_LOCK_LOG, LINUX, WINDOWS,  # noqa: E402
                     CddTestCase, install_args, plan_of, run, run_json)

OTHER_SHA = "0123456789abcdef" * 4


def flip_file_byte(path, offset=100):
    """Change one byte, keeping the size (and restore the mode)."""
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 0xFF]))


def append(path, data=b"\n/* local edit */\n"):
    with open(path, "ab") as f:
        f.write(data)


def unpinned_manifest(fx, path, file_hashes=False):
    """fx's manifest without the archive pin (and without per-file hashes
    unless file_hashes)."""
    def edit(doc):
        if not file_hashes:
            for f in doc["files"]:
                if f["role"] != "symlink":
                    f["sha256"] = None
                    f["size"] = None
    return fx.manifest_variant(path, edit, sha256=None, size=None)


class LifeCycleCase(CddTestCase):

    def assertManifestCopy(self, ws, fx):
        """.cudnn-deploy/manifest.json is the manifest fx was installed with."""
        with open(ws.path(cddtest.MANIFEST_COPY)) as f:
            doc = json.load(f)
        for key in ("product", "version", "platform", "cuda_major"):
            self.assertEqual(doc.get(key), fx.manifest[key], key)
        self.assertEqual(doc["archive"]["sha256"], fx.sha256)
        self.assertEqual(sorted(f["path"] for f in doc["files"]),
                         sorted(fx.files))


class FreshInstall(LifeCycleCase):

    def check_fresh(self, ws, fx, before, j):
        self.assertIs(j.doc["changed"], True)
        expected = fx.expected(ws.kind)
        plan = plan_of(j.doc)
        self.assertEqual(sorted(plan), sorted(expected))
        self.assertEqual(set(plan.values()), {"new"})
        self.assertInstalled(ws, fx, before)
        self.assertReceiptMatches(ws, fx)
        # The state folder describes the tree.
        st = os.path.join(ws.tree, cddtest.STATE)
        self.assertManifestCopy(ws, fx)
        self.assertTrue(os.path.isfile(os.path.join(st, "lock")))
        self.assertEqual(cddtest.backup_dirs(ws.tree), [],
                         "nothing was replaced, so no backup")
        log = cddtest.read_log(ws.tree)
        self.assertGreaterEqual(len(log), 1)
        self.assertTrue(all(isinstance(l, dict) for l in log))
        self.cdd("status", *ws.target_args, expect=0)

    def test_linux_cuda_tree(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux)
        self.check_fresh(ws, FIX.linux, before, j)
        # Symlinks stay symlinks (a copy would make ldconfig complain).
        for lib in ["libcudnn"] + ["libcudnn_" + s for s in cddtest.SUBLIBS]:
            p = ws.path("lib64/%s.so" % lib)
            self.assertTrue(os.path.islink(p), p)
            self.assertEqual(os.readlink(p), lib + ".so.8")
            self.assertEqual(os.readlink(ws.path("lib64/%s.so.8" % lib)), lib + ".so.8.5.0")
            real = os.lstat(ws.path("lib64/%s.so.8.5.0" % lib))
            self.assertTrue(stat.S_ISREG(real.st_mode))
            self.assertEqual(stat.S_IMODE(real.st_mode), 0o755)
        self.assertEqual(stat.S_IMODE(os.stat(ws.path("include/cudnn.h")).st_mode), 0o644)
        self.assertEqual(stat.S_IMODE(os.stat(ws.path("lib64/libcudnn_ops_infer_static.a")).st_mode), 0o644)
        self.assertTrue(os.path.isfile(ws.path("share/doc/cudnn/LICENSE")))
        self.assertOutsideUntouched(ws)

    def test_windows_layout_from_linux(self):
        ws = self.workspace(platform=WINDOWS)
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.windows)
        self.check_fresh(ws, FIX.windows, before, j)
        self.assertEqual(stat.S_IMODE(os.stat(ws.path("bin/cudnn_cnn_infer64_8.dll")).st_mode), 0o755)
        self.assertEqual(stat.S_IMODE(os.stat(ws.path("lib/x64/cudnn64_8.lib")).st_mode), 0o644)
        self.assertTrue(os.path.isfile(ws.path("doc/cudnn/LICENSE")))
        self.assertOutsideUntouched(ws)

    def test_linux_prefix(self):
        ws = self.workspace(tree="prefix")
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux)
        self.check_fresh(ws, FIX.linux, before, j)
        self.assertEqual(os.readlink(ws.path("lib/libcudnn.so")), "libcudnn.so.8")
        self.assertTrue(os.path.isfile(ws.path("share/doc/cudnn/LICENSE")))

    def test_windows_prefix(self):
        ws = self.workspace(tree="prefix", platform=WINDOWS)
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.windows)
        self.check_fresh(ws, FIX.windows, before, j)
        self.assertTrue(os.path.isfile(ws.path("Library/bin/cudnn64_8.dll")))
        self.assertTrue(os.path.isfile(ws.path("Library/lib/cudnn_ops_infer64_8.lib")))
        self.assertTrue(os.path.isfile(ws.path("Library/share/doc/cudnn/LICENSE")))

    def test_cuda_option_uses_cuda_path_variable(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        args = ["install", "--cuda", "v11.6", "--manifest", FIX.linux.manifest_path,
                "--archive", FIX.linux.path, "--no-verify"]
        j = run_json(args, env={"CUDA_PATH_V11_6": ws.tree}, expect=0)
        self.assertEqual(os.path.realpath(j.doc["target"]), os.path.realpath(ws.tree))
        self.assertInstalled(ws, FIX.linux, before)
        j = run_json(["status", "--cuda", "v11.6"], env={"CUDA_PATH_V11_6": ws.tree}, expect=0)
        self.assertIs(j.doc["installed"], True)

    def test_cuda_option_without_tree(self):
        # Neither CUDA_PATH_V10_99 nor /usr/local/cuda-10.99 exists.
        j = run_json(["install", "--cuda", "v10.99", "--manifest", FIX.linux.manifest_path,
                      "--archive", FIX.linux.path, "--no-verify"], expect=None)
        self.assertError(j, 4, "NOTFOUND")
        self.assertIn("CUDA_PATH_V10_99", j.err)
        self.assertIn("/usr/local/cuda-10.99", j.err)

    def test_tree_not_found(self):
        ws = self.workspace(tree=None)
        j = self.install(ws, FIX.linux, expect=None)
        self.assertError(j, 4, "NOTFOUND")
        self.assertFalse(os.path.exists(ws.tree))

    def test_modes_never_come_from_the_archive(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        self.install(ws, FIX.linux_modes)
        self.assertInstalled(ws, FIX.linux_modes, before)   # asserts 0644/0755

    def test_real_layout_with_targets_links(self):
        # Real Linux CUDA trees: lib64 -> targets/x86_64-linux/lib, include too.
        ws = self.workspace(targets_links=True)
        before = ws.snap(ignore=())
        self.install(ws, FIX.linux)
        after = cddtest.without_state(ws.snap())
        expected = dict(before)
        for dest, v in FIX.linux.expected().items():
            d = dest.replace("lib64/", "targets/x86_64-linux/lib/", 1).replace(
                "include/", "targets/x86_64-linux/include/", 1)
            expected[d] = v
        for d in ("share", "share/doc", "share/doc/cudnn"):
            expected[d] = after.get(d)
        self.assertSameTree(expected, after)
        self.assertEqual(after["lib64"], ("link", "targets/x86_64-linux/lib", None))
        self.cdd("status", "--check", *ws.target_args, expect=0)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))

    def test_lib64_leading_out_of_the_tree_refused(self):
        ws = self.workspace()
        lib64 = ws.path("lib64")
        shutil.rmtree(lib64)
        os.symlink(os.path.join(ws.outside, "lib64"), lib64)
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux, expect=None)
        self.assertIn(j.rc, (3, 4), j.err)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.assertOutsideUntouched(ws)
        self.assertNoLeftovers(ws.tree)


class ReinstallAndUpgrade(LifeCycleCase):

    def test_reinstall_is_unchanged(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        first = ws.snap(IGNORE_LOCK_LOG)
        j = self.install(ws, FIX.linux)
        self.assertIs(j.doc["changed"], False)
        self.assertEqual(set(plan_of(j.doc).values()), {"unchanged"})
        self.assertSameTree(first, ws.snap(IGNORE_LOCK_LOG), "re-install changed the tree")
        self.assertNoLeftovers(ws.tree)

    def test_reinstall_puts_back_a_deleted_file(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        want = ws.snap(IGNORE_LOCK_LOG)
        os.unlink(ws.path("lib64/libcudnn_ops_train.so.8.5.0"))
        os.unlink(ws.path("lib64/libcudnn_ops_train.so"))
        self.cdd("status", *ws.target_args, expect=1)
        j = self.install(ws, FIX.linux)
        self.assertIs(j.doc["changed"], True)
        plan = plan_of(j.doc)
        self.assertEqual(plan["lib64/libcudnn_ops_train.so.8.5.0"], "new")
        self.assertEqual(plan["lib64/libcudnn.so.8.5.0"], "unchanged")
        got = ws.snap(IGNORE_LOCK_LOG)
        # The tree is as after the first install. The state folder may keep
        # a backup of the previous receipt, but no file of the tree was
        # replaced, so nothing else may be in a backup.
        backed = [p for p in got if p.startswith(cddtest.BACKUP + "/")]
        for p in backed:
            rest = p.split("/", 3)[3] if p.count("/") >= 3 else ""
            self.assertTrue(rest == "" or rest.startswith(cddtest.STATE), p)
        got = {p: v for p, v in got.items() if p not in backed and p != cddtest.BACKUP}
        self.assertSameTree(cddtest.normalize(want), cddtest.normalize(got))
        self.cdd("status", "--check", *ws.target_args, expect=0)

    def test_install_over_foreign_files_keeps_them_for_uninstall(self):
        # Someone copied cuDNN by hand before: a header, and the soname link
        # turned into a copy by `cp`.
        ws = self.workspace()
        cddtest.put_file(ws.tree, "include/cudnn.h", b"/* hand-copied cudnn.h */\n")
        cddtest.put_file(ws.tree, "lib64/libcudnn.so.8", b"\x7fELF hand copy", 0o755)
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux)
        plan = plan_of(j.doc)
        self.assertEqual(plan["include/cudnn.h"], "replace")
        self.assertEqual(plan["lib64/libcudnn.so.8"], "replace")
        self.assertEqual(plan["include/cudnn_ops_infer.h"], "new")
        ids = cddtest.backup_dirs(ws.tree)
        self.assertEqual(len(ids), 1, "one backup folder for the transaction")
        bk = cddtest.snapshot(os.path.join(ws.tree, cddtest.BACKUP, ids[0]))
        self.assertEqual(bk["include/cudnn.h"], before["include/cudnn.h"])
        self.assertEqual(bk["lib64/libcudnn.so.8"], before["lib64/libcudnn.so.8"])
        self.assertEqual(sorted(p for p, v in bk.items() if v[0] != "dir"),
                         ["include/cudnn.h", "lib64/libcudnn.so.8"])
        self.assertTrue(os.path.islink(ws.path("lib64/libcudnn.so.8")))
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertNoLeftovers(ws.tree)

    def upgrade_cycle(self, old, new, platform):
        ws = self.workspace(platform=platform)
        pristine = ws.snap(ignore=())
        self.install(ws, old)
        after_old = ws.snap(IGNORE_LOCK_LOG)
        old_receipt = cddtest.read_receipt(ws.tree)
        old_exp, new_exp = old.expected(), new.expected()

        j = self.install(ws, new)
        self.assertIs(j.doc["changed"], True)
        plan = plan_of(j.doc)
        for p in new_exp:
            want = "new" if p not in old_exp else \
                "unchanged" if old_exp[p] == new_exp[p] else "replace"
            self.assertEqual(plan.get(p), want, p)
        for p in set(old_exp) - set(new_exp):
            self.assertEqual(plan.get(p), "remove", p)
        self.assertInstalled(ws, new, pristine)
        self.assertReceiptMatches(ws, new)
        # Everything replaced or removed is in the backup, byte for byte.
        ids = cddtest.backup_dirs(ws.tree)
        self.assertEqual(len(ids), 1)
        bk = cddtest.snapshot(os.path.join(ws.tree, cddtest.BACKUP, ids[0]))
        bk_files = {p: v for p, v in bk.items() if v[0] != "dir"}
        displaced = {p: v for p, v in old_exp.items()
                     if p not in new_exp or new_exp[p] != v}
        for p, v in displaced.items():
            self.assertIn(p, bk_files, "not backed up: " + p)
            self.assertEqual(bk_files[p][:2], v[:2], p)
        self.cdd("status", "--check", *ws.target_args, expect=0)

        # Uninstalling the upgrade brings the old version back, receipt and all.
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], True)
        back = ws.snap(IGNORE_LOCK_LOG)
        self.assertSameTree(cddtest.without_state(after_old), cddtest.without_state(back))
        self.assertEqual(cddtest.read_receipt(ws.tree), old_receipt)
        self.assertManifestCopy(ws, old)
        self.assertNoLeftovers(ws.tree)
        self.cdd("status", "--check", *ws.target_args, expect=0)

        # And uninstalling again leaves the tree as it was before anything.
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(pristine, ws.snap(IGNORE_LOCK_LOG))
        self.assertOutsideUntouched(ws)

    def test_upgrade_linux(self):
        self.upgrade_cycle(FIX.linux_old, FIX.linux, LINUX)

    def test_upgrade_windows(self):
        self.upgrade_cycle(FIX.windows_old, FIX.windows, WINDOWS)

    def test_dry_run_of_upgrade(self):
        ws = self.workspace()
        self.install(ws, FIX.linux_old)
        before = ws.snap(IGNORE_LOCK)
        j = self.install(ws, FIX.linux, "--dry-run")
        plan = plan_of(j.doc)
        self.assertEqual(plan["lib64/libcudnn.so.8.4.1"], "remove")
        self.assertEqual(plan["lib64/libcudnn.so.8.5.0"], "new")
        self.assertEqual(plan["lib64/libcudnn.so.8"], "replace")
        self.assertEqual(plan["include/cudnn_backend.h"], "new")
        self.assertEqual(plan["include/cudnn.h"], "replace")
        self.assertIs(j.doc["changed"], False)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_downgrade_is_an_install_too(self):
        ws = self.workspace()
        pristine = ws.snap(ignore=())
        self.install(ws, FIX.linux)
        self.install(ws, FIX.linux_old)
        self.assertInstalled(ws, FIX.linux_old, pristine)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertInstalled(ws, FIX.linux, pristine)


class DryRun(LifeCycleCase):

    def test_dry_run_touches_nothing(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux, "--dry-run")
        self.assertIs(j.doc["changed"], False)
        plan = plan_of(j.doc)
        self.assertEqual(sorted(plan), sorted(FIX.linux.expected()))
        self.assertEqual(set(plan.values()), {"new"})
        # Not even the state folder or the lock.
        self.assertSameTree(before, ws.snap(ignore=()))
        r = run(install_args(ws, FIX.linux, None, None, "--dry-run"), expect=0)
        self.assertIn("include/cudnn.h", r.err)
        self.assertSameTree(before, ws.snap(ignore=()))

    def test_dry_run_still_checks(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        folder = self.scratch("bad")
        e = FIX.linux.entry("lib/libcudnn.so.8.5.0")
        entries = [x.copy(data=cddtest.flip_byte(x.data, 10)) if x is e else x
                   for x in FIX.linux.entries]
        data = cddtest.tar_xz_bytes(entries)
        archive = cddtest.write_bytes(os.path.join(folder, FIX.linux.filename), data)
        manifest = FIX.linux.manifest_variant(os.path.join(folder, "m.json"),
                                              sha256=cddtest.sha256_bytes(data), size=len(data))
        j = self.install(ws, FIX.linux, "--dry-run", manifest=manifest, archive=archive,
                         expect=None)
        self.assertError(j, 3, "CHECKSUM")
        self.assertSameTree(before, ws.snap(ignore=()))


class Uninstall(LifeCycleCase):

    def test_uninstall_to_pristine(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        self.install(ws, FIX.linux)
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], True)
        # Only the lock and the log may stay; created folders are gone too.
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertNoLeftovers(ws.tree)
        j = self.cdd_json("status", *ws.target_args, expect=0)
        self.assertIs(j.doc["installed"], False)
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], False)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertOutsideUntouched(ws)

    def test_uninstall_windows_prefix(self):
        ws = self.workspace(tree="prefix", platform=WINDOWS)
        before = ws.snap(ignore=())
        self.install(ws, FIX.windows)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))

    def test_uninstall_with_nothing_installed(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], False)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_uninstall_refuses_a_modified_file(self):
        ws = self.workspace()
        pristine = ws.snap(ignore=())
        self.install(ws, FIX.linux)
        flip_file_byte(ws.path("include/cudnn_cnn_infer.h"))   # same size
        before = ws.snap(IGNORE_LOCK)
        j = self.cdd_json("uninstall", *ws.target_args, expect=1)
        self.assertIs(j.doc["changed"], False)
        self.assertIn("include/cudnn_cnn_infer.h", j.err + json.dumps(j.doc))
        if "error" in j.doc:
            self.assertIn(j.doc["error"]["code"], ("MODIFIED", "CHECK"))
        self.assertSameTree(before, ws.snap(IGNORE_LOCK), "a refused uninstall changed the tree")
        self.assertNoLeftovers(ws.tree)
        j = self.cdd_json("uninstall", "--force", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], True)
        self.assertSameTree(pristine, ws.snap(IGNORE_LOCK_LOG))

    def test_uninstall_refuses_a_retargeted_link(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        os.unlink(ws.path("lib64/libcudnn.so"))
        os.symlink("libcudnn_ops_infer.so.8", ws.path("lib64/libcudnn.so"))
        before = ws.snap(IGNORE_LOCK)
        self.cdd("uninstall", *ws.target_args, expect=1)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))


class Status(LifeCycleCase):

    def setUp(self):
        self.ws = self.workspace()
        self.install(self.ws, FIX.linux)
        self.t = self.ws.target_args

    def test_status_ok(self):
        before = self.ws.snap(IGNORE_LOCK)
        j = self.cdd_json("status", *self.t, expect=0)
        self.assertIs(j.doc["installed"], True)
        self.assertIs(j.doc["changed"], False)
        r = self.cdd("status", "--check", *self.t, expect=0)
        self.assertIn("8.5.0.96", r.out + r.err)
        self.assertSameTree(before, self.ws.snap(IGNORE_LOCK), "status is read-only")

    def test_status_nothing_installed(self):
        ws = self.workspace("pristine")
        before = ws.snap(ignore=())
        r = self.cdd("status", *ws.target_args, expect=0)
        self.assertIn("nothing installed", (r.out + r.err).lower())
        j = self.cdd_json("status", *ws.target_args, expect=0)
        self.assertIs(j.doc["installed"], False)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_status_missing_file(self):
        os.unlink(self.ws.path("lib64/libcudnn_cnn_infer.so.8.5.0"))
        before = self.ws.snap(IGNORE_LOCK)
        r = self.cdd("status", *self.t, expect=1)
        self.assertIn("lib64/libcudnn_cnn_infer.so.8.5.0", r.out + r.err)
        j = self.cdd_json("status", *self.t, expect=1)
        self.assertIn("lib64/libcudnn_cnn_infer.so.8.5.0", json.dumps(j.doc))
        self.assertSameTree(before, self.ws.snap(IGNORE_LOCK), "status is read-only")

    def test_status_modified_file(self):
        append(self.ws.path("include/cudnn.h"))
        r = self.cdd("status", *self.t, expect=1)
        self.assertIn("include/cudnn.h", r.out + r.err)

    def test_status_check_catches_same_size_change(self):
        flip_file_byte(self.ws.path("lib64/libcudnn.so.8.5.0"), 200)
        # The quick status compares sizes only; --check hashes.
        r = self.cdd("status", "--check", *self.t, expect=1)
        self.assertIn("lib64/libcudnn.so.8.5.0", r.out + r.err)

    def test_status_check_catches_retargeted_link(self):
        os.unlink(self.ws.path("lib64/libcudnn.so.8"))
        os.symlink("libcudnn_ops_infer.so.8.5.0", self.ws.path("lib64/libcudnn.so.8"))
        r = self.cdd("status", "--check", *self.t, expect=1)
        self.assertIn("lib64/libcudnn.so.8", r.out + r.err)


class TargetRefusals(LifeCycleCase):

    def refused(self, ws, fx, codes, *extra):
        before = ws.snap(ignore=())
        j = self.install(ws, fx, *extra, expect=None)
        err = self.assertError(j, 3, codes)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.assertNoLeftovers(ws.tree)
        return err

    def test_wrong_major_refused_then_forced(self):
        ws = self.workspace(version="12.1.1")
        before = ws.snap(ignore=())
        err = self.refused(ws, FIX.linux, "VERSION")
        self.assertIn("12.1", err["message"])
        self.assertIn("11", err["message"].replace("12.1", ""))
        self.install(ws, FIX.linux, "--force")
        self.assertInstalled(ws, FIX.linux, before)

    def test_wrong_major_windows(self):
        ws = self.workspace(platform=WINDOWS, version="12.1.1")
        self.refused(ws, FIX.windows, "VERSION")

    def test_version_txt_tree(self):
        ws = self.workspace(source="txt")
        before = ws.snap(ignore=())
        self.install(ws, FIX.linux)
        self.assertInstalled(ws, FIX.linux, before)

    def test_version_txt_tree_is_really_read(self):
        ws = self.workspace(source="txt", version="12.1.1")
        self.refused(ws, FIX.linux, "VERSION")

    def test_cuda_h_only_tree(self):
        ws = self.workspace(source="header")
        before = ws.snap(ignore=())
        self.install(ws, FIX.linux)
        self.assertInstalled(ws, FIX.linux, before)

    def test_cuda_h_only_tree_is_really_read(self):
        ws = self.workspace(source="header", version="12.1.1")
        self.refused(ws, FIX.linux, "VERSION")

    def test_no_version_refused_then_forced(self):
        ws = self.workspace(source="none")
        before = ws.snap(ignore=())
        self.refused(ws, FIX.linux, "VERSION")
        self.install(ws, FIX.linux, "--force")
        self.assertInstalled(ws, FIX.linux, before)

    def test_site_packages_refused(self):
        folder = self.scratch("envs")
        cases = [
            ("--prefix", "venv/lib/python3.10/site-packages/torch", "prefix"),
            ("--cuda-root", "usr/lib/python3/dist-packages/nvidia/cuda", "cuda"),
            ("--prefix", "Lib/Site-Packages/torch", "prefix"),
        ]
        for opt, rel, kind in cases:
            with self.subTest(rel=rel):
                root = os.path.join(folder, rel)
                if kind == "prefix":
                    cddtest.make_prefix(root)
                else:
                    cddtest.make_cuda_tree(root)
                before = cddtest.snapshot(root, ignore=())
                j = run_json(["install", opt, root, "--manifest", FIX.linux.manifest_path,
                              "--archive", FIX.linux.path, "--no-verify"])
                self.assertError(j, 3, "TARGET")
                self.assertSameTree(before, cddtest.snapshot(root, IGNORE_LOCK))
                shutil.rmtree(os.path.join(folder, rel.split("/")[0]))

    @unittest.skipIf(hasattr(os, "geteuid") and os.geteuid() == 0,
                     "root ignores permissions")
    def test_read_only_tree(self):
        ws = self.workspace()
        dirs = [ws.tree] + [os.path.join(dp, d) for dp, dn, _ in os.walk(ws.tree) for d in dn]
        for d in dirs:
            os.chmod(d, 0o555)
        self.addCleanup(lambda: [os.chmod(d, 0o755) for d in dirs])
        before = ws.snap(ignore=())
        j = self.install(ws, FIX.linux, expect=None)
        self.assertError(j, 4, ("PERM", "IO"))
        self.assertSameTree(before, ws.snap(ignore=()))


class Pinning(LifeCycleCase):

    def setUp(self):
        self.ws = self.workspace()
        self.before = self.ws.snap(ignore=())
        self.folder = self.scratch("m")
        self.unpinned = unpinned_manifest(FIX.linux, os.path.join(self.folder, "unpinned.json"))

    def test_unpinned_refused(self):
        j = self.install(self.ws, FIX.linux, manifest=self.unpinned, expect=None)
        self.assertError(j, 3, ("UNPINNED", "CHECKSUM"))
        self.assertIn("--sha256", j.err + j.doc["error"]["message"])
        self.assertSameTree(self.before, self.ws.snap(IGNORE_LOCK))

    def test_unpinned_with_right_sha256(self):
        self.install(self.ws, FIX.linux, "--sha256", FIX.linux.sha256, manifest=self.unpinned)
        self.assertInstalled(self.ws, FIX.linux, self.before)
        self.assertReceiptMatches(self.ws, FIX.linux)

    def test_unpinned_with_upper_case_sha256(self):
        self.install(self.ws, FIX.linux, "--sha256", FIX.linux.sha256.upper(),
                     manifest=self.unpinned)
        self.assertInstalled(self.ws, FIX.linux, self.before)

    def test_unpinned_with_wrong_sha256(self):
        j = self.install(self.ws, FIX.linux, "--sha256", OTHER_SHA, manifest=self.unpinned,
                         expect=None)
        self.assertError(j, 3, "CHECKSUM")
        self.assertSameTree(self.before, self.ws.snap(IGNORE_LOCK))

    def test_pinned_manifest_and_wrong_sha256(self):
        j = self.install(self.ws, FIX.linux, "--sha256", OTHER_SHA, expect=None)
        self.assertError(j, 3, "CHECKSUM")
        self.assertSameTree(self.before, self.ws.snap(IGNORE_LOCK))

    def test_allow_unpinned(self):
        self.install(self.ws, FIX.linux, "--allow-unpinned", manifest=self.unpinned)
        self.assertInstalled(self.ws, FIX.linux, self.before)

    def test_per_file_hashes_are_a_pin(self):
        m = unpinned_manifest(FIX.linux, os.path.join(self.folder, "perfile.json"),
                              file_hashes=True)
        self.install(self.ws, FIX.linux, manifest=m)
        self.assertInstalled(self.ws, FIX.linux, self.before)

    def test_archive_size_pin(self):
        m = FIX.linux.manifest_variant(os.path.join(self.folder, "size.json"),
                                       size=FIX.linux.size + 1)
        j = self.install(self.ws, FIX.linux, manifest=m, expect=None)
        self.assertError(j, 3, ("CHECKSUM", "ARCHIVE"))
        self.assertSameTree(self.before, self.ws.snap(IGNORE_LOCK))


class ManifestCreate(LifeCycleCase):

    def round_trip(self, fx, platform):
        folder = self.scratch("created")
        out = os.path.join(folder, "created.json")
        self.cdd("manifest", "create", fx.path, "-o", out, "--version", fx.version,
                 "--cuda-major", str(fx.cuda_major), expect=0)
        with open(out) as f:
            doc = json.load(f)
        self.assertEqual(doc["schema_version"], 1)
        self.assertEqual(doc["product"], "cudnn")
        self.assertEqual(doc["version"], fx.version)
        self.assertEqual(doc["cuda_major"], fx.cuda_major)
        self.assertEqual(doc["platform"], platform)
        self.assertEqual(doc["archive"]["sha256"], fx.sha256)
        self.assertEqual(doc["archive"]["size"], fx.size)
        self.assertEqual(doc["archive"]["filename"], fx.filename)
        self.assertEqual(doc["archive"]["strip_components"], 1)
        self.assertIs(doc.get("files_exact", True), True)
        got = {f["path"]: f for f in doc["files"]}
        want = {f["path"]: f for f in fx.manifest["files"]}
        self.assertEqual(sorted(got), sorted(want))
        for p, w in want.items():
            g = got[p]
            self.assertEqual(g["role"], w["role"], p)
            for k in ("sha256", "size", "target"):
                if k in w:
                    self.assertEqual(g.get(k), w[k], "%s.%s" % (p, k))
        ws = self.workspace(platform=platform)
        before = ws.snap(ignore=())
        self.install(ws, fx, manifest=out)
        self.assertInstalled(ws, fx, before)
        self.assertReceiptMatches(ws, fx)

    def test_round_trip_linux(self):
        self.round_trip(FIX.linux, LINUX)

    def test_round_trip_windows(self):
        self.round_trip(FIX.windows, WINDOWS)

    def test_json_answer(self):
        folder = self.scratch("created")
        out = os.path.join(folder, "m.json")
        j = run_json(["manifest", "create", FIX.windows.path, "-o", out,
                      "--version", "8.5.0.96", "--cuda-major", "11"], expect=0)
        self.assertEqual(j.doc["command"].split()[0], "manifest")
        with open(out) as f:
            self.assertEqual(json.load(f)["platform"], WINDOWS)


class Locking(LifeCycleCase):

    def test_lock_held_fails_at_once(self):
        ws = self.workspace()
        with cddtest.LockHolder(ws.tree) as holder:
            before = ws.snap(IGNORE_LOCK)
            t0 = time.monotonic()
            j = self.install(ws, FIX.linux, expect=None)
            self.assertLess(time.monotonic() - t0, 5)
            err = self.assertError(j, 4, "LOCKED")
            self.assertIn(str(holder.pid), err["message"])
            self.assertIn(str(holder.pid), j.err)
            self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_lock_held_for_every_changing_command(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        with cddtest.LockHolder(ws.tree):
            before = ws.snap(IGNORE_LOCK)
            for args in (install_args(ws, FIX.linux_old),
                         ["uninstall"] + ws.target_args,
                         ["uninstall", "--force"] + ws.target_args,
                         ["recover"] + ws.target_args):
                with self.subTest(args=args[0]):
                    j = run_json(args, expect=4)
                    self.assertEqual(j.doc["error"]["code"], "LOCKED")
            self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_lock_timeout_waits_for_release(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        holder = cddtest.LockHolder(ws.tree).acquire()
        timer = threading.Timer(1.0, holder.release)
        t0 = time.monotonic()
        timer.start()
        try:
            j = self.install(ws, FIX.linux, "--lock-timeout", "10")
        finally:
            timer.cancel()
            holder.release()
        self.assertGreaterEqual(time.monotonic() - t0, 0.9)
        self.assertIs(j.doc["changed"], True)
        self.assertInstalled(ws, FIX.linux, before)

    def test_lock_timeout_expires(self):
        ws = self.workspace()
        with cddtest.LockHolder(ws.tree):
            t0 = time.monotonic()
            j = self.install(ws, FIX.linux, "--lock-timeout", "1", expect=None)
            elapsed = time.monotonic() - t0
        self.assertError(j, 4, "LOCKED")
        self.assertGreaterEqual(elapsed, 0.9)
        self.assertLess(elapsed, 10)


class RecoverAndLog(LifeCycleCase):

    def test_recover_with_nothing_to_do(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        j = self.cdd_json("recover", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], False)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        self.install(ws, FIX.linux)
        after = ws.snap(IGNORE_LOCK_LOG)
        j = self.cdd_json("recover", *ws.target_args, expect=0)
        self.assertIs(j.doc["changed"], False)
        self.assertSameTree(after, ws.snap(IGNORE_LOCK_LOG))

    def test_log_grows_per_change(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        n1 = len(cddtest.read_log(ws.tree))
        self.assertGreaterEqual(n1, 1)
        self.install(ws, FIX.linux_old)
        n2 = len(cddtest.read_log(ws.tree))
        self.assertGreater(n2, n1)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertGreater(len(cddtest.read_log(ws.tree)), n2)


if __name__ == "__main__":
    cddtest.main()
