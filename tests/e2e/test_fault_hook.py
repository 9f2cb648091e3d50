"""The fault-injection hook exists only in test builds.

CUDNN_DEPLOY_TEST_FAULT=fail:N / kill:N is compiled in only with
-DCDD_FAULT_INJECTION=ON (the test suite's builds). A build without it
neither holds the variable's name nor obeys it: the same install that the
variable fails in a test build succeeds there. CMake says which build this
is (CDD_FAULT_BUILD=ON/OFF); `make test` also names the release binary
(CDD_RELEASE_BIN), checked the same way."""

import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
from cddtest import FIX, CddTestCase, install_args  # noqa: E402

VAR = cddtest.FAULT_VAR


class FaultHook(CddTestCase):

    def install_with(self, binary, name, spec):
        """Install the mini fixture with the variable set; (rc, tree)."""
        ws = self.workspace(name)
        env = cddtest.clean_env({VAR: spec})
        p = subprocess.run([binary] + install_args(ws, FIX.linux_mini),
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env=env, timeout=120)
        return p.returncode, p.stderr.decode("utf-8", "replace"), ws

    def assertIgnores(self, binary, tag):
        self.assertFalse(cddtest.has_fault_hook(binary),
                         "%s holds %s: the hook is compiled in" % (binary, VAR))
        for spec in ("fail:1", "kill:1", "fail:3"):
            rc, err, ws = self.install_with(binary, "%s-%s" % (tag, spec[:4]), spec)
            self.assertEqual(rc, 0, "%s=%s changed what %s did:\n%s"
                             % (VAR, spec, binary, err))
            self.assertTrue(os.path.isfile(ws.path(cddtest.RECEIPT)))

    def test_this_build(self):
        build = os.environ.get("CDD_FAULT_BUILD")
        if build is None:
            self.skipTest("CDD_FAULT_BUILD is not set (ctest sets it)")
        if build == "OFF":
            self.assertIgnores(cddtest.BIN, "off")
            return
        self.assertEqual(build, "ON")
        self.assertTrue(cddtest.has_fault_hook(),
                        "a test build without the hook's variable name")
        rc, err, ws = self.install_with(cddtest.BIN, "on", "fail:1")
        self.assertEqual(rc, cddtest.EXIT_ENV, err)
        self.assertIn("injected fault", err)
        self.assertFalse(os.path.exists(ws.path(cddtest.RECEIPT)))

    def test_release_binary(self):
        release = os.environ.get("CDD_RELEASE_BIN")
        if not release:
            self.skipTest("CDD_RELEASE_BIN is not set (make test sets it)")
        self.assertTrue(os.path.isfile(release), release)
        self.assertIgnores(release, "release")


if __name__ == "__main__":
    cddtest.main()
