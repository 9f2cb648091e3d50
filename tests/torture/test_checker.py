#!/usr/bin/env python3
"""The durability checker (durability.py, stracelog.py) on synthetic
traces: a transaction in the right order passes, and each rule fails when
the step it guards is missing or late. The real binary's traces are
checked by durability.py itself; this proves the checker can fail, rule by
rule, without building mutants (tests/torture/mutants.sh does that).

    python3 tests/torture/test_checker.py -v
"""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import durability  # noqa: E402
import stracelog  # noqa: E402

T = "/t"
S = "/t/.cudnn-deploy"
G = S + "/stage-1"

# One install of one file, as the real binary does it (see a trace of
# `strace -f -y`): stage, fsync; journal.tmp, fsync, rename, folder fsync;
# mkdir, rename into the tree, folder fsyncs; "C", fsync; clean-up.
GOOD = [
    '100 mkdirat(3<%s>, "stage-1", 0755) = 0' % S,
    '100 openat(4<%s>, "a.h", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644) = 5<%s/a.h>' % (G, G),
    '101 write(5<%s/a.h>, "x"..., 10) = 10' % G,
    '100 fsync(5<%s/a.h>) = 0' % G,
    '100 openat(3<%s>, "journal.tmp", O_WRONLY|O_CREAT|O_EXCL|O_NOFOLLOW|O_CLOEXEC, 0644) = 6<%s/journal.tmp>' % (S, S),
    '100 write(6<%s/journal.tmp>, "cudnn-deploy-journal 2"..., 100) = 100' % S,
    '100 fsync(6<%s/journal.tmp>) = 0' % S,
    '100 renameat(3<%s>, "journal.tmp", 3<%s>, "journal") = 0' % (S, S),
    '100 fsync(3<%s>) = 0' % S,
    '100 mkdirat(7<%s>, "include", 0755) = 0' % T,
    '100 renameat(4<%s>, "a.h", 8<%s/include>, "a.h") = 0' % (G, T),
    '100 fsync(7<%s>) = 0' % T,
    '100 fsync(8<%s/include>) = 0' % T,
    '100 fsync(4<%s>) = 0' % G,
    '100 fsync(3<%s>) = 0' % S,
    '100 openat(3<%s>, "journal", O_WRONLY|O_CREAT|O_APPEND|O_NOFOLLOW|O_CLOEXEC, 0644) = 9<%s/journal>' % (S, S),
    '100 write(9<%s/journal>, "C\\n", 2) = 2' % S,
    '100 fsync(9<%s/journal>) = 0' % S,
    '100 unlinkat(3<%s>, "stage-1", AT_REMOVEDIR) = 0' % S,
    '100 unlinkat(3<%s>, "journal", 0) = 0' % S,
    '100 fsync(3<%s>) = 0' % S,
]


def check(lines):
    return durability.check(stracelog.parse("\n".join(lines)), T)


def without(match, lines=GOOD):
    out = [l for l in lines if match not in l]
    assert len(out) == len(lines) - 1, match
    return out


def rules(res):
    return sorted(set(v.split(":")[0] for v in res.violations))


class Checker(unittest.TestCase):

    def test_good_order_passes(self):
        res = check(GOOD)
        self.assertEqual(res.violations, [])
        self.assertEqual((res.renamed_written, res.transactions, res.commits),
                         (2, 1, 1))
        # T (mkdir), T/include, the stage and .cudnn-deploy (rename).
        self.assertEqual(res.folders, 3)

    def test_r1_staged_file_not_fsynced(self):
        self.assertEqual(rules(check(without("fsync(5<"))), ["R1"])

    def test_r1_fsync_before_the_last_write(self):
        lines = list(GOOD)
        i = lines.index('100 fsync(5<%s/a.h>) = 0' % G)
        lines.insert(i + 1, '101 pwrite64(5<%s/a.h>, "y", 1, 9) = 1' % G)
        self.assertEqual(rules(check(lines)), ["R1"])

    def test_r1_journal_tmp_not_fsynced(self):
        self.assertEqual(rules(check(without("fsync(6<"))), ["R1"])

    def test_r2_journal_folder_not_synced_before_first_change(self):
        lines = list(GOOD)
        i = lines.index('100 fsync(3<%s>) = 0' % S)
        del lines[i]
        self.assertEqual(rules(check(lines)), ["R2"])

    def test_r3_tree_folder_not_synced(self):
        self.assertEqual(rules(check(without("fsync(8<"))), ["R3"])

    def test_r3_folder_synced_after_the_commit_record(self):
        lines = without("fsync(8<")
        i = lines.index('100 fsync(9<%s/journal>) = 0' % S)
        lines.insert(i, '100 fsync(8<%s/include>) = 0' % T)
        self.assertEqual(rules(check(lines)), ["R3"])

    def test_r4_commit_record_not_synced(self):
        self.assertEqual(rules(check(without("fsync(9<"))), ["R4"])

    def test_failed_fsync_does_not_count(self):
        lines = [l.replace("fsync(5<%s/a.h>) = 0" % G,
                           "fsync(5<%s/a.h>) = -1 EIO (Input/output error)" % G)
                 for l in GOOD]
        self.assertEqual(rules(check(lines)), ["R1"])

    def test_other_trees_are_ignored(self):
        lines = GOOD + ['100 renameat(3</elsewhere>, "a", 3</elsewhere>, "b") = 0']
        self.assertEqual(check(lines).violations, [])


class Parser(unittest.TestCase):

    def test_unfinished_and_resumed_join_where_they_finish(self):
        calls = stracelog.parse("\n".join([
            '7 fsync(5</t/a> <unfinished ...>',
            '8 write(6</t/b>, "x", 1) = 1',
            '7 <... fsync resumed>) = 0',
        ]))
        self.assertEqual([c.name for c in calls], ["write", "fsync"])
        self.assertEqual(calls[1].args[0], stracelog.FdArg(5, "/t/a"))

    def test_arguments(self):
        c = stracelog.parse('1 renameat(3</t/x y>, "a\\"b\\n", AT_FDCWD, '
                            '"/t/c") = -1 ENOENT (No such file or directory)')[0]
        self.assertEqual(c.args, [stracelog.FdArg(3, "/t/x y"), 'a"b\n',
                                  "AT_FDCWD", "/t/c"])
        self.assertEqual((c.ret, c.err), (-1, "ENOENT"))

    def test_openat2_exclusive_create_is_a_change(self):
        c = stracelog.parse('1 openat2(3</t>, "f", {flags=O_WRONLY|O_CREAT|O_EXCL, '
                            'mode=0644, resolve=RESOLVE_BENEATH}, 24) = 4</t/f>')[0]
        self.assertEqual(durability.namespace_change(c, "/"), ("create", ["/t/f"]))


if __name__ == "__main__":
    unittest.main()
