"""The unchanged re-install trusts identity records instead of bytes.

After a full hash, the tree's state (.cudnn-deploy/identity) records the
archive's and each installed file's identity (device, inode, size, mtime and
ctime in ns) next to its digest. An unchanged re-install then reads no byte
of the archive or of the tree, which is proved by tracing every read(2)
and pread(2) of the process (strace -y names each descriptor's file).

From the attacker's side: a byte changed in the archive or in an installed
file, with the same size and the mtime put back with utime(), still changes
the ctime, so the record no longer vouches and the bytes are hashed again;
a record taken within the racy window after the file's last change is
never trusted; a malformed or forged record file costs a hash, nothing
else; --check-tree ignores every record."""

import json
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import (BIN, FIX, WINDOWS, CddTestCase, install_args,  # noqa: E402
                     parse_one_object, plan_of)

IDENTITY = os.path.join(cddtest.STATE, "identity")
RACY_S = 2.1  # CDD_IDCACHE_RACY_NS, and a little more
READ_RE = re.compile(r"^\d+\s+(?:read|pread64|readv|preadv2?)\((\d+)<([^>]*)>"
                     r".*\)\s+=\s+(\d+)")


def have_strace():
    return shutil.which("strace") is not None


def flip_byte_keep_mtime(path, off=10):
    st = os.lstat(path)
    with open(path, "r+b") as f:
        f.seek(off)
        b = f.read(1)
        f.seek(off)
        f.write(bytes([b[0] ^ 0xFF]))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    now = os.lstat(path)
    assert now.st_size == st.st_size and now.st_mtime_ns == st.st_mtime_ns


class Identity(CddTestCase):

    def setUp(self):
        super().setUp()
        if not have_strace():
            raise unittest.SkipTest("needs strace")
        fx = FIX.windows
        d = self.scratch("arch")
        self.archive = os.path.join(d, fx.filename)
        shutil.copyfile(fx.path, self.archive)
        self.archive_size = os.path.getsize(self.archive)
        self.ws = self.workspace(platform=WINDOWS)

    def traced(self, *extra, expect=0):
        """install --json under strace: (doc, {file: bytes read})."""
        log = os.path.join(self.scratch("trace"), "t%f.log" % time.time())
        args = install_args(self.ws, FIX.windows, None, self.archive, *extra)
        cmd = ["strace", "-f", "-qq", "-y", "-o", log,
               "-e", "trace=read,pread64,readv,preadv,preadv2",
               BIN, "--json"] + [str(a) for a in args]
        env = cddtest.clean_env(None)
        # LeakSanitizer cannot run under ptrace: the ASan build's leak check
        # is off for the traced run only (every other run keeps it).
        if env.get("ASAN_OPTIONS"):
            env["ASAN_OPTIONS"] += ":detect_leaks=0"
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=120)
        if p.returncode != expect:
            self.fail("exit %d, expected %d\n%s" % (p.returncode, expect,
                                                   p.stderr.decode()[-2000:]))
        doc = parse_one_object(p.stdout.decode())
        reads = {}
        with open(log) as f:
            for line in f:
                m = READ_RE.match(line)
                if m:
                    reads[m.group(2)] = reads.get(m.group(2), 0) + int(m.group(3))
        return doc, reads

    def archive_read(self, reads):
        return reads.get(os.path.realpath(self.archive), 0)

    def tree_read(self, reads):
        root = os.path.realpath(self.ws.tree) + os.sep
        state = root + cddtest.STATE + os.sep
        # version.json is the target check's, not an installed file.
        return {p: n for p, n in reads.items()
                if p.startswith(root) and not p.startswith(state) and n
                and os.path.basename(p) not in ("version.json", "version.txt")}

    def settled(self):
        """Installed, then re-installed once the files are past the racy
        window: every record written and trusted from now on."""
        time.sleep(RACY_S)              # the archive copy settles
        doc, _ = self.traced()
        self.assertIs(doc["changed"], True)
        time.sleep(RACY_S)              # the installed files settle
        doc, reads = self.traced()
        self.assertIs(doc["changed"], False)
        self.assertTrue(os.path.isfile(self.ws.path(IDENTITY)))
        # The archive's record came from the full install's hash: trusted.
        self.assertEqual(self.archive_read(reads), 0)

    def test_unchanged_reinstall_reads_no_archive_or_tree_byte(self):
        self.settled()
        before = self.ws.snap()
        doc, reads = self.traced()
        self.assertIs(doc["changed"], False)
        self.assertEqual(set(plan_of(doc).values()), {"unchanged"})
        self.assertEqual(self.archive_read(reads), 0)
        self.assertEqual(self.tree_read(reads), {})
        self.assertSameTree(before, self.ws.snap())
        self.assertNoLeftovers(self.ws.tree)

    def test_archive_byte_changed_same_size_and_mtime_is_refused(self):
        self.settled()
        flip_byte_keep_mtime(self.archive, self.archive_size // 2)
        doc, reads = self.traced(expect=3)
        self.assertEqual(doc["error"]["code"], "CHECKSUM")
        self.assertEqual(self.archive_read(reads), self.archive_size)

    def test_installed_byte_changed_same_size_and_mtime_is_repaired(self):
        self.settled()
        p = self.ws.path("bin/cudnn64_8.dll")
        flip_byte_keep_mtime(p)
        doc, _ = self.traced()
        self.assertIs(doc["changed"], True)
        self.assertEqual(plan_of(doc)["bin/cudnn64_8.dll"], "replace")
        self.assertEqual(cddtest.sha256_file(p), cddtest.sha256_bytes(
            FIX.windows.files["bin/cudnn64_8.dll"].data))

    def test_racy_records_are_hashed_again(self):
        # Archive copied and installed at once: its record is racy.
        doc, reads = self.traced()
        self.assertIs(doc["changed"], True)
        doc, reads = self.traced()
        self.assertIs(doc["changed"], False)
        self.assertEqual(self.archive_read(reads), self.archive_size)
        # The installed files were just written: hashed, not trusted.
        self.assertTrue(self.tree_read(reads))

    def test_check_tree_ignores_the_records(self):
        self.settled()
        doc, reads = self.traced("--check-tree")
        self.assertIs(doc["changed"], False)
        self.assertEqual(self.archive_read(reads), self.archive_size)
        self.assertTrue(self.tree_read(reads))

    def test_malformed_record_file_costs_a_hash(self):
        self.settled()
        p = self.ws.path(IDENTITY)
        with open(p) as f:
            text = f.read()
        for bad in ("garbage\n", text.replace("a ", "a x", 1),
                    text[:-1], text + "f 00 1 2 3 4 5 6 ../x\n"):
            with open(p, "w") as f:
                f.write(bad)
            doc, reads = self.traced()
            self.assertIs(doc["changed"], False)
            self.assertEqual(self.archive_read(reads), self.archive_size,
                             repr(bad[:40]))

    def test_forged_digest_in_a_record_is_not_believed(self):
        self.settled()
        p = self.ws.path(IDENTITY)
        with open(p) as f:
            lines = f.read().splitlines()
        arch = [i for i, l in enumerate(lines) if l.startswith("a ")][0]
        parts = lines[arch].split(" ")
        # A record for the archive's true identity that names another
        # digest than the receipt's: it vouches for nothing, so the archive
        # is hashed (and the pins decide).
        parts[1] = "0" * 64
        lines[arch] = " ".join(parts)
        with open(p, "w") as f:
            f.write("\n".join(lines) + "\n")
        doc, reads = self.traced()
        self.assertEqual(self.archive_read(reads), self.archive_size)
        self.assertIs(doc["changed"], False)


if __name__ == "__main__":
    cddtest.main()
