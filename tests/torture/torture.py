#!/usr/bin/env python3
"""The outside-in fault campaign (issue 14): the real binary, without the
internal fault hook (`make torture` runs it on the release build), attacked
from outside, and after each trial the tree compared (paths, types, modes,
sizes, sha256, link targets) with the "before" and "after" states of one
clean run.

Categories (--only NAME[,NAME]):
  kill        strace -e inject=SYSCALL:signal=SIGKILL:when=K for every K of
              every disk-changing system call of install, upgrade, uninstall
              and an uninstall that restores an upgrade's backups (sampled
              evenly to at most --max-kills per command);
              then `recover`: before or after, nothing left over
  errno       the same points with error=ENOSPC, EIO, EACCES, EROFS, EDQUOT,
              EMFILE on the calls that can return them: exit 4 and exactly
              "before" with no recovery, or exit 0 and "after"
  readerr     EIO on every read (tar and zip installs): exit 4 with IO,
              never a "damaged archive" (exit 3)
  malloc      the N-th heap allocation returns NULL (tests/shim/failmalloc.c,
              LD_PRELOAD) for every N of an install, uninstall and verify:
              no crash; exit as a clean run or 4 with one "out of memory";
              tree before (recover where a journal was left) or after;
              verify changes nothing
  fullfs      a real small file system (tmpfs; ext4 on a loop device) filled
              to the byte where each command starts to succeed, and points
              below it: exit 4 and "before", or exit 0 and "after"
  recover     recoveries killed at every K of their own calls, from trees
              left mid-commit (roll-back) and after the commit record (roll
              forward); the next recover ends where a clean one does
  signals     SIGINT / SIGTERM at random times during an upgrade
  concurrent  rounds of 2 and of 6 installs started at once on one tree: one
              wins, each loser fails with LOCKED naming a real holder's pid
  durability  the fsync order of one install, upgrade, uninstall
              (durability.py)

What the machine cannot do is skipped with the reason (no strace, no mount).
Figures: one line per category; --json FILE writes them for
docs/reliability.md. Exit 0 when no trial failed.

    python3 tests/torture/torture.py --bin build/cudnn-deploy [--fast]

The malloc sweep in parallel (issue 18; it needs no strace):
    torture.py --only malloc --workers 16 --malloc-stride 3 --malloc-offset 0 \
        --deadline 540 --json malloc.json
--workers N runs its trials N at a time; --deadline SECONDS starts none
after that, and the figures name the Ns not reached (exit 0 unless a trial
failed). tests/device/campaign.sh runs it on the device.
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(os.path.dirname(HERE), "e2e")
SKIP = 77

# What a command does to a disk, as system calls (strace's names; each has
# its own invocation counter per thread, so each is injected alone).
CHANGING = ("openat", "openat2", "write", "pwrite64", "ftruncate", "fallocate",
            "fchmod", "fsync", "renameat", "renameat2", "mkdirat", "unlinkat",
            "symlinkat", "close")
# Which calls can return which error (a file system would never answer
# mkdirat with EMFILE, nor write with EACCES).
ERRNO_CALLS = {
    "ENOSPC": ("openat", "openat2", "write", "pwrite64", "fallocate", "fsync",
               "renameat", "mkdirat", "symlinkat"),
    "EIO": ("openat", "openat2", "write", "fsync", "close", "renameat",
            "mkdirat", "unlinkat", "symlinkat", "read", "getdents64"),
    "EACCES": ("openat", "openat2", "renameat", "mkdirat", "unlinkat",
               "symlinkat"),
    "EROFS": ("openat", "openat2", "renameat", "mkdirat", "unlinkat",
              "symlinkat", "fchmod", "ftruncate"),
    "EDQUOT": ("openat", "openat2", "write", "fallocate", "mkdirat",
               "symlinkat", "fsync"),
    "EMFILE": ("openat", "openat2"),
}
TRACE_SET = "trace=%file,%desc,fsync"


# The commands the kill and errno loops attack.
KILL_SCENARIOS = ("install", "upgrade", "uninstall", "uninstall_upgrade")


def error_code(out):
    """The error code of a --json answer, or what is wrong with it."""
    try:
        return json.loads(out)["error"]["code"]
    except (ValueError, KeyError, TypeError):
        return "no JSON error"


def sample(points, n):
    """At most n of points, evenly spread, first and last kept."""
    if len(points) <= n:
        return list(points)
    if n <= 1:
        return [points[-1]]
    step = (len(points) - 1) / float(n - 1)
    return [points[int(round(i * step))] for i in range(n)]


class Stats(object):
    def __init__(self, name, what):
        self.name, self.what = name, what
        self.trials = 0
        self.failures = []
        self.notes = []
        self.skipped = None
        self.cut = False
        self.seconds = 0.0

    def fail(self, what, why):
        self.failures.append("%s: %s" % (what, why))

    def line(self):
        if self.skipped:
            return "%-11s skipped: %s" % (self.name, self.skipped)
        return "%-11s %5d trials, %d failures  (%s; %.0f s)%s" % (
            self.name, self.trials, len(self.failures), self.what, self.seconds,
            "".join("\n              " + n for n in self.notes))


class Campaign(object):

    def __init__(self, args):
        self.a = args
        self.bin = os.path.abspath(args.bin)
        self.work = os.path.abspath(args.work)
        self.rng = random.Random(args.seed)
        self.n = 0
        self._ref = {}
        self._mref = {}
        self._points = {}
        self.t0 = time.time()
        self.deadline = None
        # Trials run in RAM where there is room (kills and faults test the
        # logic of journal and recovery, not the disk).
        shm = "/dev/shm"
        fast = None
        try:
            st = os.statvfs(shm)
            if os.access(shm, os.W_OK) and st.f_bavail * st.f_frsize >= (256 << 20):
                fast = os.path.join(shm, "cdd-torture-%d" % os.getpid())
        except OSError:
            pass
        self.trial_root = fast or os.path.join(self.work, "trials")
        os.makedirs(self.trial_root, exist_ok=True)
        from cddtest import FIX, Workspace, install_args
        self.FIX, self.Workspace, self.install_args = FIX, Workspace, install_args
        self.templates = {}

    def close(self):
        if self.trial_root.startswith("/dev/shm/"):
            shutil.rmtree(self.trial_root, ignore_errors=True)

    # -- trees --------------------------------------------------------------

    SCENARIOS = {
        # name: (fixtures installed first, command, fixture of an install)
        "install": ((), "install", "linux_mini"),
        "upgrade": (("linux_mini_old",), "install", "linux_mini"),
        "uninstall": (("linux_mini",), "uninstall", None),
        # An uninstall after an upgrade: it restores the old release's files
        # from the upgrade's backup (moves out of backup/, not the stage).
        "uninstall_upgrade": (("linux_mini_old", "linux_mini"), "uninstall", None),
        # The whole fake cuDNN (7 libraries): long enough for signals and
        # lock contention to land mid-run.
        "install_full": ((), "install", "linux"),
        "upgrade_full": (("linux_old",), "install", "linux"),
        # A few MB per library: a run holds the lock long enough for the
        # others of a concurrent round to find it taken.
        "install_big": ((), "install", "linux_big"),
        # A zip (the Windows archive) into a Windows-layout tree.
        "install_zip": ((), "install", "windows"),
        # verify of an installed tree (the malloc trials: it must change
        # nothing, whatever fails).
        "verify": (("linux_mini",), "verify", None),
    }

    def argv(self, scen, tree):
        setup, cmd, fx = self.SCENARIOS[scen]
        if cmd == "install":
            return self.install_args(["--cuda-root", tree], getattr(self.FIX, fx))
        return [cmd, "--cuda-root", tree]

    def template(self, scen):
        """scen's starting workspace (tree + outside sentinels), made once by
        really installing its setup fixtures; trials copy it."""
        if scen not in self.templates:
            fx = self.SCENARIOS[scen][2]
            platform = getattr(self.FIX, fx).platform if fx else "linux"
            ws = self.Workspace(os.path.join(self.work, "templates", scen),
                                platform=platform)
            for fx in self.SCENARIOS[scen][0]:
                self.run(self.install_args(ws, getattr(self.FIX, fx)), expect=0)
            self.templates[scen] = ws.dir
        return self.templates[scen]

    def fresh(self, scen, root=None, name=None):
        """A copy of scen's template; returns (folder, tree). name: the
        folder's name (default t<count>)."""
        self.n += 1
        d = os.path.join(root or self.trial_root, name or "t%d" % self.n)
        shutil.rmtree(d, ignore_errors=True)
        shutil.copytree(self.template(scen), d, symlinks=True)
        return d, os.path.join(d, "tree")

    def discard(self, folder):
        shutil.rmtree(folder, ignore_errors=True)

    def outside(self, folder):
        from cddtest import snapshot
        snap = snapshot(folder)
        return {p: v for p, v in snap.items()
                if p != "tree" and not p.startswith("tree/")}

    def reference(self, scen, trace=True):
        """(before, after) comparable states of scen and its argv's trace
        (None when made with trace=False: a plain run, no strace, for the
        categories that only compare states, such as malloc)."""
        if scen not in self._ref or (trace and self._ref[scen][2] is None):
            from cddtest import comparable_state
            if scen in self._ref:
                self.discard(self._ref[scen][3])
            folder, tree = self.fresh(scen)
            before = comparable_state(tree)
            if trace:
                trace = os.path.join(self.work, "ref-%s.trace" % scen)
                r = self.run(self.argv(scen, tree), strace=["-o", trace,
                                                            "-e", TRACE_SET])
            else:
                trace = None
                r = self.run(self.argv(scen, tree))
            if r[0] != 0:
                raise RuntimeError("%s: the clean run failed: %s" % (scen, r[2]))
            after = comparable_state(tree)
            self._ref[scen] = (before, after, trace, folder)
        return self._ref[scen][:3]

    # -- running ------------------------------------------------------------

    def env(self):
        from cddtest import clean_env
        return clean_env()

    def run(self, args, strace=None, expect=None, timeout=300, env=None):
        """(rc, stdout, stderr) of the binary, under strace when given its
        options (-f -qq added); env: variables added to the clean one."""
        cmd = [self.bin] + [str(a) for a in args]
        if strace is not None:
            cmd = ["strace", "-f", "-qq"] + strace + cmd
            if "-o" not in strace:
                cmd[1:1] = ["-o", "/dev/null"]
        e = self.env()
        e.update(env or {})
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=e, timeout=timeout)
        res = (p.returncode, p.stdout.decode("utf-8", "replace"),
               p.stderr.decode("utf-8", "replace"))
        if expect is not None and res[0] != expect:
            raise RuntimeError("%s: exit %d, expected %d: %s"
                               % (" ".join(cmd), res[0], expect, res[2][-2000:]))
        return res

    def recover(self, tree):
        return self.run(["recover", "--cuda-root", tree])

    def verdict(self, scen, tree, folder, outside):
        """'before', 'after', or a description of what is wrong."""
        from cddtest import comparable_state, diff_snapshots, leftovers
        before, after, _ = self.reference(scen, trace=False)
        got = comparable_state(tree)
        v = "before" if got == before else "after" if got == after else None
        if v is None:
            return "neither before nor after; vs before: %s; vs after: %s" % (
                "; ".join(diff_snapshots(before, got, limit=6)),
                "; ".join(diff_snapshots(after, got, limit=6)))
        bad = leftovers(tree, allow_backup=True)
        if bad:
            return "%s, but left over in .cudnn-deploy: %s" % (v, bad)
        if self.outside(folder) != outside:
            return "%s, but the outside of the tree changed" % v
        return v

    # -- the points of a command -----------------------------------------

    def points(self, scen, calls=CHANGING):
        """[(syscall, K)] for scen: for each call in calls, K from the first
        invocation after the command touched its workspace (the loader's and
        libraries' start-up before it changes nothing) to the last, counted
        per thread as strace counts (the largest count of any thread)."""
        key = (scen, calls)
        if key in self._points:
            return self._points[key]
        sys.path.insert(0, HERE)
        import stracelog
        _, _, trace = self.reference(scen)
        folder = self._ref[scen][3]
        calls_seen = stracelog.parse_file(trace)
        main_pid = calls_seen[0].pid if calls_seen else 0
        start = next((c.index for c in calls_seen if c.name != "execve"
                      and any(folder in str(a) for a in c.args)), 0)
        count, first = {}, {}
        for c in calls_seen:
            if c.name not in calls:
                continue
            k = count.get((c.pid, c.name), 0) + 1
            count[(c.pid, c.name)] = k
            if c.pid == main_pid and c.index >= start and c.name not in first:
                first[c.name] = k
        top = {}
        for (pid, name), k in count.items():
            top[name] = max(top.get(name, 0), k)
        pts = []
        for name in calls:
            lo = first.get(name, 1)
            pts += [(name, k) for k in range(lo, top.get(name, 0) + 1)]
        self._points[key] = pts
        return pts

    # -- categories -----------------------------------------------------------

    def cat_kill(self, st):
        for scen in KILL_SCENARIOS:
            pts = self.points(scen)
            chosen = sample(pts, self.a.max_kills)
            seen = {"before": 0, "after": 0}
            for name, k in chosen:
                what = "%s, SIGKILL at %s #%d" % (scen, name, k)
                folder, tree = self.fresh(scen)
                outside = self.outside(folder)
                st.trials += 1
                rc, _, err = self.run(self.argv(scen, tree), strace=[
                    "-e", "trace=" + name,
                    "-e", "inject=%s:signal=SIGKILL:when=%d" % (name, k)])
                if rc not in (0, -signal.SIGKILL):
                    st.fail(what, "exit %d: %s" % (rc, err.strip()[-300:]))
                    continue
                rrc, _, rerr = self.recover(tree)
                if rrc != 0:
                    st.fail(what, "recover exited %d: %s" % (rrc, rerr.strip()[-300:]))
                    continue
                v = self.verdict(scen, tree, folder, outside)
                if v not in seen:
                    st.fail(what, v)
                elif rc == 0 and v != "after":
                    st.fail(what, "exit 0 but the tree is %s" % v)
                else:
                    seen[v] += 1
                self.discard(folder)
            st.notes.append("%s: %d of %d kill points (%d before, %d after)"
                            % (scen, len(chosen), len(pts), seen["before"],
                               seen["after"]))

    def cat_errno(self, st):
        per = self.a.max_errno
        codes = {}
        lost = 0
        for scen in KILL_SCENARIOS:
            tally = {}
            for err, calls in sorted(ERRNO_CALLS.items()):
                pts = self.points(scen, calls)
                for name, k in sample(pts, per):
                    what = "%s, %s on %s #%d" % (scen, err, name, k)
                    folder, tree = self.fresh(scen)
                    outside = self.outside(folder)
                    st.trials += 1
                    rc, out, errtext = self.run(
                        ["--json"] + self.argv(scen, tree), strace=[
                            "-e", "trace=" + name,
                            "-e", "inject=%s:error=%s:when=%d" % (name, err, k)])
                    tally[rc] = tally.get(rc, 0) + 1
                    if rc == 4:
                        c = error_code(out)
                        codes.setdefault(err, {})
                        codes[err][c] = codes[err].get(c, 0) + 1
                    if rc not in (0, 4):
                        st.fail(what, "exit %d (0 or 4 expected): %s"
                                % (rc, errtext.strip()[-300:]))
                        continue
                    # Without any recovery: exit 4 is exactly "before"; exit 0
                    # is "after" (a failed clean-up may leave what recover
                    # removes).
                    v = self.verdict(scen, tree, folder, outside)
                    if rc == 4 and not out.strip():
                        # The fault hit the write of the report itself (stdout):
                        # the command may have finished; the tree must still be
                        # one of the two.
                        lost += 1
                        self.recover(tree)
                        v = self.verdict(scen, tree, folder, outside)
                        if v not in ("before", "after"):
                            st.fail(what, "report lost, tree %s" % v)
                        continue
                    if rc == 4 and v != "before":
                        st.fail(what, "exit 4 but the tree is %s" % v)
                        continue
                    if rc == 0 and v != "after":
                        rrc, _, rerr = self.recover(tree)
                        v2 = self.verdict(scen, tree, folder, outside)
                        if rrc != 0 or v2 != "after":
                            st.fail(what, "exit 0 but the tree is %s (after "
                                    "recover: exit %d, %s)" % (v, rrc, v2))
                            continue
                    self.discard(folder)
            st.notes.append("%s: exits %s" % (scen, ", ".join(
                "%d: %d" % kv for kv in sorted(tally.items()))))
        if lost:
            st.notes.append("%d with the JSON report itself unwritable (exit 4, "
                            "tree before or after)" % lost)
        for err, c in sorted(codes.items()):
            st.notes.append("%s reported as %s" % (err, ", ".join(
                "%s %d" % kv for kv in sorted(c.items()))))

    def cat_readerr(self, st):
        """EIO on every read of the archive, manifest and tree (read, pread64
        after start-up): an unreadable file is the environment's fault (exit
        4, IO), never a damaged archive (exit 3), and the tree is "before"."""
        for scen in ("install", "install_zip"):
            pts = self.points(scen, ("read", "pread64"))
            chosen = sample(pts, self.a.max_kills)
            tally = {}
            for name, k in chosen:
                what = "%s, EIO on %s #%d" % (scen, name, k)
                folder, tree = self.fresh(scen)
                outside = self.outside(folder)
                st.trials += 1
                rc, out, err = self.run(["--json"] + self.argv(scen, tree), strace=[
                    "-e", "trace=" + name,
                    "-e", "inject=%s:error=EIO:when=%d" % (name, k)])
                code = error_code(out) if rc else "ok"
                tally[code] = tally.get(code, 0) + 1
                v = self.verdict(scen, tree, folder, outside)
                if rc == 0 and v == "after":
                    pass
                elif rc != 4 or code != "IO" or v != "before":
                    st.fail(what, "exit %d, %s, tree %s (want exit 4, IO, "
                            "before): %s" % (rc, code, v, err.strip()[-300:]))
                    continue
                self.discard(folder)
            st.notes.append("%s: %d of %d read points: %s" % (
                scen, len(chosen), len(pts),
                ", ".join("%s %d" % kv for kv in sorted(tally.items()))))

    # -- memory exhaustion (the failmalloc shim) ---------------------------

    MALLOC_SCENARIOS = ("install", "uninstall", "verify")

    def shim_problem(self):
        """None when self.shim names a usable failmalloc.so (built here
        with cc when --shim was not given), else why not."""
        if not sys.platform.startswith("linux"):
            return "the malloc shim is Linux-only (LD_PRELOAD, glibc)"
        if self.a.shim:
            self.shim = os.path.abspath(self.a.shim)
            return None if os.path.isfile(self.shim) else \
                "--shim %s: no such file" % self.a.shim
        cc = shutil.which("cc") or shutil.which("gcc")
        if not cc:
            return "no C compiler to build tests/shim/failmalloc.c (or pass --shim)"
        src = os.path.join(os.path.dirname(HERE), "shim", "failmalloc.c")
        self.shim = os.path.join(self.work, "failmalloc.so")
        p = subprocess.run([cc, "-O2", "-shared", "-fPIC", "-o", self.shim, src, "-ldl"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return "cannot build the shim: %s" % p.stdout.decode()[-300:]
        return None

    def malloc_run(self, scen, tree, n, bt=None):
        """(rc, stdout, stderr, allocations counted, allocations failed,
        what the run left in its TMPDIR) of scen --json with the shim
        failing allocation n (0: count only)."""
        # One per process: --workers runs several trials at once.
        out = os.path.join(self.work, "failmalloc.%d.out" % os.getpid())
        if os.path.exists(out):
            os.unlink(out)
        tmp = os.path.join(os.path.dirname(tree), "tmpdir")
        os.makedirs(tmp, exist_ok=True)
        rc, stdout, err = self.run(["--json"] + self.argv(scen, tree), timeout=120, env={
            "LD_PRELOAD": self.shim, "CDD_FAILMALLOC": str(n) if n else "count",
            "CDD_FAILMALLOC_OUT": out, "TMPDIR": tmp,
            "CDD_FAILMALLOC_SPARE": self.a.spare,
            "CDD_FAILMALLOC_ONLY": self.a.only_from or "",
            "CDD_FAILMALLOC_BT": bt or ""})
        left = sorted(os.listdir(tmp))
        shutil.rmtree(tmp, ignore_errors=True)
        counted = failed = -1
        try:
            with open(out) as f:
                vals = dict(l.split() for l in f if l.strip())
            counted, failed = int(vals["allocations"]), int(vals["failed"])
        except (OSError, ValueError, KeyError):
            pass
        return rc, stdout, err, counted, failed, left

    @staticmethod
    def check_states(stdout):
        """{check name: status} of a --json answer ({} when none)."""
        try:
            return {c["name"]: (c["status"], c.get("detail", ""))
                    for c in json.loads(stdout).get("checks", [])}
        except (ValueError, KeyError, TypeError, AttributeError):
            return {}

    def malloc_reference(self, scen):
        """(rc of a clean run, allocations it made, exact snapshot before,
        comparable before, comparable after, its checks) of scen under the
        shim counting."""
        from cddtest import IGNORE_LOCK, VERIFIED, comparable_state, snapshot
        folder, tree = self.fresh(scen)
        # verify writes its record (.cudnn-deploy/verified.json) when it can
        # take the lock: atomically, so a trial leaves none or a whole one
        # (checked below); the rest of the tree must not change.
        exact = snapshot(tree, ignore=IGNORE_LOCK)
        before = comparable_state(tree)
        rc, out, err, counted, _, left = self.malloc_run(scen, tree, 0)
        if left:
            raise RuntimeError("%s: a clean run left %s in TMPDIR" % (scen, left))
        if counted < 0 or (counted == 0 and not self.a.only_from):
            raise RuntimeError("%s: the shim counted no allocation (exit %d): %s"
                               % (scen, rc, err[-300:]))
        after = comparable_state(tree)
        self.discard(folder)
        return rc, counted, exact, before, after, self.check_states(out)

    def malloc_ns(self, scen, total):
        """The Ns of scen's trials (all, --malloc-n, a stride or a sample)."""
        ns = list(range(1, total + 1))
        if self.a.malloc_n:
            # Only the Ns named for this command (scen:N or N for all).
            ns = sorted(set(int(v.split(":")[-1]) for v in self.a.malloc_n.split(",")
                            if v.split(":")[0] in (scen, v)))
        elif self.a.malloc_stride:
            # Every k-th from offset+1: deterministic, and k runs with
            # offsets 0..k-1 together try every N.
            k, off = self.a.malloc_stride, self.a.malloc_offset
            ns = ns[off::k]
        elif self.a.max_malloc and len(ns) > self.a.max_malloc:
            k = -(-len(ns) // self.a.max_malloc)
            # Every k-th, shifted by the seed so that runs differ.
            ns = ns[self.a.seed % k::k]
        if self.a.fast and scen == "install" and not self.a.malloc_n:
            # Every N of a window in the archive's entries, wider than
            # the allocations of one entry (17-41 on linux_mini), so
            # that each entry-step allocation class is hit at least
            # once: the plan's destination path of an entry once exited
            # 3 with an empty message (docs/reliability.md).
            lo = total // 5
            ns = sorted(set(ns) | set(range(lo, min(lo + 45, total + 1))))
        return ns

    def cat_malloc(self, st):
        """The N-th heap allocation fails (ENOMEM), for every N of an
        install, an uninstall and a verify of the small archive (--fast:
        every k-th, about --max-malloc per command). Each trial: no signal;
        exit as a clean run (the allocation was not needed, or was worked
        around) or exit 4 with one message, "out of memory"; the tree before
        (after a recover where a journal was left), or after on exit 0;
        verify leaves the tree exactly as it was, every byte.

        --workers N runs the trials N at a time (forked processes, each with
        its own trial folders and shim output); everything they compare
        with (the templates, the clean runs under the shim, the before and
        after states) is made here first, without strace. --deadline stops
        starting trials once that many seconds have passed."""
        why = self.shim_problem()
        if why:
            st.skipped = why
            return
        jobs, per = [], {}
        for scen in self.MALLOC_SCENARIOS:
            ref = self.malloc_reference(scen)
            rc0, total = ref[0], ref[1]
            if scen != "verify" and rc0 != 0:
                st.fail(scen, "the clean run under the shim exited %d" % rc0)
                continue
            # The before/after states verdict() compares with (a plain run,
            # no strace), made before any worker starts.
            if scen != "verify":
                self.reference(scen, trace=False)
            self._mref[scen] = ref
            ns = self.malloc_ns(scen, total)
            per[scen] = {"total": total, "rc0": rc0, "ns": ns, "tally": {},
                         "recovered": 0, "unfailed": 0, "in_check": 0,
                         "report_lost": 0, "ran": 0, "cut": []}
            jobs += [(scen, n) for n in ns]
        self.deadline = (self.t0 + self.a.deadline) if self.a.deadline else None
        workers = max(1, self.a.workers)
        if workers == 1 or len(jobs) < 2:
            results = map(self.malloc_trial, jobs)
            pool = None
        else:
            import multiprocessing
            global _CAMPAIGN
            _CAMPAIGN = self
            pool = multiprocessing.get_context("fork").Pool(
                workers, initializer=_malloc_worker_init)
            results = pool.imap(_malloc_worker_trial, jobs, chunksize=1)
        try:
            for (scen, n), res in zip(jobs, results):
                p = per[scen]
                if res is None:          # not started: past --deadline
                    p["cut"].append(n)
                    continue
                st.trials += 1
                p["ran"] += 1
                rc, fail, flags = res
                if rc is not None:
                    p["tally"][rc] = p["tally"].get(rc, 0) + 1
                for f in flags:
                    p[f] += 1
                if fail:
                    st.fail(*fail)
        finally:
            if pool is not None:
                pool.close()
                pool.join()
        for scen in self.MALLOC_SCENARIOS:
            if scen not in per:
                continue
            p = per[scen]
            st.notes.append("%s: %d allocations (clean exit %d; spared: %s), %d trials: exits %s%s%s"
                            % (scen, p["total"], p["rc0"], ("only from " + self.a.only_from)
                               if self.a.only_from else self.a.spare or "none",
                               p["ran"], ", ".join(
                                "%d: %d" % kv for kv in sorted(p["tally"].items()))
                               or "none",
                               "; %d completed by recover" % p["recovered"]
                               if p["recovered"] else "",
                               "; %d where the run made fewer allocations" % p["unfailed"]
                               if p["unfailed"] else "") +
                            ("; %d reported in a check ('out of memory')" % p["in_check"]
                             if p["in_check"] else "") +
                            ("; %d with the --json report incomplete (exit 4, said so)"
                             % p["report_lost"] if p["report_lost"] else ""))
            if p["cut"]:
                st.cut = True
                st.notes.append("%s: CUT by --deadline %d s: %d of %d trials not "
                                "started, N = %s" % (scen, self.a.deadline,
                                                     len(p["cut"]), len(p["ns"]),
                                                     runs_of(p["cut"], p["ns"])))

    def malloc_trial(self, job):
        """One malloc trial: None when not started (past the deadline), else
        (exit code or None, (what, why) of a failure or None, counters to
        add: names of the flags in cat_malloc's per-command figures)."""
        if self.deadline is not None and time.time() >= self.deadline:
            return None
        scen, n = job
        try:
            return self._malloc_trial(scen, n)
        except Exception as e:  # the harness, not the binary: say so
            return (None, ("%s, allocation #%d" % (scen, n),
                           "harness: %s: %s" % (type(e).__name__, e)), ())

    def _malloc_trial(self, scen, n):
        from cddtest import IGNORE_LOCK, VERIFIED, snapshot
        rc0, total, exact, before, after, checks0 = self._mref[scen]
        what = "%s, allocation #%d of %d fails" % (scen, n, total)
        # The same path length in every process and with or without
        # --workers (paths are allocations too): w<7 digits>/m<7 digits>.
        root = self.trial_root if _CAMPAIGN is self else \
            os.path.join(self.trial_root, "w%07d" % 0)
        folder, tree = self.fresh(scen, root=root, name="m%07d" % n)
        outside = self.outside(folder)
        flags = []
        try:
            bt = os.path.join(self.a.malloc_bt, "%s.%d.bt" % (scen, n)) \
                if self.a.malloc_bt else None
            rc, out, err, _, failed, left = self.malloc_run(scen, tree, n, bt)
        except subprocess.TimeoutExpired:
            return (None, (what, "no exit after 120 s"), ())
        if failed == 0:
            flags.append("unfailed")   # this run made fewer allocations
        lines = [l for l in err.splitlines() if l.strip()]

        def fail(why):
            return (rc, (what, why), flags)
        if rc < 0:
            return fail("killed by signal %d: %s" % (-rc, err.strip()[-300:]))
        if left:
            return fail("exit %d, left in TMPDIR: %s" % (rc, left))
        if rc == 4:
            oom = [l for l in lines if "out of memory" in l
                   or "Cannot allocate memory" in l]
            errs = [l for l in lines if l.startswith("cudnn-deploy: error")]
            # The JSON document is left out when it lost a part for
            # lack of memory; when printed, it names the code.
            code = error_code(out) if out.strip() else "NOMEM"
            if len(oom) != 1 or len(errs) > 1 or code != "NOMEM":
                return fail("exit 4 (%s) without exactly one 'out of memory' "
                            "message: %s" % (code, " | ".join(lines[-5:])))
        elif rc != rc0:
            return fail("exit %d (a clean run exits %d; out of memory "
                        "is 4): %s" % (rc, rc0, " | ".join(lines[-5:])))
        if scen == "verify":
            if rc == rc0:
                # The same exit must mean the same findings, unless
                # the check that differs names the cause.
                got = self.check_states(out)
                diff = [k for k in set(got) | set(checks0)
                        if got.get(k, ("-",))[0] != checks0.get(k, ("-",))[0]]
                unnamed = [k for k in diff if "out of memory" not in
                           got.get(k, ("", ""))[1]]
                if unnamed:
                    return fail("exit %d as a clean run, but the checks "
                                "differ: %s" % (rc, "; ".join(
                                    "%s %s -> %s" % (k, checks0.get(k, ("-",))[0],
                                                     got.get(k, ("-", ""))) for k in
                                    sorted(unnamed)[:3])))
                if diff:
                    flags.append("in_check")
            if snapshot(tree, ignore=IGNORE_LOCK) != exact:
                return fail("verify changed the tree")
            rec = os.path.join(tree, VERIFIED)
            if os.path.lexists(rec):
                try:
                    with open(rec, "rb") as fh:
                        json.loads(fh.read())
                except (OSError, ValueError) as e:
                    return fail("verify left a broken record: %s" % e)
            if self.outside(folder) != outside:
                return fail("verify changed the outside of the tree")
            self.discard(folder)
            return (rc, None, flags)
        v = self.verdict(scen, tree, folder, outside)
        if rc == 4 and "report is incomplete" in err:
            # The command ran to its end; what failed was the JSON
            # document about it (and it said so): either state.
            flags.append("report_lost")
            if v not in ("before", "after"):
                return fail("report lost, tree %s" % v)
        elif rc == 4 and v != "before":
            j = os.path.join(tree, ".cudnn-deploy", "journal")
            if not os.path.exists(j):
                return fail("exit 4, no journal left, tree %s" % v)
            rrc, _, rerr = self.recover(tree)
            v = self.verdict(scen, tree, folder, outside)
            if rrc != 0 or v != "before":
                return fail("exit 4 left a journal; recover exit %d, "
                            "tree %s: %s" % (rrc, v, rerr.strip()[-300:]))
            flags.append("recovered")
        elif rc == 0 and v != "after":
            return fail("exit 0 but the tree is %s" % v)
        self.discard(folder)
        return (rc, None, flags)

    # -- real full file systems ------------------------------------------

    def mount_problem(self):
        if os.geteuid() != 0:
            return "not root: cannot mount a file system"
        d = os.path.join(self.work, "probe-mnt")
        os.makedirs(d, exist_ok=True)
        p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", d],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if p.returncode != 0:
            return "mount does not work here: %s" % p.stdout.decode().strip()
        subprocess.run(["umount", d])
        return None

    def fs_kinds(self, st):
        kinds = ["tmpfs"]
        if self.a.fast:
            return kinds
        if shutil.which("mkfs.ext4") and shutil.which("losetup"):
            kinds.append("ext4")
        else:
            st.notes.append("ext4 skipped: mkfs.ext4 or losetup missing")
        return kinds

    def mount_fs(self, kind, mnt, size):
        os.makedirs(mnt, exist_ok=True)
        if kind == "tmpfs":
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=%d,mode=0755" % size,
                            "tmpfs", mnt], check=True)
        else:
            img = mnt + ".img"
            with open(img, "wb") as f:
                f.truncate(size)
            # -m 0: root (we are) gets no reserved blocks beyond the others'.
            subprocess.run(["mkfs.ext4", "-q", "-F", "-m", "0", img], check=True)
            subprocess.run(["mount", "-o", "loop", img, mnt], check=True)

    def umount_fs(self, kind, mnt):
        subprocess.run(["umount", mnt], check=False)
        if kind == "ext4" and os.path.exists(mnt + ".img"):
            os.unlink(mnt + ".img")

    def fullfs_trial(self, st, kind, mnt, scen, free_left):
        """Copy scen's template onto the empty file system, fill it to leave
        free_left bytes, run the command: (rc, verdict)."""
        for n in os.listdir(mnt):
            if n != "lost+found":
                p = os.path.join(mnt, n)
                shutil.rmtree(p) if os.path.isdir(p) and not os.path.islink(p) else os.unlink(p)
        folder = os.path.join(mnt, "ws")
        shutil.copytree(self.template(scen), folder, symlinks=True)
        tree = os.path.join(folder, "tree")
        outside = self.outside(folder)
        os.sync()
        s = os.statvfs(mnt)
        free = s.f_bavail * s.f_frsize
        fill = max(0, free - free_left)
        try:
            # Unbuffered: a short write at the end is the disk being full.
            with open(os.path.join(mnt, "filler"), "wb", buffering=0) as f:
                chunk = b"\0" * (1 << 20)
                left = fill
                while left > 0:
                    left -= f.write(chunk[:min(left, len(chunk))])
                os.fsync(f.fileno())
        except OSError:
            pass  # full already: what is left is what the command gets
        os.sync()
        s = os.statvfs(mnt)
        self.last_free = s.f_bavail * s.f_frsize
        st.trials += 1
        rc, out, err = self.run(["--json"] + self.argv(scen, tree))
        v = self.verdict(scen, tree, folder, outside)
        what = "%s on %s, %d bytes free" % (scen, kind, self.last_free)
        ok = (rc == 4 and v == "before") or (rc == 0 and v == "after")
        if ok and rc == 4 and error_code(out) != "NOSPC":
            st.fail(what, "a full disk reported as %s, not NOSPC: %s"
                    % (error_code(out), err.strip()[-300:]))
        elif not ok:
            st.fail(what, "exit %d, tree %s: %s" % (rc, v, err.strip()[-300:]))
        elif rc == 4:
            # A retry after space was freed must work from "before" (nothing
            # left behind that would stop it): recover is clean.
            rrc, _, rerr = self.recover(tree)
            if rrc != 0 or self.verdict(scen, tree, folder, outside) != "before":
                st.fail(what, "recover after the failure: exit %d %s" % (rrc, rerr.strip()[-200:]))
        return rc

    def cat_fullfs(self, st):
        why = self.mount_problem()
        if why:
            st.skipped = why
            return
        size = 8 << 20
        below = 4 if self.a.fast else 16
        for kind in self.fs_kinds(st):
            mnt = os.path.join(self.work, "fs-" + kind)
            try:
                self.mount_fs(kind, mnt, size)
            except (subprocess.CalledProcessError, OSError) as e:
                st.notes.append("%s skipped: cannot make one here (%s)" % (kind, e))
                continue
            try:
                for scen in ("install", "upgrade", "uninstall"):
                    # Binary search of the free bytes where it starts to
                    # succeed: lo fails (or is 0), hi succeeds.
                    lo, hi = 0, 4 << 20
                    if self.fullfs_trial(st, kind, mnt, scen, hi) != 0:
                        st.fail("%s on %s" % (scen, kind), "fails with 4 MiB free")
                        continue
                    if self.fullfs_trial(st, kind, mnt, scen, 0) == 0:
                        st.notes.append("%s on %s: succeeds with 0 bytes free"
                                        % (scen, kind))
                        continue
                    while hi - lo > 1:
                        mid = (lo + hi) // 2
                        if self.fullfs_trial(st, kind, mnt, scen, mid) == 0:
                            hi = mid
                        else:
                            lo = mid
                    # Points below the threshold: each must fail cleanly.
                    for i in range(1, below + 1):
                        self.fullfs_trial(st, kind, mnt, scen, hi * i // (below + 1))
                    self.fullfs_trial(st, kind, mnt, scen, hi - 1)
                    self.fullfs_trial(st, kind, mnt, scen, hi)
                    st.notes.append("%s on %s: succeeds from %d bytes free "
                                    "(statvfs: %d)" % (scen, kind, hi,
                                                      self.last_free))
            finally:
                self.umount_fs(kind, mnt)

    # -- killed recoveries -----------------------------------------------

    def interrupted_states(self, n_each):
        """Trees left by an upgrade killed mid-commit (a journal without the
        commit record) and after it (with): [(kind, folder)]."""
        pts = self.points("upgrade")
        rng = random.Random(self.a.seed + 1)
        found = {"rollback": [], "rollforward": []}
        for name, k in rng.sample(pts, len(pts)):
            if all(len(v) >= n_each for v in found.values()):
                break
            folder, tree = self.fresh("upgrade")
            rc, _, _ = self.run(self.argv("upgrade", tree), strace=[
                "-e", "trace=" + name, "-e", "inject=%s:signal=SIGKILL:when=%d" % (name, k)])
            j = os.path.join(tree, ".cudnn-deploy", "journal")
            kind = None
            if rc == -signal.SIGKILL and os.path.isfile(j):
                with open(j) as f:
                    kind = "rollforward" if "\nC\n" in f.read() else "rollback"
            if kind and len(found[kind]) < n_each:
                found[kind].append((kind, "%s #%d" % (name, k), folder))
            else:
                self.discard(folder)
        return found["rollback"] + found["rollforward"]

    def cat_recover(self, st):
        from cddtest import comparable_state
        n_each = 1 if self.a.fast else 3
        budget = 15 if self.a.fast else self.a.max_kills
        for kind, how, start in self.interrupted_states(n_each):
            # What a clean recover makes of this tree.
            ref = start + "-ref"
            shutil.copytree(start, ref, symlinks=True)
            self.recover(os.path.join(ref, "tree"))
            expect = comparable_state(os.path.join(ref, "tree"))
            before, after, _ = self.reference("upgrade")
            want = "before" if kind == "rollback" else "after"
            if expect != (before if want == "before" else after):
                st.fail("recover of an upgrade killed at %s" % how,
                        "a clean recover does not give %s" % want)
            trace = start + ".trace"
            shutil.copytree(start, start + "-t", symlinks=True)
            self.run(["recover", "--cuda-root", os.path.join(start + "-t", "tree")],
                     strace=["-o", trace, "-e", TRACE_SET])
            sys.path.insert(0, HERE)
            import stracelog
            count = {}
            for c in stracelog.parse_file(trace):
                if c.name in CHANGING:
                    count[c.name] = count.get(c.name, 0) + 1
            pts = [(n, k) for n in CHANGING for k in range(1, count.get(n, 0) + 1)]
            chosen = sample(pts, budget)
            outside = self.outside(start)
            for name, k in chosen:
                what = "recover (%s, upgrade killed at %s) killed at %s #%d" % (
                    kind, how, name, k)
                self.n += 1
                folder = os.path.join(self.trial_root, "r%d" % self.n)
                shutil.copytree(start, folder, symlinks=True)
                tree = os.path.join(folder, "tree")
                st.trials += 1
                rc, _, err = self.run(["recover", "--cuda-root", tree], strace=[
                    "-e", "trace=" + name, "-e", "inject=%s:signal=SIGKILL:when=%d" % (name, k)])
                if rc not in (0, -signal.SIGKILL):
                    st.fail(what, "exit %d: %s" % (rc, err.strip()[-300:]))
                    continue
                rrc, _, rerr = self.recover(tree)
                v = self.verdict("upgrade", tree, folder, outside)
                if rrc != 0 or v != want:
                    st.fail(what, "second recover exit %d, tree %s (want %s): %s"
                            % (rrc, v, want, rerr.strip()[-300:]))
                self.discard(folder)
            st.notes.append("%s (upgrade killed at %s): %d of %d kill points"
                            % (kind, how, len(chosen), len(pts)))
            for d in (start, ref, start + "-t"):
                self.discard(d)

    # -- signals -----------------------------------------------------------

    def cat_signals(self, st):
        n = 10 if self.a.fast else 100
        scen = "upgrade_full"
        self.reference(scen)
        # How long a clean run takes, to spread the signals over it.
        folder, tree = self.fresh(scen)
        t0 = time.monotonic()
        self.run(self.argv(scen, tree), expect=0)
        span = max(0.02, time.monotonic() - t0)
        self.discard(folder)
        tally = {}
        for i in range(n):
            sig = signal.SIGINT if i % 2 == 0 else signal.SIGTERM
            delay = self.rng.uniform(0, span)
            folder, tree = self.fresh(scen)
            outside = self.outside(folder)
            what = "%s, %s after %.3f s" % (scen, signal.Signals(sig).name, delay)
            st.trials += 1
            p = subprocess.Popen([self.bin] + self.argv(scen, tree),
                                 stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, env=self.env())
            time.sleep(delay)
            try:
                p.send_signal(sig)
            except ProcessLookupError:
                pass
            err = p.communicate(timeout=300)[1].decode("utf-8", "replace")
            rc = p.returncode
            tally[rc] = tally.get(rc, 0) + 1
            # Exit 4 (interrupted: rolled back), 0 (done before the signal),
            # or the signal's default action before the handler was set.
            if rc not in (0, 4, -sig):
                st.fail(what, "exit %d: %s" % (rc, err.strip()[-300:]))
                continue
            if rc == 4:
                v = self.verdict(scen, tree, folder, outside)
                if v != "before":
                    st.fail(what, "exit 4 but the tree is %s" % v)
                    continue
            rrc, _, rerr = self.recover(tree)
            v = self.verdict(scen, tree, folder, outside)
            want = {0: ("after",), 4: ("before",)}.get(rc, ("before", "after"))
            if rrc != 0 or v not in want:
                st.fail(what, "exit %d; recover %d; tree %s" % (rc, rrc, v))
            self.discard(folder)
        st.notes.append("exits %s" % ", ".join("%d: %d" % kv for kv in sorted(tally.items())))

    # -- concurrent runs ----------------------------------------------------

    def concurrent_round(self, st, n, tag):
        folder, tree = self.fresh("install_big")
        outside = self.outside(folder)
        argv = ["--json"] + self.argv("install_big", tree)
        procs = [subprocess.Popen([self.bin] + argv, stdin=subprocess.DEVNULL,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  env=self.env()) for _ in range(n)]
        res = []
        for p in procs:
            out, err = p.communicate(timeout=300)
            res.append((p.pid, p.returncode, out.decode("utf-8", "replace"),
                        err.decode("utf-8", "replace")))
        st.trials += 1
        what = "round %s of %d" % (tag, n)
        winners = [pid for pid, rc, _, _ in res if rc == 0]
        losers = 0
        for pid, rc, out, err in res:
            if rc == 0:
                continue
            try:
                doc = json.loads(out)
                code, msg = doc["error"]["code"], doc["error"]["message"]
            except (ValueError, KeyError, TypeError):
                st.fail(what, "pid %d: exit %d without a JSON error: %s" % (pid, rc, err[-300:]))
                return 0
            m = re.search(r"\(pid (\d+)\)", msg)
            if rc != 4 or code != "LOCKED" or not m:
                st.fail(what, "pid %d: exit %d %s: %s" % (pid, rc, code, msg))
                continue
            holder = int(m.group(1))
            # The holder named must be one of this round's processes that
            # held the lock (they all succeed), never itself or a stranger.
            if holder not in winners:
                st.fail(what, "pid %d names pid %d, not one of the winners %s: %s"
                        % (pid, holder, winners, msg))
            losers += 1
        if not winners:
            st.fail(what, "no run succeeded")
        v = self.verdict("install_big", tree, folder, outside)
        if v != "after":
            st.fail(what, "the tree is %s" % v)
        self.discard(folder)
        return losers

    def cat_concurrent(self, st):
        self.reference("install_big")
        plan = [(2, 10 if self.a.fast else 50), (6, 2 if self.a.fast else 10)]
        for n, rounds in plan:
            contended = losers = 0
            for i in range(rounds):
                lost = self.concurrent_round(st, n, "%d.%d" % (n, i + 1))
                losers += lost
                contended += lost > 0
            st.notes.append("%d rounds of %d: %d with a loser, %d losers, each "
                            "naming a real holder" % (rounds, n, contended, losers))

    # -- durability -----------------------------------------------------------

    def cat_durability(self, st):
        sys.path.insert(0, HERE)
        import durability
        work = os.path.join(self.work, "durability")
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        for name, res in durability.run_scenario(self.bin, work):
            st.trials += 1
            for v in res.violations:
                st.fail(name, v)
            st.notes.append("%s: %d renamed files, %d folders, %d commit record(s) "
                            "checked" % (name, res.renamed_written, res.folders,
                                         res.commits))


# --workers: the campaign the pool's processes inherit (fork), each with
# its own trial folder (fresh() numbers folders per process).
_CAMPAIGN = None


def _malloc_worker_init():
    c = _CAMPAIGN
    c.trial_root = os.path.join(c.trial_root, "w%07d" % os.getpid())
    os.makedirs(c.trial_root, exist_ok=True)


def _malloc_worker_trial(job):
    return _CAMPAIGN.malloc_trial(job)


def runs_of(cut, ns):
    """The Ns of cut (a subset of the sorted ns) as runs of consecutive
    members of ns: "1201-1797 every 3, 1803"."""
    pos = {n: i for i, n in enumerate(ns)}
    idx = sorted(pos[n] for n in cut)
    parts, i = [], 0
    while i < len(idx):
        j = i
        while j + 1 < len(idx) and idx[j + 1] == idx[j] + 1:
            j += 1
        a, b = ns[idx[i]], ns[idx[j]]
        if a == b:
            parts.append("%d" % a)
        else:
            step = ns[idx[i] + 1] - a
            parts.append("%d-%d%s" % (a, b, " every %d" % step if step != 1 else ""))
        i = j + 1
    return ", ".join(parts)


def unmount_under(folder):
    """Unmount what an interrupted earlier run left mounted in folder."""
    try:
        with open("/proc/mounts") as f:
            points = [l.split()[1] for l in f]
    except OSError:
        return
    for p in sorted(points, reverse=True):
        p = p.replace("\\040", " ")
        if p.startswith(folder + "/"):
            subprocess.run(["umount", p], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)


CATEGORIES = [
    ("kill", "SIGKILL at every disk-changing system call (strace)"),
    ("errno", "ENOSPC, EIO, EACCES, EROFS, EDQUOT, EMFILE injected (strace)"),
    ("readerr", "EIO on every read of archive, manifest and tree (strace)"),
    ("malloc", "the N-th heap allocation fails (LD_PRELOAD shim)"),
    ("fullfs", "real full tmpfs and ext4, filled to the byte"),
    ("recover", "recoveries killed at every system call"),
    ("signals", "SIGINT / SIGTERM at random times"),
    ("concurrent", "concurrent installs on one tree"),
    ("durability", "fsync order of install, upgrade, uninstall"),
]
NEEDS_STRACE = ("kill", "errno", "readerr", "recover", "durability")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default=os.environ.get("CDD_BIN"))
    ap.add_argument("--work", default=None)
    ap.add_argument("--fast", action="store_true",
                    help="the subset make test runs (a few minutes)")
    ap.add_argument("--only", default=None, help="categories, comma-separated")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--max-kills", type=int, default=None,
                    help="kill points per command (default 300; --fast 40)")
    ap.add_argument("--max-errno", type=int, default=None,
                    help="points per command and errno (default 40; --fast 6)")
    ap.add_argument("--max-malloc", type=int, default=None,
                    help="malloc trials per command (default: every allocation; "
                         "--fast 60, every k-th)")
    ap.add_argument("--only-from", default=None,
                    help="malloc trials: count and fail only allocations "
                         "called from these shared objects (libarchive.so,"
                         "liblzma.so): every N of their own allocations")
    ap.add_argument("--malloc-n", default=None,
                    help="malloc trials: only these Ns, comma-separated, each "
                         "N (every command) or COMMAND:N (install:600)")
    ap.add_argument("--malloc-stride", type=int, default=0,
                    help="malloc trials: every K-th N from --malloc-offset + 1")
    ap.add_argument("--malloc-offset", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1,
                    help="malloc trials: run N at a time (processes; default 1)")
    ap.add_argument("--deadline", type=float, default=0,
                    help="malloc trials: start none after SECONDS from the "
                         "start; the figures say what was cut (exit 0 unless "
                         "a trial failed)")
    ap.add_argument("--malloc-bt", default=None,
                    help="malloc trials: write each failed allocation's "
                         "backtrace to DIR/COMMAND.N.bt")
    ap.add_argument("--shim", default=None,
                    help="failmalloc.so (default: built from tests/shim/ with cc)")
    ap.add_argument("--spare", default="libarchive.so,liblzma.so",
                    help="malloc trials: allocations called from these shared "
                         "objects are not failed (their own out-of-memory "
                         "handling crashes or exits: docs/reliability.md); "
                         "'' attacks them too")
    ap.add_argument("--json", default=None, help="write the figures here")
    a = ap.parse_args()
    if a.max_kills is None:
        a.max_kills = 40 if a.fast else 300
    if a.max_errno is None:
        a.max_errno = 6 if a.fast else 40
    if a.max_malloc is None:
        a.max_malloc = 60 if a.fast else 0
    if not a.bin or not os.access(a.bin, os.X_OK):
        print("torture: --bin (or CDD_BIN) must name the built cudnn-deploy",
              file=sys.stderr)
        return 2
    a.work = a.work or os.path.join(os.environ.get("CDD_TEST_TMP") or "/tmp",
                                    "cdd-torture-%s" % ("fast" if a.fast else "full"))
    if a.only:
        a.work += "-" + a.only.replace(",", "-")
    a.work = os.path.abspath(a.work)
    unmount_under(a.work)
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    os.environ["CDD_BIN"] = os.path.abspath(a.bin)
    os.environ["CDD_TEST_TMP"] = os.path.join(a.work, "e2e")
    sys.path.insert(0, E2E)
    os.umask(0o022)
    wanted = a.only.split(",") if a.only else [c for c, _ in CATEGORIES]
    unknown = set(wanted) - set(c for c, _ in CATEGORIES)
    if unknown:
        print("torture: unknown categories: %s" % ", ".join(sorted(unknown)),
              file=sys.stderr)
        return 2
    sys.path.insert(0, HERE)
    import durability
    no_strace = durability.strace_problem()
    camp = Campaign(a)
    results = []
    try:
        for name, what in CATEGORIES:
            if name not in wanted:
                continue
            st = Stats(name, what)
            t0 = time.monotonic()
            if name in NEEDS_STRACE and no_strace:
                st.skipped = no_strace
            else:
                try:
                    getattr(camp, "cat_" + name)(st)
                except Exception as e:  # the harness, not the binary: say so
                    import traceback
                    st.fail("harness", "%s: %s" % (type(e).__name__, e))
                    traceback.print_exc()
            st.seconds = time.monotonic() - t0
            results.append(st)
            print(st.line(), flush=True)
            for f in st.failures[:30]:
                print("    FAIL " + f, flush=True)
    finally:
        camp.close()
    ran = [s for s in results if not s.skipped]
    trials = sum(s.trials for s in ran)
    failures = sum(len(s.failures) for s in ran)
    cut = [s.name for s in ran if s.cut]
    print("torture: %d trials, %d failures (%s build: %s)%s" % (
        trials, failures, "fast" if a.fast else "full", a.bin,
        "; CUT by --deadline %g s in %s (not every trial ran)"
        % (a.deadline, ", ".join(cut)) if cut else ""))
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"binary": a.bin, "fast": a.fast, "seed": a.seed,
                       "workers": a.workers, "deadline": a.deadline,
                       "malloc_stride": a.malloc_stride,
                       "malloc_offset": a.malloc_offset,
                       "categories": [{"name": s.name, "what": s.what,
                                       "trials": s.trials,
                                       "failures": len(s.failures),
                                       "skipped": s.skipped, "cut": s.cut,
                                       "notes": s.notes,
                                       "failed": s.failures[:100],
                                       "seconds": round(s.seconds, 1)}
                                      for s in results]}, f, indent=1)
    if failures:
        return 1
    if not ran:
        return SKIP
    return 0


if __name__ == "__main__":
    sys.exit(main())
