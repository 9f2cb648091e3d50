"""Tree snapshots and the state folder: snapshot() (every path -> type,
content hash or link target, mode), comparable_state() for before/after
comparisons across runs, diff_snapshots(), leftovers() in .cudnn-deploy/,
the receipt and log readers, and LockHolder, which holds a tree's lock as
another cudnn-deploy would.
"""

import json
import os
import stat
import subprocess
import sys
import threading

from synth import sha256_file

STATE = ".cudnn-deploy"
LOCK = STATE + "/lock"
LOG = STATE + "/log.jsonl"
RECEIPT = STATE + "/receipt.json"
MANIFEST_COPY = STATE + "/manifest.json"
BACKUP = STATE + "/backup"
# Paths a snapshot may ignore: the lock file stays forever (and its content
# is the last holder's pid); the log grows by one line per change.
# The identity records (.cudnn-deploy/identity) are a cache of digests that
# any run may renew (docs/design.md): never part of a tree's comparable state.
IDENTITY = STATE + "/identity"
# The verify record (.cudnn-deploy/verified.json): rewritten by every verify
# that can take the lock, with its time; a report, never part of what a
# tree holds (docs/verification.md).
VERIFIED = STATE + "/verified.json"
IGNORE_LOCK = (LOCK, IDENTITY, VERIFIED)
IGNORE_LOCK_LOG = (LOCK, LOG, IDENTITY, VERIFIED)


def snapshot(root, ignore=(), drop_empty_state=True):
    """Every path under root (relative, '/'-separated) -> (type, content,
    mode): ("file", sha256, mode), ("link", target, None), ("dir", None,
    mode), ("other", None, st_mode). None when root does not exist.
    ignore: relative paths left out. drop_empty_state: leave out
    .cudnn-deploy/backup and .cudnn-deploy themselves when nothing else
    remains in them (the lock may stay; nothing else may)."""
    if not os.path.lexists(root):
        return None
    snap = {}
    ignore = set(ignore)

    def walk(abs_dir, rel):
        for name in sorted(os.listdir(abs_dir)):
            p = os.path.join(abs_dir, name)
            r = rel + name
            if r in ignore:
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                snap[r] = ("link", os.readlink(p), None)
            elif stat.S_ISDIR(st.st_mode):
                snap[r] = ("dir", None, stat.S_IMODE(st.st_mode))
                walk(p, r + "/")
            elif stat.S_ISREG(st.st_mode):
                snap[r] = ("file", sha256_file(p), stat.S_IMODE(st.st_mode))
            else:
                snap[r] = ("other", None, st.st_mode)

    walk(root, "")
    if drop_empty_state:
        for d in (BACKUP, STATE):
            if d in snap and snap[d][0] == "dir" and \
                    not any(k.startswith(d + "/") for k in snap):
                del snap[d]
    return snap


def normalize(snap):
    """Make two snapshots of the same state comparable across runs: the
    receipt's content (time, transaction id) is volatile, and backup folders
    are named by transaction id."""
    out = {}
    for p, v in snap.items():
        parts = p.split("/")
        if p.startswith(BACKUP + "/"):
            parts[2] = "<txn>"
            p = "/".join(parts)
        if p == RECEIPT or (p.startswith(BACKUP + "/") and p.endswith("/" + RECEIPT)):
            v = ("file", "<volatile>", v[2])
        out[p] = v
    return out


def comparable_state(root):
    """A tree's state for before/after comparisons across runs: the snapshot
    without lock and log, backup folders' ids normalised, and the receipt
    reduced to what it says was installed (its time and transaction id
    differ from run to run)."""
    snap = snapshot(root, IGNORE_LOCK_LOG)
    if snap is None:
        return None
    out = normalize(snap)
    for p in snap:
        if p == RECEIPT or (p.startswith(BACKUP + "/") and p.endswith("/" + RECEIPT)):
            try:
                with open(os.path.join(root, p)) as f:
                    files = sorted((e.get("path"), e.get("sha256"),
                                    e.get("symlink", e.get("target")))
                                   for e in json.load(f)["files"])
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                files = "unreadable receipt: %s" % e
            out[normalize({p: snap[p]}).popitem()[0]] = ("receipt", repr(files), None)
    return out


def without_state(snap):
    return {p: v for p, v in snap.items()
            if p != STATE and not p.startswith(STATE + "/")}


def diff_snapshots(a, b, limit=30):
    """Readable differences between snapshots a (expected) and b (actual)."""
    if a is None or b is None:
        return ["expected %s, got %s" % ("nothing" if a is None else "a tree",
                                         "nothing" if b is None else "a tree")]
    lines = []
    for p in sorted(set(a) | set(b)):
        if p not in b:
            lines.append("missing:    %s %r" % (p, a[p]))
        elif p not in a:
            lines.append("unexpected: %s %r" % (p, b[p]))
        elif a[p] != b[p]:
            lines.append("changed:    %s %r -> %r" % (p, a[p], b[p]))
    if len(lines) > limit:
        lines = lines[:limit] + ["... and %d more" % (len(lines) - limit)]
    return lines


STATE_ALLOWED = ("lock", "receipt.json", "manifest.json", "log.jsonl", "backup",
                 "identity", "verified.json")


def leftovers(root, allow_backup=False):
    """Things in .cudnn-deploy/ that must not outlive a command: stage-*,
    journal*, *.tmp, anything unknown, and a non-empty backup/ unless
    allow_backup. Empty list when clean."""
    d = os.path.join(root, STATE)
    if not os.path.isdir(d):
        return []
    bad = []
    for name in sorted(os.listdir(d)):
        if name == "backup":
            inside = []
            for dp, dn, fn in os.walk(os.path.join(d, name)):
                inside += fn + [x for x in dn if os.path.islink(os.path.join(dp, x))]
            if inside and not allow_backup:
                bad.append("backup/ holds %s" % sorted(inside)[:5])
        elif name not in STATE_ALLOWED:
            bad.append(name)
    return bad


def backup_dirs(root):
    d = os.path.join(root, BACKUP)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def read_receipt(root):
    with open(os.path.join(root, RECEIPT)) as f:
        return json.load(f)


def receipt_files(receipt):
    """{path: entry} of a receipt (files: [{path, sha256, size} or
    {path, symlink|target}])."""
    files = receipt.get("files")
    if not isinstance(files, list):
        raise AssertionError("receipt has no files list: %r" % sorted(receipt))
    return {f["path"]: f for f in files}


def read_log(root):
    p = os.path.join(root, LOG)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(line) for line in f if line.strip()]


class LockHolder(object):
    """Hold a tree's lock as another cudnn-deploy would: an fcntl (POSIX
    record) lock on .cudnn-deploy/lock, its pid in the file. The lock is held
    by a small helper process, not by the test process: POSIX record locks
    vanish when the holder closes *any* descriptor of the file, which a
    snapshot of the tree does. pid: the holder's pid."""

    SCRIPT = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "os.ftruncate(fd, 0)\n"
        "os.pwrite(fd, b'%d\\n' % os.getpid(), 0)\n"
        "sys.stdout.write('locked\\n')\n"
        "sys.stdout.flush()\n"
        "sys.stdin.read()\n")

    def __init__(self, root):
        self.path = os.path.join(root, LOCK)
        self.proc = None
        self.pid = None
        self._mutex = threading.Lock()

    def acquire(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", self.SCRIPT, self.path],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if line != b"locked\n":
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the lock helper could not take %s" % self.path)
        self.pid = self.proc.pid
        return self

    def release(self):
        with self._mutex:
            if self.proc is not None:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
                self.proc.stdout.close()
                self.proc = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
