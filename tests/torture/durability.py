#!/usr/bin/env python3
"""The durability order, checked from a trace of the real binary.

A killed process keeps the page cache, so no kill or fault loop can see a
missing fsync; only the order of the system calls can. This script runs one
install (into an empty CUDA tree), one upgrade (a newer archive over it) and
one uninstall under `strace -f -y`, and checks in each trace (rules R1-R4):

  R1  every file the command wrote and then renamed (a staged file, the
      journal's and any other atomic write's .tmp) was fsynced after its
      last write and before the rename;
  R2  the journal was published (journal.tmp -> journal, R1 for its text)
      and its folder .cudnn-deploy fsynced before the first change after it;
  R3  every folder whose entries the commit changed (mkdir, rename, unlink,
      symlink, exclusive create, in the tree and in .cudnn-deploy) was
      fsynced after its last change and before the commit record ("C"
      appended to the journal);
  R4  the commit record was fsynced before the first clean-up step.

A check that finds nothing to check fails too (no journal, no commit
record, no staged file in an install): a trace the parser misread must not
pass. Exit 0: the order is right; 1: violations (listed); 77: strace is
missing or cannot trace here (skipped, the reason printed).

    CDD_BIN=build/cudnn-deploy python3 tests/torture/durability.py [-v]
    python3 tests/torture/durability.py --check-trace TRACE --root TREE
"""

import argparse
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import stracelog  # noqa: E402

STATE = ".cudnn-deploy"
SKIP = 77
TRACE_SET = "trace=%file,%desc"

WRITES = ("write", "pwrite64", "writev", "pwritev", "pwritev2", "ftruncate",
          "fallocate")
SYNCS = ("fsync", "fdatasync")


def _join(base, name):
    if name.startswith("/"):
        return os.path.normpath(name)
    return os.path.normpath(os.path.join(base, name))


def _at(call, i, cwd):
    """The path named by the (dirfd, name) pair at args[i], args[i+1]."""
    d, n = call.args[i], call.args[i + 1]
    if not isinstance(n, str):
        return None
    if isinstance(d, stracelog.FdArg):
        return _join(d.path, n)
    return _join(cwd, n)   # AT_FDCWD


def _flags_of(call):
    for a in call.args[2:]:
        if isinstance(a, str) and "O_" in a:
            return a
    return ""


def namespace_change(call, cwd):
    """(kind, [paths]) when the call changed a folder's entries, else None.
    An open that may create is a change only with O_EXCL (the tool creates
    every new file that way; O_CREAT alone opens the lock or the log)."""
    n = call.name
    if n in ("renameat", "renameat2", "linkat"):
        return ("rename" if n != "linkat" else "link",
                [_at(call, 0, cwd), _at(call, 2, cwd)])
    if n == "rename":
        return ("rename", [_join(cwd, call.args[0]), _join(cwd, call.args[1])])
    if n in ("mkdirat", "unlinkat"):
        return ("mkdir" if n == "mkdirat" else "unlink", [_at(call, 0, cwd)])
    if n in ("mkdir", "unlink", "rmdir"):
        return (n, [_join(cwd, call.args[0])])
    if n == "symlinkat":
        return ("symlink", [_at(call, 1, cwd)])
    if n == "symlink":
        return ("symlink", [_join(cwd, call.args[1])])
    if n in ("openat", "openat2"):
        fl = _flags_of(call)
        if "O_CREAT" in fl and "O_EXCL" in fl:
            return ("create", [_at(call, 0, cwd)])
    if n == "open":
        fl = _flags_of(call) or (call.args[1] if len(call.args) > 1 else "")
        if "O_CREAT" in fl and "O_EXCL" in fl:
            return ("create", [_join(cwd, call.args[0])])
    return None


def _under(path, root):
    return path == root or path.startswith(root + "/")


class Result(object):
    def __init__(self):
        self.violations = []
        self.renamed_written = 0   # files R1 checked
        self.folders = 0           # folder syncs R3 checked
        self.transactions = 0      # journals published
        self.commits = 0           # commit records (R4)

    def bad(self, rule, text):
        self.violations.append("%s: %s" % (rule, text))


def check(calls, root, cwd="/"):
    """Apply R1-R4 to the calls (stracelog.parse) that touched root."""
    root = os.path.normpath(root)
    state = os.path.join(root, STATE)
    journal = os.path.join(state, "journal")
    res = Result()
    last_write, last_sync = {}, {}
    # The transaction in progress: index of the journal's publication, the
    # changes since (index, folder), the commit record's index.
    txn = None

    def rel(p):
        return os.path.relpath(p, root)

    for c in calls:
        if c.ret is None or (c.ret < 0 and c.err):
            continue
        fd = c.args[0] if c.args and isinstance(c.args[0], stracelog.FdArg) else None
        if c.name in WRITES and fd and _under(fd.path, root):
            last_write[fd.path] = c.index
            if txn and fd.path == journal and txn["published"] is not None:
                if txn["commit"] is None:
                    txn["commit"] = c.index
                    res.commits += 1
                    # R3: every folder changed since the publication.
                    for folder, at in sorted(txn["changed"].items()):
                        res.folders += 1
                        if last_sync.get(folder, -1) < at:
                            res.bad("R3", "folder %s changed (call %d) and not "
                                    "fsynced before the commit record (call %d)"
                                    % (rel(folder), at, c.index))
            continue
        if c.name in SYNCS and fd and _under(fd.path, root):
            last_sync[fd.path] = c.index
            if txn and fd.path == journal and txn["commit"] is not None:
                txn["commit_synced"] = c.index
            if txn and fd.path == state and txn["published"] is not None \
                    and txn["state_synced"] is None and not txn["changed"]:
                txn["state_synced"] = c.index
            continue
        ch = namespace_change(c, cwd)
        if not ch:
            continue
        kind, paths = ch
        if not any(p and _under(p, root) for p in paths):
            continue
        if kind == "rename":
            src, dst = paths
            if src in last_write:
                res.renamed_written += 1
                if last_sync.get(src, -1) < last_write[src]:
                    res.bad("R1", "%s written (call %d) and renamed to %s "
                            "(call %d) without an fsync in between"
                            % (rel(src), last_write[src], rel(dst), c.index))
            # What is known of src (and of everything under it) moves.
            for d in (last_write, last_sync):
                for p in [p for p in d if _under(p, src)]:
                    d[dst + p[len(src):]] = d.pop(p)
            if dst == journal:
                res.transactions += 1
                txn = {"published": c.index, "changed": {}, "commit": None,
                       "commit_synced": None, "state_synced": None,
                       "first_change": None}
                continue
        if txn is None:
            continue
        if txn["commit"] is None:
            if txn["first_change"] is None:
                txn["first_change"] = c.index
                if txn["state_synced"] is None:
                    res.bad("R2", "first change after the journal (call %d: %s "
                            "%s) before %s/ was fsynced"
                            % (c.index, kind, rel(paths[-1]), STATE))
            for p in paths:
                txn["changed"][os.path.dirname(p)] = c.index
        else:
            # The first clean-up step: the commit record must be on disk.
            if txn["commit_synced"] is None:
                res.bad("R4", "clean-up (call %d: %s %s) before the commit "
                        "record was fsynced" % (c.index, kind, rel(paths[-1])))
            txn = None
    if txn and txn["commit"] is not None and txn["commit_synced"] is None:
        res.bad("R4", "the commit record was never fsynced")
    return res


def trace_cmd(trace, argv):
    return ["strace", "-f", "-y", "-qq", "-o", trace, "-e", TRACE_SET] + argv


def strace_problem():
    """None when strace can trace a child here, else why not."""
    if not shutil.which("strace"):
        return "strace is not installed (scripts/install-deps.sh --torture)"
    p = subprocess.run(["strace", "-qq", "-o", "/dev/null", "-e", "trace=none",
                        "true"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE)
    if p.returncode != 0:
        return "strace cannot trace here: %s" % p.stderr.decode(
            "utf-8", "replace").strip().splitlines()[-1:]
    return None


def run_scenario(bin_path, work, verbose=False):
    """install, upgrade, uninstall under strace; [(name, Result)]."""
    os.environ["CDD_BIN"] = bin_path
    os.environ.setdefault("CDD_TEST_TMP", os.path.join(work, "e2e"))
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
    from cddtest import FIX, Workspace, install_args, clean_env  # noqa: E402
    ws = Workspace(os.path.join(work, "ws"))
    steps = [("install", install_args(ws, FIX.linux_mini_old)),
             ("upgrade", install_args(ws, FIX.linux_mini)),
             ("uninstall", ["uninstall"] + ws.target_args)]
    out = []
    for name, args in steps:
        trace = os.path.join(work, "trace-%s.txt" % name)
        p = subprocess.run(trace_cmd(trace, [bin_path] + args),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=clean_env())
        if p.returncode != 0:
            raise RuntimeError("%s exited %d: %s" % (name, p.returncode,
                                                     p.stderr.decode()[-2000:]))
        res = check(stracelog.parse_file(trace), ws.tree, cwd=os.getcwd())
        if res.transactions == 0:
            res.bad("parse", "no journal was published: nothing checked")
        if res.commits == 0:
            res.bad("parse", "no commit record: nothing checked")
        if name != "uninstall" and res.renamed_written == 0:
            res.bad("parse", "no written file was renamed: nothing checked")
        out.append((name, res))
        if verbose:
            print("  trace: %s" % trace)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("CDD_BIN"))
    ap.add_argument("--work", default=None, help="scratch folder (kept)")
    ap.add_argument("--check-trace", help="check this trace file only")
    ap.add_argument("--root", help="with --check-trace: the tree's root")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args()
    if a.check_trace:
        res = check(stracelog.parse_file(a.check_trace), a.root)
        results = [(a.check_trace, res)]
    else:
        why = strace_problem()
        if why:
            print("durability: skipped: %s" % why)
            return SKIP
        if not a.bin:
            print("durability: set CDD_BIN or --bin", file=sys.stderr)
            return 2
        work = a.work or os.path.join(os.environ.get("CDD_TEST_TMP") or "/tmp",
                                      "torture-durability-%d" % os.getpid())
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        results = run_scenario(os.path.abspath(a.bin), work, a.verbose)
        if not a.work:
            shutil.rmtree(work, ignore_errors=True)
    failed = 0
    for name, res in results:
        status = "ok" if not res.violations else "FAIL"
        print("durability %-9s %s: %d written files renamed (R1), %d journal(s) "
              "(R2), %d folder syncs before the commit record (R3), %d commit "
              "record(s) (R4), %d violation(s)"
              % (name, status, res.renamed_written, res.transactions,
                 res.folders, res.commits, len(res.violations)))
        for v in res.violations[:20]:
            print("    " + v)
        if len(res.violations) > 20:
            print("    ... and %d more" % (len(res.violations) - 20))
        failed += bool(res.violations)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
