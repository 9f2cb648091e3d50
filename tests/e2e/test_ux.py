"""The first hour (issue 12), end to end: fixes rendered and quoted for each
shell for a tree whose path holds spaces, quotes, '$', a backtick command and
'%' (the sh form pasted into real shells), the same fix from verify and
doctor; the short and --verbose forms; colour on a terminal only (NO_COLOR,
--color, never with --json); suggestions for mistyped commands, options and
values, `help COMMAND`, options anywhere; hints in the first errors; an
uninstall refusal that names the changed files and the way out; progress on a
terminal only; make demo failing when the tool fails, with no escape codes
off a terminal."""

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fakecudnn  # noqa: E402
from cddtest import (EXIT_CHECK, EXIT_OK, EXIT_REJECTED, EXIT_USAGE,  # noqa: E402
                     FIX, BIN, CddTestCase, clean_env, install_args,
                     make_cuda_tree, run, run_json)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HOSTILE = "it's $HOME `echo pwned` \"q\" 100%OS% !x ^&"
# A driver that is not there, never this host's own: on a GPU machine the
# real libcuda would hand the fake cuDNN device pointers, and its
# convolution would crash (test_verify.NO_DRIVER says the same).
NO_DRIVER = {"CUDNN_DEPLOY_DRIVER_LIB": os.path.join(cddtest.WORK_ROOT, "no-driver",
                                                     "libcuda.so.1"),
             "LD_LIBRARY_PATH": None}


def flip_file_byte(path, offset=100):
    """One bit of the file changed, its size kept."""
    with open(path, "r+b") as f:
        f.seek(offset)
        b = f.read(1)
        f.seek(offset)
        f.write(bytes([b[0] ^ 1]))


# -- the quoting rules, written again here so that the test does not trust
# -- the code it tests ----------------------------------------------------

def sh_q(s):
    return "'" + s.replace("'", "'\\''") + "'"


def fish_q(s):
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def ps_q(s):
    return "'" + s.replace("'", "''") + "'"


def cmd_carets(s):
    out, after_pct = [], False
    for ch in s:
        if after_pct or ch in "&|<>^()\"!":
            out.append("^")
        after_pct = ch == "%"
        out.append(ch)
    return "".join(out)


def run_pty(args, env=None, timeout=120):
    """cudnn-deploy args with stderr on a terminal (stdout a pipe): (rc,
    stdout, what the terminal got)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([BIN] + [str(a) for a in args], stdin=subprocess.DEVNULL,
                         stdout=subprocess.PIPE, stderr=slave, env=clean_env(env))
    os.close(slave)
    got = b""
    while True:
        r, _, _ = select.select([master], [], [], timeout)
        if not r:
            p.kill()
            break
        try:
            chunk = os.read(master, 65536)
        except OSError:      # EIO: the other side closed
            break
        if not chunk:
            break
        got += chunk
    os.close(master)
    out = p.stdout.read()
    p.stdout.close()
    rc = p.wait(timeout)
    return rc, out.decode("utf-8", "replace"), got.decode("utf-8", "replace")


def fixes_of(doc, name):
    for c in doc["checks"]:
        if c["name"] == name:
            return c.get("fixes", [])
    raise AssertionError("no check %r" % name)


@unittest.skipIf(fakecudnn.problem(), fakecudnn.problem() or "")
class ShellQuoting(CddTestCase):
    """A tree under a hostile path, cuDNN installed, its lib64 not searched:
    verify's fix for each shell."""

    @classmethod
    def setUpClass(cls):
        super(ShellQuoting, cls).setUpClass()
        cls.tree = os.path.join(cddtest.WORK_ROOT, "ShellQuoting", "My CUDA",
                                HOSTILE, "cuda-11.6")
        make_cuda_tree(cls.tree)
        run_json(fakecudnn.archive("ok").install_args(cls.tree, "--no-verify"),
                 env=NO_DRIVER, expect=EXIT_OK)
        cls.lib64 = os.path.join(cls.tree, "lib64")

    def verify_fixes(self, shell):
        j = run_json(["verify", "--cuda-root", self.tree, "--shell", shell],
                     env=NO_DRIVER, expect=EXIT_OK)
        self.assertEqual(j.doc["shell"], "powershell" if shell == "pwsh" else shell)
        return [f.get("command") for f in
                fixes_of(j.doc, "load.search libcudnn.so.8")], j

    def test_each_shell(self):
        lib = self.lib64
        want = {
            "sh": "export LD_LIBRARY_PATH=%s\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\""
                  % sh_q(lib),
            "bash": "export LD_LIBRARY_PATH=%s\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\""
                    % sh_q(lib),
            "zsh": "export LD_LIBRARY_PATH=%s\"${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}\""
                   % sh_q(lib),
            "fish": "set -gx LD_LIBRARY_PATH %s $LD_LIBRARY_PATH" % fish_q(lib),
            "powershell": "$env:LD_LIBRARY_PATH = %s + $(if ($env:LD_LIBRARY_PATH) "
                          "{ ':' + $env:LD_LIBRARY_PATH })" % ps_q(lib),
            "pwsh": "$env:LD_LIBRARY_PATH = %s + $(if ($env:LD_LIBRARY_PATH) "
                    "{ ':' + $env:LD_LIBRARY_PATH })" % ps_q(lib),
            # '%' in the value: cmd cannot quote it, so carets.
            "cmd": "set LD_LIBRARY_PATH=%s:%%LD_LIBRARY_PATH%%" % cmd_carets(lib),
        }
        for shell, first in sorted(want.items()):
            with self.subTest(shell=shell):
                cmds, j = self.verify_fixes(shell)
                self.assertEqual(cmds[0], first)
                self.assertEqual(len(cmds), 2, "this shell, and system-wide")
        # The system-wide one for sh: the file and ldconfig, as root.
        cmds, _ = self.verify_fixes("sh")
        self.assertEqual(cmds[1], "printf '%%s\\n' %s | sudo tee "
                         "/etc/ld.so.conf.d/cudnn.conf >/dev/null && sudo ldconfig"
                         % sh_q(lib))
        # cmd's system-wide form (setx/PowerShell inside cmd) cannot hold '%':
        # said, not mangled.
        j = run_json(["verify", "--cuda-root", self.tree, "--shell", "cmd"],
                     env=NO_DRIVER, expect=EXIT_OK)
        f = fixes_of(j.doc, "load.search libcudnn.so.8")
        self.assertIn("command", f[0])

    def test_sh_output_pasted_into_real_shells(self):
        cmds, _ = self.verify_fixes("sh")
        for shell in (["sh"], ["bash", "--norc", "--noprofile", "-i"]):
            if not shutil.which(shell[0]):
                continue
            for before, want in ((None, self.lib64),
                                 ("/old", self.lib64 + ":/old")):
                with self.subTest(shell=shell[0], before=before):
                    env = dict(os.environ)
                    env.pop("LD_LIBRARY_PATH", None)
                    if before:
                        env["LD_LIBRARY_PATH"] = before
                    script = "%s\nprintf '[%%s]' \"$LD_LIBRARY_PATH\"\n" % cmds[0]
                    p = subprocess.run(shell, input=script.encode(), env=env,
                                       stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL, timeout=60)
                    self.assertEqual(p.stdout.decode(), "[%s]" % want)

    def test_human_form_quotes_too(self):
        r = run(["verify", "--cuda-root", self.tree, "--shell", "fish"],
                env=NO_DRIVER, expect=EXIT_OK)
        self.assertIn("        > fix (this shell): set -gx LD_LIBRARY_PATH %s "
                      "$LD_LIBRARY_PATH" % fish_q(self.lib64), r.err)

    def test_same_fix_in_verify_and_doctor(self):
        for shell in ("sh", "fish", "powershell", "cmd"):
            with self.subTest(shell=shell):
                v, _ = self.verify_fixes(shell)
                d = run_json(["doctor", "--cuda-root", self.tree, "--shell", shell],
                             env=dict(NO_DRIVER, PATH="/usr/bin:/bin", HOME=self.tree,
                                      CONDA_PREFIX=None, VIRTUAL_ENV=None,
                                      PYTHONPATH=None, CUDNN_PATH=None),
                             expect=(EXIT_OK, EXIT_CHECK))
                self.assertEqual([f.get("command") for f in
                                  fixes_of(d.doc, "target.search")], v)

@unittest.skipIf(fakecudnn.problem(), fakecudnn.problem() or "")
class ShortAndColour(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(ShortAndColour, cls).setUpClass()
        cls.tree = os.path.join(cddtest.WORK_ROOT, "ShortAndColour", "tree")
        make_cuda_tree(cls.tree)
        run_json(fakecudnn.archive("ok").install_args(cls.tree, "--no-verify"),
                 env=NO_DRIVER, expect=EXIT_OK)

    def test_install_short_and_verbose(self):
        tree = os.path.join(self.scratch("t"), "cuda")
        make_cuda_tree(tree)
        args = fakecudnn.archive("ok").install_args(tree)
        r = run(args, env=NO_DRIVER, expect=EXIT_OK)
        self.assertNotRegex(r.err, r"(?m)^  new ", "the plan only with --verbose")
        self.assertRegex(r.err, r"(?m)^Installed: 25 new, 0 replaced")
        self.assertRegex(r.err, r"(?m)^  pass  load: \d+ other checks passed$")
        self.assertRegex(r.err, r"(?m)^  skip  gpu: no NVIDIA driver")
        self.assertLess(len(r.err.splitlines()), 14, r.err)
        run(["uninstall", "--cuda-root", tree], expect=EXIT_OK)
        r = run(args + ["--verbose"], env=NO_DRIVER, expect=EXIT_OK)
        self.assertRegex(r.err, r"(?m)^  new       lib64/libcudnn.so.8.5.0$")
        self.assertRegex(r.err, r"(?m)^  pass  load.version: ")

    def test_colour_on_a_terminal_only(self):
        args = ["verify", "--cuda-root", self.tree]
        rc, out, tty = run_pty(args, env=dict(NO_DRIVER, TERM="xterm"))
        self.assertEqual(rc, EXIT_OK)
        self.assertIn("\x1b[32mpass\x1b[0m", tty)
        self.assertIn("\x1b[33mwarn\x1b[0m", tty)
        # NO_COLOR (any non-empty value), TERM=dumb, --color never: none.
        for env, extra in ((dict(NO_COLOR="1", TERM="xterm"), []),
                           (dict(TERM="dumb"), []),
                           (dict(TERM="xterm"), ["--color", "never"])):
            with self.subTest(env=env, extra=extra):
                rc, _, tty = run_pty(args + extra, env=dict(NO_DRIVER, **env))
                self.assertNotIn("\x1b[", tty)
                self.assertIn("  pass  files: ", tty)
        # --color always beats NO_COLOR, also off a terminal ...
        r = run(args + ["--color", "always"], env=dict(NO_DRIVER, NO_COLOR="1"),
                expect=EXIT_OK)
        self.assertIn("\x1b[32mpass\x1b[0m", r.err)
        # ... but never with --json, whose stdout is never coloured either.
        rc, out, tty = run_pty(["--json", "--color", "always"] + args,
                               env=dict(NO_DRIVER, TERM="xterm"))
        self.assertNotIn("\x1b[", tty + out)
        cddtest.parse_one_object(out)
        # Redirected: none.
        r = run(args, env=dict(NO_DRIVER, TERM="xterm"), expect=EXIT_OK)
        self.assertNotIn("\x1b[", r.err)

    def test_error_coloured_on_a_terminal(self):
        rc, _, tty = run_pty(["verfy"], env={"TERM": "xterm"})
        self.assertEqual(rc, EXIT_USAGE)
        self.assertIn("\x1b[1;31merror:\x1b[0m", tty)


class Suggestions(CddTestCase):

    def test_help_command(self):
        r = run(["help"], expect=EXIT_OK)
        self.assertIn("Commands:", r.out)
        self.assertIn("help COMMAND", r.out)
        for cmd in ("install", "verify", "doctor"):
            with self.subTest(cmd=cmd):
                h = run(["help", cmd], expect=EXIT_OK)
                self.assertEqual(h.out, run([cmd, "--help"], expect=0).out)
                self.assertTrue(h.out.startswith("Usage: cudnn-deploy %s " % cmd))

    def test_options_anywhere(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        # Before the command (the command's own options too), after it, and
        # after its arguments.
        for args in (["--json", "status", "--cuda-root", ws.tree],
                     ["status", "--cuda-root", ws.tree, "--json"],
                     ["--cuda-root", ws.tree, "--json", "status"],
                     ["-q", "--json", "status", "--cuda-root", ws.tree]):
            with self.subTest(args=args):
                r = run(args, expect=EXIT_OK)
                doc = cddtest.parse_one_object(r.out)
                self.assertEqual(doc["command"], "status")
        r = run(["status", "--cuda-root", ws.tree, "--quiet"], expect=EXIT_OK)
        self.assertEqual(r.err, "")
        r = run(["--quiet", "status", "--cuda-root", ws.tree], expect=EXIT_OK)
        self.assertEqual(r.err, "")


class Hints(CddTestCase):

    def test_archive_the_default_manifest_does_not_pin(self):
        ws = self.workspace()
        before = ws.snap()
        j = run_json(["install"] + ws.target_args + ["--archive", FIX.linux.path],
                     expect=EXIT_REJECTED)
        self.assertEqual(j.doc["error"]["code"], "CHECKSUM")
        hint = j.doc["error"]["hint"]
        self.assertIn("--manifest", hint)
        self.assertIn("manifest create", hint)
        self.assertRegex(j.err, r"(?m)^cudnn-deploy: hint: .*--manifest")
        self.assertSameTree(before, ws.snap())
        # With --manifest the user chose: the plain error, no hint.
        bad = FIX.linux.path + ".flipped"
        shutil.copy(FIX.linux.path, bad)
        flip_file_byte(bad)
        j = run_json(["install"] + ws.target_args + ["--manifest",
                     FIX.linux.manifest_path, "--archive", bad],
                     expect=EXIT_REJECTED)
        self.assertNotIn("hint", j.doc["error"])

class UninstallRefusal(CddTestCase):

    def test_refusal_names_the_changed_files_and_the_way_out(self):
        ws = self.workspace("My ws")
        self.install(ws, FIX.linux)
        flip_file_byte(ws.path("include/cudnn_cnn_infer.h"))
        r = run(["uninstall"] + ws.target_args, expect=EXIT_CHECK)
        self.assertIn("Nothing was removed: 1 file changed since install:",
                      r.err)
        self.assertRegex(r.err, r"(?m)^  changed   include/cudnn_cnn_infer.h")
        # The way out, with the path quoted for the shell (a space in it).
        self.assertIn("cudnn-deploy uninstall --cuda-root %s --force"
                      % sh_q(ws.tree), r.err)
        # Not the plan it did not carry out.
        self.assertNotRegex(r.err, r"(?m)^  remove ")
        self.assertNotIn("lib64/libcudnn.so", r.err)
        # Decided before anything moved: the tree is as it was.
        run(["status", "--check", "--cuda-root", ws.tree], expect=EXIT_CHECK)

    def test_success_is_one_line_unless_verbose(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        r = run(["uninstall"] + ws.target_args, expect=EXIT_OK)
        self.assertEqual(len(r.err.splitlines()), 1, r.err)
        self.install(ws, FIX.linux)
        r = run(["uninstall", "-v"] + ws.target_args, expect=EXIT_OK)
        self.assertRegex(r.err, r"(?m)^  remove ")


class Progress(CddTestCase):

    def test_on_a_terminal_only(self):
        ws = self.workspace()
        args = install_args(ws, FIX.linux)
        rc, _, tty = run_pty(args)
        self.assertEqual(rc, EXIT_OK, tty)
        line = [s for s in tty.split("\r") if s.startswith("check ")]
        self.assertTrue(line, "no check progress on the terminal: %r" % tty)
        self.assertRegex(line[-1], r"^check    \[#+\.*\] +\d+% [\d.]+ [KM]iB "
                         r"of [\d.]+ [KM]iB, [\d.]+ [KM]iB/s, ([\d:]+|--:--) left *$")
        # Not a terminal: no progress at all.
        ws2 = self.workspace("b")
        r = run(install_args(ws2, FIX.linux), expect=EXIT_OK)
        self.assertNotIn("\r", r.err)
        self.assertNotIn("check ", r.err)


class InstallDeps(CddTestCase):
    """scripts/install-deps.sh against a fake apt-get (and a dpkg-query that
    says nothing is installed): it waits for a held lock, retries a failed
    update once, and gives up after its timeout with a message."""

    def fake(self, apt_script):
        d = self.scratch("bin")
        with open(os.path.join(d, "dpkg-query"), "w") as f:
            f.write("#!/bin/sh\nexit 1\n")
        with open(os.path.join(d, "apt-get"), "w") as f:
            f.write("#!/bin/sh\n" + apt_script)
        with open(os.path.join(d, "id"), "w") as f:
            f.write("#!/bin/sh\necho 0\n")    # as root: no sudo
        # Present: the best-effort Ansible run (--fleet) does not start.
        with open(os.path.join(d, "ansible-playbook"), "w") as f:
            f.write("#!/bin/sh\nexit 0\n")
        for n in ("dpkg-query", "apt-get", "id", "ansible-playbook"):
            os.chmod(os.path.join(d, n), 0o755)
        return d

    def deps(self, bindir, **env):
        e = dict(os.environ, PATH=bindir + ":" + os.environ["PATH"],
                 CDD_APT_LOCK_POLL="0.1", CDD_APT_RETRY_DELAY="0", **env)
        return subprocess.run(["sh", os.path.join(ROOT, "scripts", "install-deps.sh")],
                              stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=e, timeout=120)

    def test_waits_for_the_lock(self):
        state = os.path.join(self.scratch("state"), "n")
        # The lock is held for the first three calls.
        d = self.fake('n=$(cat "%s" 2>/dev/null || echo 0); echo $((n+1)) > "%s"\n'
                      'if [ "$n" -lt 3 ]; then echo "E: Could not get lock '
                      '/var/lib/dpkg/lock-frontend. It is held by process 42 '
                      '(apt)" >&2; exit 100; fi\necho "$@" >> "%s.calls"\n'
                      % (state, state, state))
        p = self.deps(d, CDD_APT_LOCK_TIMEOUT="60")
        err = p.stderr.decode()
        self.assertEqual(p.returncode, 0, err)
        self.assertEqual(err.count("another apt or dpkg is running"), 1, err)
        with open(state + ".calls") as f:
            calls = f.read().splitlines()
        self.assertEqual(len(calls), 2, calls)          # update, install
        self.assertIn("update", calls[0])
        self.assertIn("install", calls[1])

    def test_gives_up_after_the_timeout(self):
        d = self.fake('echo "E: Could not get lock /var/lib/apt/lists/lock" >&2; '
                      'exit 100\n')
        p = self.deps(d, CDD_APT_LOCK_TIMEOUT="1")
        err = p.stderr.decode()
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("still holds the lock after 1s", err)

    def test_update_is_retried_once(self):
        state = os.path.join(self.scratch("state"), "n")
        d = self.fake('n=$(cat "%s" 2>/dev/null || echo 0); echo $((n+1)) > "%s"\n'
                      'if [ "$n" = 0 ]; then echo "E: Failed to fetch" >&2; '
                      'exit 100; fi\nexit 0\n' % (state, state))
        p = self.deps(d)
        self.assertEqual(p.returncode, 0, p.stderr.decode())
        self.assertIn("apt-get update failed; trying once more", p.stderr.decode())
        # Failing twice fails.
        d = self.fake('case "$*" in *update*) echo "E: Failed" >&2; exit 100;; '
                      'esac\nexit 0\n')
        self.assertNotEqual(self.deps(d).returncode, 0)


@unittest.skipUnless(os.path.exists(os.path.join(ROOT, "scripts", "demo.sh")),
                     "no scripts/demo.sh")
@unittest.skipIf(fakecudnn.problem(), fakecudnn.problem() or "")
class Demo(CddTestCase):
    """scripts/demo.sh, with the real binary and with one that fails."""

    def demo(self, binary, **env):
        e = clean_env(dict(env, TMPDIR=self.scratch("tmp")))
        return subprocess.run(["sh", os.path.join(ROOT, "scripts", "demo.sh"),
                               binary], stdin=subprocess.DEVNULL,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=e, timeout=600)

    def test_demo_passes_with_a_summary_and_no_escapes(self):
        p = self.demo(BIN)
        out = p.stdout.decode("utf-8", "replace")
        self.assertEqual(p.returncode, 0, out[-3000:])
        self.assertNotIn("\x1b", out, "escape codes in a log")
        self.assertIn("\nSummary\n", out)
        self.assertIn("uninstall: the tree is exactly as before the install", out)
        self.assertRegex(out, r"verify: +exit 0: \d+ pass")
        self.assertIn("did you mean 'verify'?", out)
        self.assertIn("cudnn-deploy: hint: ", out)
        self.assertIn("Nothing was removed: 1 file changed", out)
        # The commands shown are the ones run: the binary as given, the
        # variables set for it.
        self.assertIn("$ %s install --cuda-root $DEMO/cuda-11.6" % BIN, out)
        if "skipped (no C compiler" not in out:
            self.assertIn("$ LD_LIBRARY_PATH=$DEMO/cuda-11.6/lib64 %s verify "
                          "--cuda-root $DEMO/cuda-11.6 --verbose" % BIN, out)
        # The scratch folder: named, deleted, and the way to keep it said.
        m = re.search(r"Scratch folder: DEMO=(\S+) \(deleted at the end; "
                      r"KEEP=1 keeps it\)", out)
        self.assertTrue(m, out[:500])
        self.assertFalse(os.path.exists(m.group(1)))
        # The last lines: the verdict, then what became of the folder.
        last = out.rstrip().splitlines()[-2:]
        self.assertTrue(last[0].endswith("steps behaved as documented"), last)
        self.assertEqual(last[1], "Deleted the scratch folder %s (KEEP=1 "
                                  "keeps it)" % m.group(1))

    def test_demo_keeps_the_scratch_folder_with_keep(self):
        p = self.demo(BIN, KEEP="1")
        out = p.stdout.decode("utf-8", "replace")
        self.assertEqual(p.returncode, 0, out[-3000:])
        m = re.search(r"Scratch folder: DEMO=(\S+) \(kept at the end", out)
        self.assertTrue(m, out[:500])
        self.assertTrue(os.path.isdir(os.path.join(m.group(1), "cuda-11.6")))
        self.assertIn("Kept the scratch folder: %s" % m.group(1), out)
        shutil.rmtree(m.group(1))

    def test_demo_fails_when_the_tool_fails(self):
        # The real binary, except that install exits 4.
        shim = os.path.join(self.scratch("shim"), "cudnn-deploy")
        with open(shim, "w") as f:
            f.write('#!/bin/sh\nfor a in "$@"; do [ "$a" = install ] && '
                    '{ echo "cudnn-deploy: error: injected" >&2; exit 4; }; done\n'
                    'exec "%s" "$@"\n' % BIN)
        os.chmod(shim, 0o755)
        p = self.demo(shim)
        out = p.stdout.decode("utf-8", "replace")
        self.assertNotEqual(p.returncode, 0, out[-3000:])
        self.assertIn("expected 0: FAILED", out)
        self.assertRegex(out, r"(?m)^demo: FAILED: cudnn-deploy install exited 4, "
                         r"not 0$")
        # It stops at the first step that failed, after the summary.
        self.assertIn("\nSummary\n", out)
        self.assertNotIn("cudnn-deploy status", out)


class SmallerItems(CddTestCase):
    """Issue 23's smaller items, each as a user sees it."""

    def test_force_help_per_command(self):
        inst = run(["help", "install"], expect=EXIT_OK).out
        unin = run(["help", "uninstall"], expect=EXIT_OK).out
        line = [l for l in inst.splitlines() if "-f, --force" in l][0]
        self.assertIn("CUDA version", line)
        self.assertNotIn("uninstall", line)
        line = [l for l in unin.splitlines() if "-f, --force" in l][0]
        self.assertIn("changed since install", line)
        self.assertNotIn("CUDA version", line)

    def test_option_help_aligned(self):
        # Every option's help starts in column 31, also after a long
        # synopsis (--connect-timeout SECONDS: the help on the next line).
        text = run(["help", "install"], expect=EXIT_OK).out
        opts = text.split("\nOptions:\n", 1)[1].split("\n\nGlobal", 1)[0]
        for l in opts.splitlines():
            with self.subTest(line=l):
                if l.startswith(" " * 31):
                    self.assertNotEqual(l[31], " ")
                else:
                    self.assertRegex(l, r"^  (-., |    )--\S+( \S+)?")
                    if len(l) > 31:
                        self.assertEqual(l[30], " ")
                        self.assertNotEqual(l[31], " ")
        self.assertIn("--connect-timeout SECONDS\n" + " " * 31 + "give up",
                      text)

    def test_counts_are_plural_right(self):
        ws = self.workspace()
        r = run(["verify", "--cuda-root", ws.tree, "--manifest",
                 "cudnn-8.5.0.96-cuda11-linux-x86_64"], env=NO_DRIVER)
        self.assertNotIn("(s)", r.err)
        self.assertRegex(r.err, r"Verify: 1 check failed, 0 warnings\.")
        d = run(["doctor"], env=NO_DRIVER)
        self.assertNotIn("(s)", d.out + d.err)

    def test_verify_manifest_on_an_empty_tree(self):
        ws = self.workspace()
        r = run(["verify", "--cuda-root", ws.tree, "--manifest",
                 "cudnn-8.5.0.96-cuda11-linux-x86_64"], env=NO_DRIVER,
                expect=EXIT_CHECK)
        fails = [l for l in r.err.splitlines() if l.strip().startswith("fail")]
        self.assertEqual(len(fails), 1, r.err)
        self.assertIn("nothing installed", fails[0])
        self.assertIn("31 files", fails[0])
        # One file there: the per-file report as before.
        os.makedirs(os.path.join(ws.tree, "include"), exist_ok=True)
        with open(os.path.join(ws.tree, "include", "cudnn.h"), "w") as f:
            f.write("x")
        r = run(["verify", "--cuda-root", ws.tree, "--manifest",
                 "cudnn-8.5.0.96-cuda11-linux-x86_64"], env=NO_DRIVER,
                expect=EXIT_CHECK)
        self.assertNotIn("nothing installed", r.err)
        self.assertIn("lib64/libcudnn.so.8: missing", r.err)

    def test_no_driver_said_once(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        r = run(["verify", "--cuda-root", ws.tree], env=NO_DRIVER)
        gpu = [l for l in r.err.splitlines() if "gpu:" in l]
        self.assertTrue(gpu, r.err)
        self.assertEqual(gpu[0].count("no NVIDIA driver"), 1, gpu[0])


class EmptiedTree(CddTestCase):
    """Issue 23: an uninstall that empties the tree of everything of ours
    takes .cudnn-deploy/ with it (POSIX; docs/design.md says why Windows
    keeps it), without ever letting two processes hold the lock: whoever
    waited on the removed lock file starts again on a fresh one."""

    def test_emptied_tree_is_as_before_state_folder_included(self):
        ws = self.workspace()
        before = ws.snap(ignore=())
        self.assertNotIn(cddtest.STATE, before)
        self.install(ws, FIX.linux)
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["state_removed"], True)
        self.assertFalse(os.path.lexists(ws.path(cddtest.STATE)))
        snap = cddtest.snapshot(ws.tree, (), drop_empty_state=False)
        self.assertSameTree(before, snap)
        # And the tree works as a fresh one.
        self.install(ws, FIX.linux)
        self.cdd("status", *ws.target_args, expect=0)

    def test_a_restored_install_keeps_the_state(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        self.install(ws, FIX.linux, "--profile", "runtime")
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["state_removed"], False)
        self.assertTrue(os.path.isfile(ws.path(cddtest.RECEIPT)))

    def test_something_else_in_the_folder_keeps_it(self):
        ws = self.workspace()
        self.install(ws, FIX.linux)
        note = ws.path(cddtest.STATE + "/notes.txt")
        with open(note, "w") as f:
            f.write("mine\n")
        j = self.cdd_json("uninstall", *ws.target_args, expect=0)
        self.assertIs(j.doc["state_removed"], False)
        self.assertTrue(os.path.isfile(note))
        self.assertTrue(os.path.isfile(ws.path(cddtest.LOCK)))

    def waiting_install(self, ws, timeout):
        """An install started while the lock is held, once it waits."""
        args = install_args(ws, FIX.linux) + ["--json", "--lock-timeout",
                                               str(timeout)]
        p = subprocess.Popen([BIN] + args, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env=clean_env(None))
        # It has opened the folder and the lock file and waits on it; the
        # holder's pid is what it would name.
        import time
        time.sleep(2.0)
        self.assertIsNone(p.poll(), "the install did not wait")
        return p

    def test_a_waiting_install_starts_again_on_a_fresh_lock(self):
        """What the emptying uninstall does, while another install waits
        on the lock: the lock file and the folder go while held; the
        waiter then holds a lock on a file nobody can see, notices, and
        takes the lock of a new folder (before: refused, 'replaced')."""
        ws = self.workspace()
        holder = cddtest.LockHolder(ws.tree).acquire()
        try:
            p = self.waiting_install(ws, 60)
            os.unlink(ws.path(cddtest.LOCK))
            os.rmdir(ws.path(cddtest.STATE))
        finally:
            holder.release()
        out, err = p.communicate(timeout=120)
        self.assertEqual(p.returncode, 0, err.decode())
        self.assertTrue(os.path.isfile(ws.path(cddtest.RECEIPT)))

    def test_a_removed_lock_file_never_gives_two_holders(self):
        """The lock file unlinked while held (the folder kept), and a
        newcomer locking the new file of that name: the process that waited
        on the old file must not go on beside the newcomer; it waits for
        the new lock (and here times out)."""
        ws = self.workspace()
        holder = cddtest.LockHolder(ws.tree).acquire()
        newcomer = None
        try:
            p = self.waiting_install(ws, 4)
            os.unlink(ws.path(cddtest.LOCK))
            newcomer = cddtest.LockHolder(ws.tree).acquire()
            holder.release()
            out, err = p.communicate(timeout=120)
        finally:
            holder.release()
            if newcomer:
                newcomer.release()
        doc = json.loads(out.decode())
        self.assertEqual(p.returncode, 4, err.decode())
        self.assertEqual(doc["error"]["code"], "LOCKED", doc)
        self.assertFalse(os.path.exists(ws.path(cddtest.RECEIPT)))

    def test_installs_and_uninstalls_racing(self):
        """Two processes, each installing and uninstalling the same fresh
        tree in turn: every command succeeds, none sees the other's half
        state, and the tree ends consistent."""
        ws = self.workspace()
        before = ws.snap(ignore=())
        cmds = []
        for _ in range(2):
            script = []
            for _ in range(4):
                script.append(install_args(ws, FIX.linux)
                              + ["--lock-timeout", "120"])
                script.append(["uninstall"] + ws.target_args
                              + ["--lock-timeout", "120"])
            cmds.append(script)
        results = []

        def worker(script):
            for a in script:
                results.append(run(a))

        import threading
        ts = [threading.Thread(target=worker, args=(c,)) for c in cmds]
        for t in ts:
            t.start()
        for t in ts:
            t.join(timeout=600)
        self.assertEqual(len(results), 16)
        for r in results:
            self.assertEqual(r.rc, 0, r.err)
        # Both end with an uninstall; whatever order they ran in, an
        # install is undone by one of them... unless the last two
        # uninstalls undid one install twice (the second finds nothing).
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.cdd("uninstall", *ws.target_args, expect=0)
        self.assertSameTree(before,
                            cddtest.snapshot(ws.tree, (),
                                             drop_empty_state=False))


if __name__ == "__main__":
    cddtest.main()
