"""Runs declarative command-line cases: tests/cli/*.t, each a table of
"these arguments -> this exit code and these messages" (the idea of
pkgconf's t/*.test, our own format). One ctest entry per table
(cli.<table>); docs/testing.md explains the format. In short:

    # a comment
    exit: 2                       a block without args: sets the defaults
    stdout:                       for the cases below it (until the next
    stderr~: --help               such block)

    name: --jobs 0                a case: its lines add to the defaults
    args: install --cuda-root {tree} --jobs 0
    stderr~: --jobs

Keys: args (split like a shell would, after the placeholders), env
(NAME=VALUE, or NAME= to remove it), exit; stdout / stderr / output (both
together) with an operator: none for exactly this text (empty: nothing),
~ for contains, !~ for does not contain, / for a regular expression;
stderr-lines (N or <=N); json.<dotted.path> (stdout is exactly one JSON
object; the value is JSON, or text) and json.<path>~ (a string containing), and with any of them the --json
envelope's own checks;
tree (unchanged, the default: as before but for the lock file;
untouched: not even a lock; any). Placeholders: {tree} and {other}
(CUDA 11.6 trees in the table's workspace), {ws} (the workspace folder),
{gone} (a path in it that does not exist), {manifest} and {archive} (the
fake Linux cuDNN 8.5 fixture, exact manifest).

Every case also asserts that nothing outside the trees changed. Exit 77
(ctest "Skipped") without CDD_BIN. `--self-test` checks that the runner
catches each kind of wrong expectation."""

import json
import os
import re
import shlex
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "e2e"))
import cddtest  # noqa: E402
from cddtest import FIX, Workspace, diff_snapshots  # noqa: E402

STREAMS = ("stdout", "stderr", "output")
OPS = ("!~", "~", "/", "")
KEY = re.compile(r"^(args|name|env|exit|tree|stderr-lines|"
                 r"json(?:\.[A-Za-z0-9_]+)+~?|"
                 r"(?:stdout|stderr|output)(?:!~|~|/)?):(?: (.*))?$")


class TableError(Exception):
    pass


class Case(object):
    def __init__(self, where, lines):
        self.where = where        # "file:line"
        self.lines = lines        # [(lineno, key, value)]

    def get(self, key):
        vals = [v for _, k, v in self.lines if k == key]
        return vals[-1] if vals else None

    def all(self, key):
        return [v for _, k, v in self.lines if k == key]

    @property
    def name(self):
        return self.get("name") or self.get("args") or self.where


def parse(path, text=None):
    """The cases of one table, each with its defaults merged in."""
    if text is None:
        with open(path, encoding="utf-8") as f:
            text = f.read()
    blocks, cur = [], []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if line.startswith("#"):
            continue
        if not line:
            if cur:
                blocks.append(cur)
                cur = []
            continue
        m = KEY.match(line)
        if not m:
            raise TableError("%s:%d: not a 'key: value' line of the format: %r"
                             % (path, n, line))
        cur.append((n, m.group(1), m.group(2) or ""))
    if cur:
        blocks.append(cur)
    cases, defaults = [], []
    for b in blocks:
        if not any(k == "args" for _, k, _ in b):
            defaults = b
            continue
        c = Case("%s:%d" % (os.path.basename(path), b[0][0]), defaults + b)
        if c.get("exit") is None:
            raise TableError("%s: no exit: line (nor a default one)" % c.where)
        if len([k for _, k, _ in b if k == "args"]) != 1:
            raise TableError("%s: one args: line per case" % c.where)
        cases.append(c)
    if not cases:
        raise TableError("%s: no case (a case is a block with an args: line)" % path)
    return cases


class Env(object):
    """The table's workspace: two trees and the fixture archive."""

    def __init__(self, name):
        root = os.path.join(cddtest.WORK_ROOT, name)
        self.ws = Workspace(os.path.join(root, "ws"))
        self.other = Workspace(os.path.join(root, "other"))
        self.subst = {"tree": self.ws.tree, "other": self.other.tree,
                      "ws": self.ws.dir, "gone": os.path.join(self.ws.dir, "gone"),
                      "manifest": FIX.linux.manifest_path, "archive": FIX.linux.path}

    def expand(self, s):
        def one(m):
            if m.group(1) not in self.subst:
                raise TableError("unknown placeholder {%s} in %r" % (m.group(1), s))
            return self.subst[m.group(1)]
        return re.sub(r"\{([a-z]+)\}", one, s)


def json_at(doc, path):
    cur = doc
    for part in path:
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise KeyError(".".join(path))
    return cur


def check_stream(problems, label, text, op, want):
    if op == "":
        if text.rstrip("\n") != want:
            problems.append("%s is %r, expected exactly %r" % (label, text, want))
    elif op == "~":
        if want not in text:
            problems.append("%s does not contain %r" % (label, want))
    elif op == "!~":
        if want in text:
            problems.append("%s contains %r" % (label, want))
    elif op == "/":
        if not re.search(want, text):
            problems.append("%s does not match /%s/" % (label, want))


def run_case(env, case):
    """The problems found (empty: the case passed)."""
    args = shlex.split(env.expand(case.get("args")))
    extra = {}
    for e in case.all("env"):
        k, sep, v = e.partition("=")
        if not sep:
            raise TableError("%s: env wants NAME=VALUE, not %r" % (case.where, e))
        extra[k] = env.expand(v) if v else None
    tree = case.get("tree") or "unchanged"
    if tree not in ("unchanged", "untouched", "any"):
        raise TableError("%s: tree: unchanged, untouched or any, not %r"
                         % (case.where, tree))
    ignore = () if tree == "untouched" else cddtest.IGNORE_LOCK
    before = env.ws.snap(ignore), env.other.snap(ignore)
    r = cddtest.run(args, env=extra)
    problems = []
    want_rc = int(case.get("exit"))
    if r.rc != want_rc:
        problems.append("exit %d, expected %d" % (r.rc, want_rc))
    texts = {"stdout": r.out, "stderr": r.err, "output": r.out + r.err}
    doc = None
    if any(k.startswith("json.") for _, k, _ in case.lines):
        try:
            doc = cddtest.parse_one_object(r.out)
            problems += ["--json envelope: " + b for b in cddtest.check_envelope(doc, r.rc)]
        except AssertionError as e:
            problems.append(str(e).splitlines()[0])
    for _, key, value in case.lines:
        stream = next((s for s in STREAMS if key in [s + op for op in OPS]), None)
        if stream:
            op = key[len(stream):]
            check_stream(problems, stream, texts[stream], op, env.expand(value))
        elif key == "stderr-lines":
            n = len(r.err.strip().splitlines())
            if value.startswith("<="):
                if n > int(value[2:]):
                    problems.append("stderr has %d lines, at most %s expected"
                                    % (n, value[2:]))
            elif n != int(value):
                problems.append("stderr has %d lines, %s expected" % (n, value))
        elif key.startswith("json."):
            if doc is None:
                continue
            contains = key.endswith("~")
            path = key[5:].rstrip("~").split(".")
            try:
                got = json_at(doc, path)
            except KeyError:
                problems.append("no %s in the JSON" % key.rstrip("~"))
                continue
            if contains:
                if not isinstance(got, str) or env.expand(value) not in got:
                    problems.append("%s is %r, expected to contain %r"
                                    % (key[:-1], got, value))
            else:
                try:
                    want = json.loads(value)
                except ValueError:
                    want = value
                if got != want:
                    problems.append("%s is %r, expected %r" % (key, got, want))
    if tree != "any":
        for ws, snap in zip((env.ws, env.other), before):
            problems += ["tree changed: " + d
                         for d in diff_snapshots(snap, ws.snap(ignore))]
    for ws in (env.ws, env.other):
        problems += ["outside changed: " + d for d in ws.outside_changes()]
    if problems:
        problems.append(cddtest.describe([cddtest.BIN] + args, r.rc, r.out, r.err)
                        .strip())
    return problems


def run_table(path):
    cases = parse(path)
    env = Env(os.path.splitext(os.path.basename(path))[0])
    failed = 0
    for c in cases:
        problems = run_case(env, c)
        if problems:
            failed += 1
            sys.stderr.write("FAIL %s (%s)\n    %s\n" % (c.name, c.where,
                                                       "\n    ".join(problems)))
        else:
            sys.stderr.write("ok   %s\n" % c.name)
    print("%d passed, %d failed" % (len(cases) - failed, failed))
    return 1 if failed else 0


# Each case is wrong in one way that the runner must report: its name is
# (a part of) the problem the runner must name first.
SELF_TEST = """
exit: 2

name: exit 2, expected 0
args: frobnicate
exit: 0

name: expected exactly 'something'
args: frobnicate
stdout: something

name: stderr does not contain 'no such text anywhere'
args: frobnicate
stderr~: no such text anywhere

name: stderr contains 'frobnicate'
args: frobnicate
stderr!~: frobnicate

name: does not match /^\\d{9}$/
args: frobnicate
output/: ^\\d{9}$

name: lines, 40 expected
args: frobnicate
stderr-lines: 40

name: at most 0 expected
args: frobnicate
stderr-lines: <=0

name: json.error.code is 'USAGE', expected 'CHECKSUM'
args: --json frobnicate
json.error.code: CHECKSUM

name: expected to contain 'no such words'
args: --json frobnicate
json.error.message~: no such words

name: no json.error.nothing_here in the JSON
args: --json frobnicate
json.error.nothing_here: 1

name: stdout is not exactly one JSON document
args: frobnicate
json.ok: false

name: tree changed:
args: install --cuda-root {tree} --manifest {manifest} --archive {archive} --quiet
exit: 1
"""

SELF_TEST_GOOD = """
name: the same binary, right expectations
args: --json frobnicate
exit: 2
json.error.code: USAGE
json.ok: false
stderr-lines: <=3
"""


def self_test():
    env = Env("selftest")
    bad = 0
    for c in parse("self-test", SELF_TEST):
        problems = run_case(env, c)
        if problems and c.name in problems[0]:
            sys.stderr.write("ok   caught: %s\n" % problems[0])
        else:
            bad += 1
            sys.stderr.write("FAIL not caught as %r: %r\n" % (c.name, problems[:1]))
    for c in parse("self-test", SELF_TEST_GOOD):
        problems = run_case(env, c)
        if problems:
            bad += 1
            sys.stderr.write("FAIL %s:\n    %s\n" % (c.name, "\n    ".join(problems)))
        else:
            sys.stderr.write("ok   %s\n" % c.name)
    for text in ("args: x\n", "exit: 2\nargs: a\nargs: b\n", "nonsense\n", "exit: 1\n"):
        try:
            parse("bad-table", text)
        except TableError as e:
            sys.stderr.write("ok   refused: %s\n" % e)
        else:
            bad += 1
            sys.stderr.write("FAIL accepted a bad table: %r\n" % text)
    print("self-test: %s" % ("failed" if bad else "passed"))
    return 1 if bad else 0


def main(argv):
    if not cddtest.BIN:
        print("cli_table: CDD_BIN is not set: skipped")
        return 77
    try:
        if argv == ["--self-test"]:
            return self_test()
        if len(argv) != 1:
            sys.stderr.write("usage: cli_table.py TABLE.t | --self-test\n")
            return 2
        return run_table(argv[0])
    except TableError as e:
        sys.stderr.write("cli_table: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
