"""Running the binary under test: run(), run_json() with the checks of the
--json envelope every command answers with (docs/design.md, Report),
spawn() for the kill tests, install_args(), plan_of(), the exit codes, and
whether the binary has the fault hook (a test build's).
"""

import collections
import json
import os
import subprocess
import unittest

from cddenv import BIN, TMP_ROOT

EXIT_OK, EXIT_CHECK, EXIT_USAGE, EXIT_REJECTED, EXIT_ENV = 0, 1, 2, 3, 4

Result = collections.namedtuple("Result", "rc out err")
JsonResult = collections.namedtuple("JsonResult", "rc doc err out")

DEFAULT_TIMEOUT = 120


def binary_problem():
    """None when CDD_BIN names an executable, else why not."""
    if not BIN:
        return "CDD_BIN is not set (point it at the built cudnn-deploy)"
    if not (os.path.isfile(BIN) and os.access(BIN, os.X_OK)):
        return "CDD_BIN=%s is not an executable file" % BIN
    return None


FAULT_VAR = "CUDNN_DEPLOY_TEST_FAULT"


def has_fault_hook(path=None):
    """Was the binary built with -DCDD_FAULT_INJECTION=ON? Only such a build
    holds the variable's name (a release build neither reads it nor has the
    code). path: the executable (default CDD_EXE under Wine, else CDD_BIN)."""
    path = path or os.environ.get("CDD_EXE") or BIN
    if not path:          # no binary named (CDD_BIN unset): no hook either
        return False
    try:
        with open(path, "rb") as f:
            return FAULT_VAR.encode() in f.read()
    except OSError:
        return False


# Tests that inject faults through the variable: skipped (and said so) on a
# build without the hook; the test suite's builds have it.
needs_fault_hook = unittest.skipUnless(
    has_fault_hook(), "needs a test build (-DCDD_FAULT_INJECTION=ON)")


def clean_env(extra=None):
    """The environment for the binary: ours, minus anything that would change
    what it does (fault injection, CUDA_PATH_*, SHELL, NO_COLOR), plus extra
    (None removes)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CUDA_PATH") and k != "CUDNN_DEPLOY_TEST_FAULT"}
    env.setdefault("LC_ALL", "C.UTF-8")
    # Fixes are written for $SHELL's shell: the runs get sh's unless a test
    # says otherwise; no colour unless a test asks for it.
    env.pop("SHELL", None)
    env.pop("NO_COLOR", None)
    # Never touch the user's download cache.
    env["XDG_CACHE_HOME"] = os.path.join(TMP_ROOT, "xdg-cache")
    for k, v in (extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def describe(cmd, rc, out, err):
    return ("\n$ %s\n-> exit %r\n--- stdout ---\n%s\n--- stderr ---\n%s"
            % (" ".join(str(c) for c in cmd), rc, out[-4000:], err[-4000:]))


# Under Wine (the Windows suite): a fresh prefix is created by the first
# Wine program that runs in it (wineboot: tens of seconds, minutes on a
# loaded 2-core machine). That is done once, before the first command, with
# its own limit and its stdio on /dev/null, so that no command's limit pays
# for it and no Wine service inherits a command's output pipe (issue 23:
# the first run of a test in a fresh prefix timed out at 120 s).
WINE_PREFIX_TIMEOUT = 900
_wine_ready = []


def wine_prefix_ready():
    wine_run = os.environ.get("CDD_WINE_RUN")
    if not wine_run or _wine_ready:
        return
    subprocess.run([wine_run, "cmd", "/c", "exit"], stdin=subprocess.DEVNULL,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   timeout=WINE_PREFIX_TIMEOUT)
    _wine_ready.append(True)


def _proc_line(pid):
    """pid, state, age and command line of a process, from /proc."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read().rsplit(")", 1)[1].split()
        with open("/proc/%d/cmdline" % pid, "rb") as f:
            args = f.read().replace(b"\0", b" ").decode("utf-8", "replace")
        with open("/proc/uptime") as f:
            up = float(f.read().split()[0])
        age = up - int(st[19]) / os.sysconf("SC_CLK_TCK")
        return "pid %d ppid %s state %s age %.0f s: %s" % (
            pid, st[1], st[0], age, args.strip()[:300])
    except (OSError, IndexError, ValueError):
        return "pid %d (gone)" % pid


def _threads(pid):
    """Each thread of pid: its state and where it waits in the kernel."""
    out = []
    try:
        tids = sorted(int(t) for t in os.listdir("/proc/%d/task" % pid))
    except OSError:
        return out
    for tid in tids[:64]:
        try:
            with open("/proc/%d/task/%d/stat" % (pid, tid)) as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
            with open("/proc/%d/task/%d/wchan" % (pid, tid)) as f:
                wchan = f.read().strip() or "-"
        except (OSError, IndexError):
            continue
        out.append("  thread %d state %s wchan %s" % (tid, state, wchan))
    return out


class CommandTimeout(subprocess.TimeoutExpired):
    """A command past its limit, with what timeout_report saw."""

    def __init__(self, cmd, timeout, report):
        super().__init__(cmd, timeout)
        self.report = report

    def __str__(self):
        return "%s\n%s" % (super().__str__(), self.report)


def timeout_report(p):
    """What a command that ran past its limit was doing, before it is
    killed (issue 18's Wine stall): the process and its threads, and every
    process holding its output pipes (a Wine server or service started by
    it inherits them, and the caller then waits for the pipe, not for the
    command)."""
    lines = ["still running: " + _proc_line(p.pid)] + _threads(p.pid)
    pipes = {}
    for name, f in (("stdout", p.stdout), ("stderr", p.stderr)):
        if f is not None:
            pipes["pipe:[%d]" % os.fstat(f.fileno()).st_ino] = name
    holders = {}
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == os.getpid():
            continue
        try:
            fds = os.listdir("/proc/%s/fd" % d)
        except OSError:
            continue
        for fd in fds:
            try:
                link = os.readlink("/proc/%s/fd/%s" % (d, fd))
            except OSError:
                continue
            if link in pipes:
                holders.setdefault(int(d), set()).add(pipes[link])
    for pid in sorted(holders):
        lines.append("holds its %s: %s" % ("+".join(sorted(holders[pid])),
                                           _proc_line(pid)))
    return "\n".join(lines)


def run(args, env=None, expect=None, timeout=DEFAULT_TIMEOUT, cwd=None):
    """Run cudnn-deploy with args; returns Result(rc, out, err) (also a
    3-tuple). expect: an exit code (or a tuple of them) to assert. Past the
    limit: CommandTimeout (a subprocess.TimeoutExpired), its message saying
    what was still running and who held the output (timeout_report)."""
    wine_prefix_ready()
    cmd = [BIN] + [str(a) for a in args]
    with subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          env=clean_env(env), cwd=cwd) as p:
        try:
            out, err = p.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                report = timeout_report(p)
            except OSError as e:
                report = "(no report: %s)" % e
            p.kill()
            # Not communicate(): a process that inherited the pipes would
            # keep it waiting; our ends are closed instead.
            p.stdout.close()
            p.stderr.close()
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                pass
            raise CommandTimeout(cmd, timeout, report) from None
    res = Result(p.returncode, out.decode("utf-8", "replace"),
                 err.decode("utf-8", "replace"))
    if expect is not None:
        ok = res.rc in expect if isinstance(expect, tuple) else res.rc == expect
        if not ok:
            raise AssertionError("expected exit %r" % (expect,)
                                 + describe(cmd, res.rc, res.out, res.err))
    return res


CHECK_STATUSES = ("pass", "warn", "fail", "skip")
ERROR_CODES = ("USAGE", "NOTSUP", "MANIFEST", "ARCHIVE", "CORRUPT", "UNSAFE",
               "CHECKSUM", "UNPINNED", "VERSION", "TARGET", "STATE",
               "MODIFIED", "CHECK", "NOTFOUND", "IO", "PERM", "NOSPC", "BUSY",
               "LOCKED", "NETWORK", "INTERRUPTED", "FAULT", "NOMEM",
               "TOOLONG")


def parse_one_object(text):
    """stdout of --json must be exactly one JSON object (whitespace around
    it allowed, nothing else)."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise AssertionError("stdout is not exactly one JSON document (%s):\n%s"
                             % (e, text[:2000]))
    if not isinstance(doc, dict):
        raise AssertionError("stdout JSON is not an object: %r" % (doc,))
    return doc


def check_envelope(doc, rc):
    """The keys every --json answer has (docs/design.md, Report). Returns a list of
    problems (empty when fine)."""
    bad = []
    for key in ("command", "ok", "changed", "exit_code", "target", "checks"):
        if key not in doc:
            bad.append("missing key %r" % key)
    if bad:
        return bad
    if not isinstance(doc["command"], str) or not doc["command"]:
        bad.append("command is not a non-empty string")
    if not isinstance(doc["ok"], bool) or doc["ok"] != (rc == 0):
        bad.append("ok=%r but exit code %d" % (doc["ok"], rc))
    if not isinstance(doc["changed"], bool):
        bad.append("changed is not a bool")
    if doc["exit_code"] != rc or isinstance(doc["exit_code"], bool):
        bad.append("exit_code=%r but the process exited %d"
                   % (doc["exit_code"], rc))
    if doc["target"] is not None and not isinstance(doc["target"], str):
        bad.append("target is neither a string nor null")
    if not isinstance(doc["checks"], list):
        bad.append("checks is not a list")
    else:
        for i, c in enumerate(doc["checks"]):
            if not isinstance(c, dict) or set(("name", "status", "detail")) - set(c):
                bad.append("checks[%d] lacks name/status/detail" % i)
            elif c["status"] not in CHECK_STATUSES:
                bad.append("checks[%d].status=%r" % (i, c["status"]))
    err = doc.get("error")
    if rc >= 2 and err is None:
        bad.append("exit %d without an error object" % rc)
    if err is not None:
        if not isinstance(err, dict) or not isinstance(err.get("code"), str) \
                or not isinstance(err.get("message"), str):
            bad.append("error must be {code: str, message: str}: %r" % (err,))
        elif err["code"] not in ERROR_CODES:
            bad.append("unknown error code %r" % err["code"])
        elif not err["message"].strip():
            bad.append("empty error message")
    return bad


def run_json(args, env=None, expect=None, timeout=DEFAULT_TIMEOUT):
    """Run with --json first; asserts stdout is exactly one object with the
    envelope keys; returns JsonResult(rc, doc, err, out)."""
    args = ["--json"] + list(args)
    res = run(args, env=env, expect=expect, timeout=timeout)
    cmd = [BIN] + args
    try:
        doc = parse_one_object(res.out)
    except AssertionError as e:
        raise AssertionError(str(e) + describe(cmd, res.rc, res.out, res.err))
    bad = check_envelope(doc, res.rc)
    if bad:
        raise AssertionError("bad --json answer: " + "; ".join(bad)
                             + describe(cmd, res.rc, res.out, res.err))
    return JsonResult(res.rc, doc, res.err, res.out)


def spawn(args, env=None):
    """Start cudnn-deploy without waiting (kill tests). Own process group so a
    signal reaches only it."""
    wine_prefix_ready()
    return subprocess.Popen([BIN] + [str(a) for a in args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=clean_env(env),
                            start_new_session=True)


def install_args(target, fixture=None, manifest=None, archive=None, *extra):
    """install argv. target: argv list (['--cuda-root', DIR]) or a Workspace.
    --no-verify: the fake libraries are not loadable; verification of real
    ones is the verify issue's business."""
    if hasattr(target, "target_args"):     # a trees.Workspace
        target = target.target_args
    return (["install"] + list(target)
            + ["--manifest", manifest or fixture.manifest_path,
               "--archive", archive or fixture.path, "--no-verify"]
            + [str(e) for e in extra])


def plan_of(doc):
    """{path: action} of a --json answer's plan."""
    plan = doc.get("plan")
    if not isinstance(plan, list):
        raise AssertionError("no plan list in %r" % sorted(doc))
    out = {}
    for item in plan:
        for k in ("path", "action", "role"):
            if k not in item:
                raise AssertionError("plan item without %s: %r" % (k, item))
        out[item["path"]] = item["action"]
    return out
