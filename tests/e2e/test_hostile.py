"""Hostile archives (docs/security.md, The archive checks): every case of
hostile_cases.CASES must be rejected by install with exit 3 and the right
error code, the tree byte-identical to before (the lock excepted), the files
beside the tree untouched and nothing left in .cudnn-deploy/. `manifest
create` must reject the ones that are unsafe whatever the manifest says.
Plus non-exact manifests (files_exact: false): unlisted entries only from a
pinned archive, and never an unsafe one."""

import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import hostile_cases  # noqa: E402
from cddtest import (FIX, FILE, IGNORE_LOCK, SYMLINK, CddTestCase, Entry,  # noqa: E402
                     install_args, run_json)

BOMB_SECONDS = 10   # generous for CI; reading 50 MB fully would still pass,
# the point is that the tool stops at size + 1 and never writes the bomb out.


class HostileInstall(CddTestCase):
    """One test per hostile case (generated below)."""

    def run_case(self, case):
        fx = case.fixture()
        ws = self.workspace(platform=fx.platform)
        before = ws.snap(ignore=())
        archive, manifest, _ = case.build(self.scratch("archive"), ws.outside)
        t0 = time.monotonic()
        j = run_json(install_args(ws, fx, manifest, archive), timeout=120)
        elapsed = time.monotonic() - t0
        err = self.assertError(j, 3, case.codes, "%s (%s):" % (case.name, case.why))
        if case.mention:
            self.assertIn(case.mention, err["message"] + j.err,
                          "the message should name the entry")
        if case.bomb:
            self.assertLess(elapsed, BOMB_SECONDS)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK), case.why)
        self.assertOutsideUntouched(ws)
        self.assertNoLeftovers(ws.tree)
        for stray in ("evil.h", "evil.dll", "evil.so"):
            self.assertFalse(os.path.lexists(os.path.join(ws.outside, stray)))

    def test_case_table_is_big_enough(self):
        self.assertGreaterEqual(len(hostile_cases.CASES), 30)


class HostileManifestCreate(CddTestCase):
    """`manifest create` discovers the archive without a manifest: it must
    still refuse unsafe names, links, types, duplicates and broken archives,
    and write no output file."""

    def run_case(self, case):
        fx = case.fixture()
        ws = self.workspace(platform=fx.platform)
        archive, _, _ = case.build(self.scratch("archive"), ws.outside)
        out = os.path.join(self.scratch("out"), "created.json")
        j = run_json(["manifest", "create", archive, "-o", out,
                      "--version", fx.version, "--cuda-major", str(fx.cuda_major)])
        self.assertError(j, 3, ("UNSAFE", "CORRUPT", "ARCHIVE", "CHECKSUM"),
                         "%s (%s):" % (case.name, case.why))
        self.assertFalse(os.path.exists(out), "a manifest was written for a hostile archive")
        self.assertEqual(os.listdir(os.path.dirname(out)), [], "temporary files left")
        self.assertOutsideUntouched(ws)


def _add_tests():
    for case in hostile_cases.CASES:
        def t(self, case=case):
            self.run_case(case)
        t.__name__ = "test_" + case.name
        t.__doc__ = "%s: %s" % (case.name, case.why)
        setattr(HostileInstall, t.__name__, t)
        if case.create:
            def c(self, case=case):
                self.run_case(case)
            c.__name__ = "test_" + case.name
            c.__doc__ = t.__doc__
            setattr(HostileManifestCreate, c.__name__, c)


_add_tests()


def ctest_groups():
    """ctest entries for the generated classes (tests/ctest_list.py): one per
    section of the case table and class, e.g. e2e.test_hostile.HostileInstall.links,
    so a failing case names its group; the other classes get one entry each."""
    groups = {}
    for cls in (HostileInstall, HostileManifestCreate):
        for case in hostile_cases.CASES:
            if cls is HostileInstall or case.create:
                groups.setdefault("%s.%s" % (cls.__name__, case.group), []).append(
                    "%s.test_%s" % (cls.__name__, case.name))
    groups["HostileInstall.table"] = ["HostileInstall.test_case_table_is_big_enough"]
    return groups


class HostileOverAnInstall(CddTestCase):
    """A hostile upgrade must leave the previous install exactly as it was."""

    CASES = ("flipped_byte", "dotdot_escape", "symlink_then_write_through",
             "missing_file", "duplicate_case", "truncated_xz", "hardlink_outside")

    def test_hostile_upgrades(self):
        ws = self.workspace()
        self.install(ws, FIX.linux_old)
        installed = ws.snap(IGNORE_LOCK)
        for name in self.CASES:
            case = hostile_cases.BY_NAME[name]
            with self.subTest(case=name):
                archive, manifest, _ = case.build(self.scratch("a-" + name), ws.outside)
                j = run_json(install_args(ws, case.fixture(), manifest, archive))
                self.assertError(j, 3, case.codes, name)
                self.assertSameTree(installed, ws.snap(IGNORE_LOCK), name)
                self.assertNoLeftovers(ws.tree)
        self.assertOutsideUntouched(ws)
        self.cdd("status", "--check", *ws.target_args, expect=0)


class HostileBounds(CddTestCase):
    """Resource bounds (issue 9): inputs that are not regular files, the
    symlink-chain check, the manifest parser's memory, Unicode case
    duplicates of a Windows layout. Each is refused (exit 3) or finishes
    within a bound far above the expected time, the tree unchanged."""

    LIMIT = 20  # seconds; the refusals take milliseconds

    def chain_archive(self, n, loop=False):
        """The good tarball plus n symlinks lib/libcudnn_c<i>.so -> <i+1>,
        the last to the real library (or back to the first)."""
        ctx = hostile_cases.Ctx(FIX.linux, "/nonexistent")
        links = []
        for i in range(n):
            target = ("libcudnn_lnk%d.so" % (i + 1) if i + 1 < n else
                      "libcudnn_lnk0.so" if loop else "libcudnn.so.8.5.0")
            links.append(Entry(ctx.n("lib/libcudnn_lnk%d.so" % i), SYMLINK, target=target))
        data = cddtest.tar_xz_bytes(list(FIX.linux.entries) + links)
        return cddtest.write_bytes(os.path.join(self.scratch("chain-%d-%d" % (n, loop)),
                                                FIX.linux.filename), data)

    def create(self, archive, timeout=None):
        out = os.path.join(self.scratch("out"), "created.json")
        t0 = time.monotonic()
        j = run_json(["manifest", "create", archive, "-o", out, "--version",
                      FIX.linux.version, "--cuda-major", str(FIX.linux.cuda_major)],
                     timeout=timeout or self.LIMIT * 3)
        return j, time.monotonic() - t0, out

    def test_symlink_chain_of_15000_is_linear(self):
        # Quadratic, 5,000 links took 4 s, so 15,000 would take 36 s: the
        # bound tells the two apart.
        j, elapsed, out = self.create(self.chain_archive(15000))
        self.assertEqual(j.rc, 0, j.err)
        self.assertLess(elapsed, self.LIMIT)
        with open(out) as f:
            self.assertEqual(sum(1 for e in json.load(f)["files"]
                                 if e["path"].startswith("lib/libcudnn_lnk")), 15000)

    def test_symlink_loop_of_5000_refused(self):
        j, elapsed, out = self.create(self.chain_archive(5000, loop=True))
        self.assertError(j, 3, ("UNSAFE",))
        self.assertIn("loops", j.doc["error"]["message"])
        self.assertLess(elapsed, self.LIMIT)
        self.assertFalse(os.path.exists(out))

    def test_huge_manifest_refused_at_once(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        path = os.path.join(self.scratch("m"), "huge.json")
        with open(path, "w") as f:
            f.write("[" + ",".join(["0"] * 4000000) + "]")   # 8 MB, 4 M values
        t0 = time.monotonic()
        j = run_json(install_args(ws, FIX.linux, path), timeout=self.LIMIT * 3)
        self.assertError(j, 3, ("MANIFEST",))
        self.assertIn("JSON values", j.doc["error"]["message"])
        self.assertLess(time.monotonic() - t0, self.LIMIT)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    def test_deep_manifest_refused(self):
        path = os.path.join(self.scratch("m"), "deep.json")
        with open(path, "w") as f:
            f.write("[" * 100000 + "]" * 100000)
        j = run_json(["manifest", "show", path])
        self.assertError(j, 3, ("MANIFEST",))

    def test_too_many_entries_refused(self):
        # One over the bound (20,000): a zip from its end record, before
        # libarchive reads the directory; a tar as the entries come.
        for fx, make in ((FIX.windows, cddtest.zip_bytes), (FIX.linux, cddtest.tar_xz_bytes)):
            with self.subTest(platform=fx.platform):
                ctx = hostile_cases.Ctx(fx, "/nonexistent")
                entries = [Entry(ctx.n("include/h%05d.h" % i), FILE, b"")
                           for i in range(20001)]
                archive = cddtest.write_bytes(
                    os.path.join(self.scratch("many-" + fx.platform), fx.filename),
                    make(entries))
                j, elapsed, out = self.create(archive)
                self.assertError(j, 3, ("ARCHIVE",))
                self.assertIn("20000", j.doc["error"]["message"])
                self.assertFalse(os.path.exists(out))

    def fifo(self, name):
        path = os.path.join(self.scratch("fifo"), name)
        os.mkfifo(path)
        return path

    def test_fifo_archive_refused_at_once(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        fifo = self.fifo(FIX.linux.filename)
        j = run_json(install_args(ws, FIX.linux, None, fifo), timeout=self.LIMIT)
        self.assertEqual(j.rc, 3, j.err)
        self.assertIn(FIX.linux.filename, j.doc["error"]["message"] + j.err)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))
        j = run_json(["manifest", "create", fifo, "-o",
                      os.path.join(self.scratch("o"), "m.json")], timeout=self.LIMIT)
        self.assertEqual(j.rc, 3, j.err)

    def test_fifo_manifest_refused_at_once(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        fifo = self.fifo("manifest.json")
        j = run_json(install_args(ws, FIX.linux, fifo), timeout=self.LIMIT)
        self.assertError(j, 3, ("MANIFEST",))
        self.assertIn("manifest.json", j.doc["error"]["message"] + j.err)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK))

    # Pairs one name on NTFS (Unicode simple case folding) beyond ASCII.
    CASE_PAIRS = (("\u0531", "\u0561"), ("\u01cd", "\u01ce"), ("\u0386", "\u03ac"),
                  ("\u2160", "\u2170"))

    def test_unicode_case_duplicates_in_a_windows_zip(self):
        ctx = hostile_cases.Ctx(FIX.windows, "/nonexistent")
        for upper, lower in self.CASE_PAIRS:
            with self.subTest(pair=upper + lower):
                entries = list(FIX.windows.entries) + [
                    Entry(ctx.n("include/%s.h" % upper), FILE, b"/* one */\n"),
                    Entry(ctx.n("include/%s.h" % lower), FILE, b"/* two */\n")]
                archive = cddtest.write_bytes(
                    os.path.join(self.scratch("u%x" % ord(upper)), FIX.windows.filename),
                    cddtest.zip_bytes(entries))
                out = os.path.join(self.scratch("uo%x" % ord(upper)), "m.json")
                j = run_json(["manifest", "create", archive, "-o", out,
                              "--version", FIX.windows.version, "--cuda-major", "11"])
                self.assertError(j, 3, ("UNSAFE",))
                self.assertIn("differ only in case", j.doc["error"]["message"])
                self.assertFalse(os.path.exists(out))


class NonExactManifest(CddTestCase):
    """files_exact: false lists the entries it requires; an unlisted entry
    comes in only from a pinned archive, only where the layout rules place
    it, and never with an unsafe name or link."""

    # Not referenced by the verify section (which must name listed files).
    DROPPED = ("include/cudnn_backend.h", "lib/libcudnn_ops_infer.so",
               "lib/libcudnn_cnn_train_static.a")

    def setUp(self):
        self.ws = self.workspace()
        self.before = self.ws.snap(ignore=())
        self.folder = self.scratch("m")

    def manifest(self, data, pinned=True, name="nonexact.json"):
        def edit(doc):
            doc["files_exact"] = False
            doc["files"] = [f for f in doc["files"] if f["path"] not in self.DROPPED]
        if pinned:
            pin = dict(sha256=cddtest.sha256_bytes(data), size=len(data))
        else:
            pin = dict(sha256=None, size=None)
        return FIX.linux.manifest_variant(os.path.join(self.folder, name), edit, **pin)

    def archive_with(self, *extra):
        """The good tarball plus extra entries (maker(ctx) -> Entry)."""
        ctx = hostile_cases.Ctx(FIX.linux, self.ws.outside)
        data = cddtest.tar_xz_bytes(list(FIX.linux.entries) + [m(ctx) for m in extra])
        path = cddtest.write_bytes(os.path.join(self.folder, "x", FIX.linux.filename), data)
        return path, data

    def good(self):
        with open(FIX.linux.path, "rb") as f:
            return FIX.linux.path, f.read()

    def rejected(self, archive, manifest, codes, *extra):
        j = self.install(self.ws, FIX.linux, *extra, manifest=manifest, archive=archive,
                         expect=None)
        self.assertError(j, 3, codes)
        self.assertSameTree(self.before, self.ws.snap(IGNORE_LOCK))
        self.assertOutsideUntouched(self.ws)
        self.assertNoLeftovers(self.ws.tree)

    def test_unlisted_entries_of_a_pinned_archive_are_installed(self):
        archive, data = self.good()
        self.install(self.ws, FIX.linux, manifest=self.manifest(data), archive=archive)
        # Exactly as if the manifest had listed them.
        self.assertInstalled(self.ws, FIX.linux, self.before)
        self.assertReceiptMatches(self.ws, FIX.linux)
        self.cdd("uninstall", *self.ws.target_args, expect=0)
        self.assertSameTree(self.before, self.ws.snap(cddtest.IGNORE_LOCK_LOG))

    def test_pinned_by_sha256_option(self):
        archive, data = self.good()
        m = self.manifest(data, pinned=False)
        self.install(self.ws, FIX.linux, "--sha256", FIX.linux.sha256, manifest=m,
                     archive=archive)
        self.assertInstalled(self.ws, FIX.linux, self.before)

    def test_unpinned_archive_brings_no_unlisted_entry(self):
        archive, data = self.good()
        m = self.manifest(data, pinned=False)
        self.rejected(archive, m, ("UNPINNED", "ARCHIVE"))
        self.rejected(archive, m, ("ARCHIVE", "UNPINNED"), "--allow-unpinned")

    def test_unlisted_unsafe_name(self):
        archive, data = self.archive_with(
            lambda c: Entry(c.n("include/con.h"), FILE, b"/* con */\n"))
        self.rejected(archive, self.manifest(data), ("UNSAFE",))

    def test_unlisted_escape(self):
        archive, data = self.archive_with(
            lambda c: Entry(c.n("include/../../outside/evil.h"), FILE, b"evil"))
        self.rejected(archive, self.manifest(data), ("UNSAFE",))

    def test_unlisted_link_out_of_its_folder(self):
        archive, data = self.archive_with(
            lambda c: Entry(c.n("lib/libcudnn_x.so"), SYMLINK,
                            target="../../outside/sentinel.txt"))
        self.rejected(archive, self.manifest(data), ("UNSAFE",))

    def test_unlisted_absolute_link(self):
        archive, data = self.archive_with(
            lambda c: Entry(c.n("lib/libcudnn_y.so"), SYMLINK, target=c.outside))
        self.rejected(archive, self.manifest(data), ("UNSAFE",))

    def test_unlisted_entry_without_a_place(self):
        archive, data = self.archive_with(
            lambda c: Entry(c.n("bin/cudnn-tool"), FILE, b"\x7fELF tool", mode=0o755))
        self.rejected(archive, self.manifest(data), ("ARCHIVE", "UNSAFE"))

    def test_unlisted_hardlink(self):
        archive, data = self.archive_with(
            lambda c: Entry(c.n("lib/libcudnn_h.so.8"), cddtest.HARDLINK,
                            target=c.n("lib/libcudnn.so.8.5.0")))
        self.rejected(archive, self.manifest(data), ("UNSAFE",))

    def test_listed_entries_still_checked(self):
        ctx = hostile_cases.Ctx(FIX.linux, self.ws.outside)
        entries = hostile_cases.with_data(
            "lib/libcudnn.so.8.5.0", lambda d: cddtest.flip_byte(d, 50))(
                list(FIX.linux.entries), ctx)
        data = cddtest.tar_xz_bytes(entries)
        archive = cddtest.write_bytes(os.path.join(self.folder, "f", FIX.linux.filename), data)
        self.rejected(archive, self.manifest(data), ("CHECKSUM",))


if __name__ == "__main__":
    cddtest.main()
