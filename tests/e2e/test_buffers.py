"""Names and paths at and past their bounds (issue 18): a file name of 255
bytes (the most a folder entry holds) works end to end, and a tree path
longer than Linux's PATH_MAX (4096) is refused with a clear message naming
the cause -- never cut to a shorter, different path, never "out of memory"
(what a fixed 4096-byte getcwd buffer used to say)."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import FIX, IGNORE_LOCK_LOG, CddTestCase  # noqa: E402


@unittest.skipIf(os.name != "posix" or os.environ.get("CDD_WINE"),
                 "POSIX path bounds")
class LongNames(CddTestCase):

    def test_tree_under_a_255_byte_folder_name(self):
        ws = self.workspace(name="n" * 255)
        self.assertEqual(len(os.path.basename(os.path.dirname(ws.tree))), 255)
        before = ws.snap(IGNORE_LOCK_LOG)
        self.install(ws, FIX.linux)
        args = ws.target_args
        self.cdd("verify", "--level", "files", *args, expect=0)
        self.cdd("status", "--check", *args, expect=0)
        self.cdd("uninstall", *args, expect=0)
        self.assertSameTree(before, ws.snap(IGNORE_LOCK_LOG))
        self.assertOutsideUntouched(ws)

    def test_tree_path_longer_than_path_max_is_refused_clearly(self):
        top = self.scratch("deep")
        # Made one level at a time, relative to the last: the whole path is
        # longer than any single call may name.
        fd = os.open(top, os.O_RDONLY)
        comp = "d" * 200
        for _ in range(22):
            os.mkdir(comp, dir_fd=fd)
            nfd = os.open(comp, os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = nfd
        old = os.getcwd()
        os.fchdir(fd)
        try:
            self.assertGreater(len(os.getcwd()), 4096)
            res = self.cdd("status", "--cuda-root", ".", expect=(3, 4))
        finally:
            os.chdir(old)
            os.close(fd)
        self.assertIn("too long", res.err)
        self.assertNotIn("out of memory", res.err)


if __name__ == "__main__":
    cddtest.main()
