"""Packages (docs/fleet.md, Packages): CPack builds the .deb and the .tar.gz
of the build under test; the .deb is unpacked into a scratch root with
`dpkg -x` (no root, nothing installed on the host) and the tool runs a demo
install, verify and uninstall from there, with the shipped manifests, the man
page, the completions and the Ansible collection where Debian expects them.
Skips (saying why) where no CPack configuration is beside CDD_BIN (the
Windows suite) or dpkg-deb is missing."""

import glob
import os
import shutil
import subprocess
import sys
import tarfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import BIN, FIX, CddTestCase, plan_of  # noqa: E402

BUILD = os.path.dirname(os.path.abspath(BIN)) if BIN else None
CPACK_CONFIG = os.path.join(BUILD, "CPackConfig.cmake") if BUILD else None


def problem():
    if os.environ.get("CDD_WINDOWS"):
        return "the Windows package is scripts/windows.sh's zip"
    if not CPACK_CONFIG or not os.path.isfile(CPACK_CONFIG):
        return "no CPackConfig.cmake beside CDD_BIN"
    for tool in ("cpack", "dpkg-deb"):
        if not shutil.which(tool):
            return "%s is not installed" % tool
    return None


class Packages(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(Packages, cls).setUpClass()
        why = problem()
        if why:
            raise unittest.SkipTest(why)
        cls.out = os.path.join(cddtest.WORK_ROOT, "cpack")
        shutil.rmtree(cls.out, ignore_errors=True)
        os.makedirs(cls.out)
        p = subprocess.run(["cpack", "-G", "DEB;TGZ", "--config",
                            CPACK_CONFIG, "-B", cls.out],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           cwd=BUILD, timeout=600)
        if p.returncode != 0:
            raise AssertionError("cpack failed:\n" +
                                 p.stdout.decode(errors="replace"))
        debs = glob.glob(os.path.join(cls.out, "*.deb"))
        tgzs = glob.glob(os.path.join(cls.out, "*.tar.gz"))
        if len(debs) != 1 or len(tgzs) != 1:
            raise AssertionError("cpack made %r" % os.listdir(cls.out))
        cls.deb, cls.tgz = debs[0], tgzs[0]
        cls.root = os.path.join(cls.out, "root")
        subprocess.run(["dpkg-deb", "-x", cls.deb, cls.root], check=True)

    def field(self, name):
        return subprocess.run(["dpkg-deb", "-f", self.deb, name],
                              stdout=subprocess.PIPE, check=True
                              ).stdout.decode().strip()

    def test_deb_metadata(self):
        self.assertEqual(self.field("Package"), "cudnn-deploy")
        deps = self.field("Depends")
        for lib in ("libarchive", "libcurl"):
            self.assertIn(lib, deps)

    def test_files_in_their_usual_places(self):
        usr = os.path.join(self.root, "usr")
        for rel in ("bin/cudnn-deploy",
                    "share/man/man1/cudnn-deploy.1",
                    "share/bash-completion/completions/cudnn-deploy",
                    "share/cudnn-deploy/completions/cudnn-deploy.ps1",
                    "share/cudnn-deploy/manifests/"
                    "cudnn-8.5.0.96-cuda11-linux-x86_64.json",
                    "share/doc/cudnn-deploy/README.md",
                    # the man page's SEE ALSO points here
                    "share/doc/cudnn-deploy/docs/troubleshooting.md",
                    "share/doc/cudnn-deploy/docs/windows.md",
                    "share/cudnn-deploy/ansible/ansible_collections/"
                    "cudnn_deploy/fleet/plugins/modules/cudnn.py"):
            self.assertTrue(os.path.isfile(os.path.join(usr, rel)), rel)
        self.assertTrue(os.access(os.path.join(usr, "bin/cudnn-deploy"),
                                  os.X_OK))
        with tarfile.open(self.tgz) as t:
            names = t.getnames()
        self.assertTrue(any(n.endswith("/bin/cudnn-deploy") for n in names))
        self.assertTrue(any(n.endswith("/man1/cudnn-deploy.1")
                            for n in names))

    def test_demo_install_from_the_unpacked_package(self):
        tool = os.path.join(self.root, "usr", "bin", "cudnn-deploy")
        ws = self.workspace()
        before = ws.snap()

        def run(*args, expect=0):
            p = subprocess.run([tool, "--json"] + list(args),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=cddtest.clean_env(None), timeout=120)
            self.assertEqual(p.returncode, expect, p.stderr.decode())
            return cddtest.parse_one_object(p.stdout.decode())

        v = subprocess.run([tool, "--version"], stdout=subprocess.PIPE,
                           check=True).stdout.decode()
        self.assertTrue(v.startswith("cudnn-deploy "), v)
        doc = run("install", *ws.target_args, "--manifest",
                  FIX.linux.manifest_path, "--archive", FIX.linux.path,
                  "--no-verify")
        self.assertTrue(doc["changed"])
        self.assertEqual(set(plan_of(doc).values()), {"new"})
        run("verify", *ws.target_args, "--level", "files")
        run("uninstall", *ws.target_args)
        self.assertEqual(cddtest.without_state(ws.snap()),
                         cddtest.without_state(before))


if __name__ == "__main__":
    cddtest.main()
