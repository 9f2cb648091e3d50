"""The Ansible collection (contrib/ansible/, docs/fleet.md) against localhost
with `-c local`, driving the binary under test on a generated archive:
check mode reports a change and changes nothing (and downloads nothing);
--diff gives the files before and after; present changes the tree, again
does not; a tampered archive fails with the tool's own message and the tree
unchanged; absent restores the tree; cudnn_facts reports release, profile,
CUDA and the verify outcome; the playbooks pass --syntax-check. Debian's ansible-core
(scripts/install-deps.sh); skips, saying why, where ansible-playbook is
missing or the binary runs under Wine."""

import json
import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import BIN, FIX, CddTestCase  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
COLLECTIONS = os.path.normpath(os.path.join(HERE, "..", "..", "contrib",
                                            "ansible"))


def problem():
    if os.environ.get("CDD_WINDOWS"):
        return "the managed host would be Windows (the module runs on POSIX)"
    if not shutil.which("ansible-playbook"):
        return ("ansible-playbook is not installed (Debian's ansible-core: "
                "scripts/install-deps.sh)")
    return None


def yaml_str(s):
    return json.dumps(s)     # JSON strings are YAML strings


class AnsibleModule(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(AnsibleModule, cls).setUpClass()
        why = problem()
        if why:
            raise unittest.SkipTest(why)

    def setUp(self):
        self.dir = self.scratch("ansible")
        self.ws = self.workspace()
        self.home = os.path.join(self.dir, "home")
        os.makedirs(self.home)

    def play(self, task_args, *flags, state="present",
             module="cudnn_deploy.fleet.cudnn"):
        """Run one task of cudnn_deploy.fleet.cudnn; returns (rc of
        ansible-playbook, the task's registered result). The result is
        written out by a second task (Debian's ansible-core has no json
        stdout callback), which runs in check mode too."""
        out = os.path.join(self.dir, "result.json")
        if os.path.exists(out):
            os.unlink(out)
        lines = ["- hosts: localhost", "  gather_facts: false", "  tasks:",
                 "    - name: cudnn", "      %s:" % module]
        if state:
            lines.append("        state: %s" % state)
        lines += [
                 "        cuda_root: %s" % yaml_str(self.ws.tree),
                 "        binary: %s" % yaml_str(os.path.abspath(BIN))]
        for k, v in task_args.items():
            lines.append("        %s: %s" % (k, json.dumps(v)))
        lines += ["      register: r", "      ignore_errors: true",
                  "    - name: result",
                  "      ansible.builtin.copy:",
                  "        content: \"{{ r | to_json }}\"",
                  "        dest: %s" % yaml_str(out),
                  "      check_mode: false",
                  "      diff: false"]
        pb = os.path.join(self.dir, "play.yml")
        with open(pb, "w") as f:
            f.write("\n".join(lines) + "\n")
        env = dict(os.environ)
        env.update({"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
                    "ANSIBLE_COLLECTIONS_PATHS": COLLECTIONS,
                    "ANSIBLE_LOCAL_TEMP": os.path.join(self.home, "tmp"),
                    "ANSIBLE_REMOTE_TEMP": os.path.join(self.home, "rtmp"),
                    "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
                    "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
                    "HOME": self.home})
        p = subprocess.run(["ansible-playbook", "-i", "localhost,", "-c",
                            "local", pb] + list(flags),
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=env, timeout=300)
        if not os.path.exists(out):
            self.fail("ansible-playbook rc %d:\n%s\n%s" % (
                p.returncode, p.stdout.decode("utf-8", "replace"),
                p.stderr.decode("utf-8", "replace")))
        with open(out) as f:
            return p.returncode, json.load(f)

    def run_playbook(self, text, *flags):
        pb = os.path.join(self.dir, "role.yml")
        with open(pb, "w") as f:
            f.write(text)
        env = dict(os.environ)
        env.update({"ANSIBLE_COLLECTIONS_PATH": COLLECTIONS,
                    "ANSIBLE_COLLECTIONS_PATHS": COLLECTIONS,
                    "ANSIBLE_LOCAL_TEMP": os.path.join(self.home, "tmp"),
                    "ANSIBLE_REMOTE_TEMP": os.path.join(self.home, "rtmp"),
                    "ANSIBLE_NOCOLOR": "1", "ANSIBLE_RETRY_FILES_ENABLED": "0",
                    "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
                    "HOME": self.home})
        return subprocess.run(["ansible-playbook", "-i", "localhost,", "-c",
                               "local", pb] + list(flags),
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              env=env, timeout=300)

    def test_role_cudnn_agent_from_a_bundle_mirror(self):
        """The role on an agent: the bundle's pinned manifest, the mirror
        (a folder), install, verify, the environment file."""
        out = os.path.join(self.dir, "bundle")
        cddtest.run(["bundle", "--manifest", FIX.linux.manifest_path, "-o",
                     out, "--archive", FIX.linux.path, "--cache-dir",
                     os.path.join(self.dir, "c1")], expect=0)
        name = os.path.splitext(os.path.basename(
            FIX.linux.manifest_path))[0]
        envfile = os.path.join(self.dir, "profile.d", "cudnn-deploy.sh")
        os.makedirs(os.path.dirname(envfile))
        v = {"cudnn_agent_cuda_root": self.ws.tree,
             "cudnn_agent_manifest_src": os.path.join(
                 out, "cudnn-deploy/manifests", name + ".json"),
             "cudnn_agent_manifest_dir": os.path.join(self.dir, "etc"),
             "cudnn_agent_mirror": "file://" + out + "/",
             "cudnn_agent_cache_dir": os.path.join(self.dir, "c2"),
             "cudnn_agent_binary": os.path.abspath(BIN),
             "cudnn_agent_verify_level": "files",
             "cudnn_agent_env_file": envfile}
        text = ("- hosts: localhost\n  gather_facts: false\n  vars:\n" +
                "".join("    %s: %s\n" % (k, json.dumps(x))
                        for k, x in v.items()) +
                "  roles:\n    - cudnn_deploy.fleet.cudnn_agent\n")
        before = self.ws.snap()
        p = self.run_playbook(text, "--check")
        self.assertEqual(p.returncode, 0, p.stdout.decode())
        self.assertEqual(self.ws.snap(), before)
        p = self.run_playbook(text)
        log = p.stdout.decode()
        self.assertEqual(p.returncode, 0, log)
        self.assertTrue(os.path.isfile(os.path.join(self.ws.tree,
                                                    "include/cudnn.h")), log)
        with open(envfile) as f:
            self.assertIn("export LD_LIBRARY_PATH=", f.read())
        p = self.run_playbook(text)
        self.assertEqual(p.returncode, 0, p.stdout.decode())
        self.assertRegex(p.stdout.decode(), r"changed=0\b")

    def args(self, fx=FIX.linux, archive=None):
        return {"manifest": fx.manifest_path,
                "archive": archive or fx.path, "verify": False}

    def test_check_mode_reports_a_change_and_changes_nothing(self):
        before = self.ws.snap()
        rc, res = self.play(self.args(), "--check", "--diff")
        self.assertEqual(rc, 0, res)
        self.assertTrue(res["changed"], res)
        self.assertIn("--dry-run", res["cmd"])
        self.assertIn("new", res["diff"]["prepared"])
        self.assertIn("include/cudnn.h", res["diff"]["prepared"])
        self.assertEqual(self.ws.snap(), before)

    def test_present_then_unchanged_then_absent_restores(self):
        before = self.ws.snap()
        rc, res = self.play(self.args())
        self.assertEqual(rc, 0, res)
        self.assertTrue(res["changed"])
        self.assertEqual(res["rc"], 0)
        self.assertTrue(res["report"]["ok"])
        self.assertTrue(os.path.isfile(os.path.join(self.ws.tree,
                                                    "include/cudnn.h")))
        rc, res = self.play(self.args())
        self.assertEqual(rc, 0, res)
        self.assertFalse(res["changed"], res)
        self.assertEqual(res["msg"], "already installed")
        # verified never changes anything.
        rc, res = self.play({"extra_args": ["--level", "files"]},
                            state="verified")
        self.assertEqual(rc, 0, res)
        self.assertFalse(res["changed"])
        # absent, first in check mode (nothing happens), then for real.
        installed = self.ws.snap()
        rc, res = self.play({}, "--check", state="absent")
        self.assertEqual(rc, 0, res)
        self.assertTrue(res["changed"])
        self.assertEqual(self.ws.snap(), installed)
        rc, res = self.play({}, state="absent")
        self.assertEqual(rc, 0, res)
        self.assertTrue(res["changed"])
        self.assertEqual(cddtest.without_state(self.ws.snap()),
                         cddtest.without_state(before))
        rc, res = self.play({}, state="absent")
        self.assertEqual(rc, 0, res)
        self.assertFalse(res["changed"])

    def test_tampered_archive_fails_with_the_tools_message(self):
        bad = os.path.join(self.dir, FIX.linux.filename)
        with open(FIX.linux.path, "rb") as f:
            data = f.read()
        cddtest.write_bytes(bad, cddtest.flip_byte(data, len(data) // 2))
        before = self.ws.snap()
        rc, res = self.play(self.args(archive=bad))
        self.assertTrue(res.get("failed"), res)
        self.assertEqual(res["rc"], 3)
        self.assertEqual(res["msg"], res["report"]["error"]["message"])
        self.assertIn("does not match", res["msg"])
        self.assertEqual(self.ws.snap(), before)

    def facts(self, *flags, **args):
        rc, res = self.play(dict(args), *flags, state=None,
                            module="cudnn_deploy.fleet.cudnn_facts")
        self.assertEqual(rc, 0, res)
        self.assertFalse(res["changed"], res)
        return res["ansible_facts"]["cudnn"]

    def test_facts_before_and_after_a_runtime_install(self):
        f = self.facts()
        self.assertFalse(f["installed"], f)
        self.assertIsNone(f["verify"])
        a = dict(self.args(), profile="runtime")
        rc, res = self.play(a)
        self.assertEqual(rc, 0, res)
        self.assertIn("--profile", res["cmd"])
        f = self.facts("--check", manifest=FIX.linux.manifest_path)
        self.assertTrue(f["installed"], f)
        self.assertEqual(f["version"], FIX.linux.version)
        self.assertEqual(f["profile"], "runtime")
        self.assertGreater(f["omitted"], 0)
        self.assertEqual(f["cuda_major"], 11)
        self.assertEqual(f["cuda_version"], "11.6.2")
        self.assertTrue(f["files_ok"])
        self.assertTrue(f["verify"]["ok"], f["verify"])
        self.assertEqual(f["verify"]["level"], "files")
        self.assertIsNone(f["verify"]["gpu_fit"])   # level files: no GPU
        # A library changed by hand: files_ok false, verify fails, facts
        # still come back (the module reports, it does not judge).
        lib = os.path.join(self.ws.tree, "lib64", "libcudnn.so.8.5.0")
        with open(lib, "ab") as fh:
            fh.write(b"x")
        f = self.facts(manifest=FIX.linux.manifest_path)
        self.assertFalse(f["files_ok"])
        self.assertFalse(f["verify"]["ok"])
        self.assertTrue(any("libcudnn.so.8.5.0" in x
                            for x in f["verify"]["failed"]), f["verify"])

    def test_diff_shows_the_files_before_and_after(self):
        self.play(self.args())
        rc, res = self.play(dict(self.args(), profile="runtime"), "--check",
                            "--diff")
        self.assertEqual(rc, 0, res)
        self.assertTrue(res["changed"])
        d = res["diff"]
        self.assertIn("include/cudnn.h", d["before"])
        self.assertNotIn("include/cudnn.h", d["after"])
        self.assertIn("lib64/libcudnn.so.8.5.0", d["after"])
        self.assertIn("remove    include/cudnn.h", d["prepared"])

    def test_check_mode_without_archive_downloads_nothing(self):
        """check mode plans the download (the tool's dry run names it) and
        leaves the cache folder empty."""
        cache = os.path.join(self.dir, "cache")
        os.makedirs(cache)
        url = "http://127.0.0.1:9/" + FIX.linux.filename
        probe = cddtest.run(["--json", "install", "--cuda-root", self.ws.tree,
                             "--manifest", FIX.linux.manifest_path, "--url",
                             url, "--cache-dir", cache, "--dry-run",
                             "--no-verify"])
        doc = json.loads(probe.out)
        shutil.rmtree(cache)
        os.makedirs(cache)
        if "download" not in doc:
            self.skipTest("this cudnn-deploy's install --dry-run still "
                          "downloads (issue 18's obtain work names the "
                          "download instead)")
        rc, res = self.play({"manifest": FIX.linux.manifest_path,
                             "url": [url], "cache_dir": cache,
                             "verify": False}, "--check", "--diff")
        self.assertEqual(rc, 0, res)
        self.assertTrue(res["changed"], res)
        self.assertEqual(os.listdir(cache), [])
        self.assertIn("download  " + url, res["diff"]["prepared"])

    def test_playbooks_and_role_pass_syntax_check(self):
        root = os.path.join(COLLECTIONS, "ansible_collections",
                            "cudnn_deploy", "fleet", "playbooks")
        for name in sorted(os.listdir(root)):
            if not name.endswith(".yml"):
                continue
            with self.subTest(playbook=name):
                with open(os.path.join(root, name)) as f:
                    text = f.read()
                p = self.run_playbook(text, "--syntax-check")
                self.assertEqual(p.returncode, 0, p.stdout.decode())


if __name__ == "__main__":
    cddtest.main()
