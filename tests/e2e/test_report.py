"""The --json report's shape (docs/design.md, Checks and reports), for the
runs whose reports carry the most: verify (checks with fixes as data),
doctor (structured members), status (the verify record as a member) and
manifest show (the manifest as a member).

For each: stdout is one JSON object in cJSON's tab-indented layout with a
final newline; the envelope keys come first, in their order; no object
holds a key twice; every check is {name, status, detail[, fixes]} in that
order, every fix {[label,] where, command|unavailable, steps} and every
step one of the known forms; and the command's own top-level members are
exactly the ones listed here, so a member that disappears, appears or
moves fails (change the list, and docs/design.md, on purpose). The nested
members are the core's own documents: the record equals verified.json,
the manifest equals `manifest show` without --json.

    CDD_BIN=build/cudnn-deploy python3 tests/e2e/test_report.py -v
"""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402
import fakecudnn  # noqa: E402
from cddtest import (EXIT_OK, CddTestCase, make_cuda_tree, run,  # noqa: E402
                     run_json)

ENVELOPE = ["command", "ok", "changed", "exit_code", "target", "checks"]
NO_DRIVER = "/nonexistent-cdd-test/libcuda.so.1"

# The members after the envelope, in order, of each run below.
VERIFY_MEMBERS = ["profile", "level", "cudnn_version", "verify_recorded",
                  "shell"]
DOCTOR_MEMBERS = ["toolkits", "cudnn_copies", "driver"]
STATUS_MEMBERS = ["installed", "product", "version", "platform", "layout",
                  "cuda_major", "cuda_version", "installed_at", "transaction",
                  "archive", "archive_sha256", "archive_pinned", "profile",
                  "omitted", "verified", "files"]

STEP_FORMS = (("kind", "scope", "variable", "value"),
              ("kind", "scope", "variable", "value", "separator"),
              ("kind", "scope", "path", "text"),
              ("kind", "scope", "program", "args"))


def pairs_once(pairs):
    """object_pairs_hook: refuses an object that holds a key twice."""
    keys = [k for k, _ in pairs]
    dup = sorted(set(k for k in keys if keys.count(k) > 1))
    if dup:
        raise AssertionError("keys twice in one object: %r" % dup)
    return dict(pairs)


def key_order(text):
    """The top-level keys in the order the text has them."""
    order = []

    def hook(pairs):
        order[:] = [k for k, _ in pairs]
        return pairs_once(pairs)
    json.loads(text, object_pairs_hook=hook)
    return order


class ReportShape(CddTestCase):

    @classmethod
    def setUpClass(cls):
        super(ReportShape, cls).setUpClass()
        why = fakecudnn.problem()
        if why:
            raise unittest.SkipTest(why)

    def env(self, **kw):
        e = {"PATH": "/usr/bin:/bin", "LD_LIBRARY_PATH": None,
             "CUDA_HOME": None, "CUDNN_PATH": None, "CONDA_PREFIX": None,
             "VIRTUAL_ENV": None, "PYTHONPATH": None, "PYTHONUSERBASE": None,
             "HOME": self.scratch("home"), "SHELL": None,
             "CUDNN_DEPLOY_DRIVER_LIB": NO_DRIVER}
        e.update(kw)
        return e

    def installed_tree(self):
        tree = make_cuda_tree(os.path.join(self.scratch("ws"), "tree"),
                              version="11.6.2")
        run_json(fakecudnn.archive("ok").install_args(tree), env=self.env(),
                 expect=EXIT_OK)
        return tree

    def report(self, args, members, expect=None):
        """Runs --json args; asserts the layout, the envelope order, the
        members after it (exactly members), no key twice anywhere, and the
        shape of every check; returns the document."""
        r = run(["--json"] + list(args), env=self.env(), expect=expect)
        text = r.out
        self.assertTrue(text.startswith('{\n\t"command":\t"'), text[:80])
        self.assertTrue(text.endswith("\n}\n"), text[-80:])
        order = key_order(text)
        self.assertEqual(order, ENVELOPE + members, "top-level keys of %r"
                         % (args,))
        doc = json.loads(text, object_pairs_hook=pairs_once)
        self.assertEqual(cddtest.check_envelope(doc, r.rc), [])
        for c in doc["checks"]:
            keys = list(c)
            self.assertIn(keys, (["name", "status", "detail"],
                                 ["name", "status", "detail", "fixes"]), c)
            for f in c.get("fixes", []):
                fk = [k for k in f if k != "label"]
                self.assertIn(fk, (["where", "command", "steps"],
                                   ["where", "unavailable", "steps"]), f)
                if "label" in f:
                    self.assertEqual(list(f)[0], "label")
                self.assertTrue(f["steps"])
                for s in f["steps"]:
                    self.assertIn(tuple(s), STEP_FORMS, s)
        return doc

    def test_verify(self):
        tree = self.installed_tree()
        doc = self.report(["verify", "--cuda-root", tree], VERIFY_MEMBERS)
        self.assertEqual(doc["command"], "verify")
        self.assertEqual(doc["level"], "load")
        self.assertEqual(doc["cudnn_version"], 8500)
        # The search-path warning carries its fix as data and as a command.
        fixed = [c for c in doc["checks"] if c.get("fixes")]
        self.assertTrue(fixed, "a fake install outside the search path has "
                        "a fix")
        self.assertEqual(doc["shell"], "sh")
        # The same checks with --verbose: only the human text folds.
        again = self.report(["verify", "--cuda-root", tree, "--verbose"],
                            VERIFY_MEMBERS)
        self.assertEqual([(c["name"], c["status"]) for c in again["checks"]],
                         [(c["name"], c["status"]) for c in doc["checks"]])

    def test_doctor(self):
        doc = self.report(["doctor"], DOCTOR_MEMBERS)
        self.assertIsInstance(doc["toolkits"], list)
        self.assertIsInstance(doc["cudnn_copies"], list)
        self.assertIsInstance(doc["driver"], dict)
        tree = self.installed_tree()
        doc = self.report(["doctor", "--cuda-root", tree],
                          DOCTOR_MEMBERS + ["shell"])
        self.assertTrue(any(c.get("fixes") for c in doc["checks"]))

    def test_status_carries_the_record(self):
        tree = self.installed_tree()
        doc = self.report(["status", "--cuda-root", tree], STATUS_MEMBERS)
        with open(os.path.join(tree, ".cudnn-deploy", "verified.json")) as f:
            record = json.load(f)
        self.assertEqual(doc["verified"], record)
        self.assertIsInstance(doc["cuda_major"], int)
        self.assertEqual(doc["cuda_major"], 11)

    def test_manifest_show(self):
        name = "cudnn-8.5.0.96-cuda11-linux-x86_64"
        doc = self.report(["manifest", "show", name], ["manifest"])
        plain = run(["manifest", "show", name], env=self.env(), expect=EXIT_OK)
        self.assertEqual(doc["manifest"], json.loads(plain.out))

    def test_error_with_hint(self):
        """A failed command: the error object with its hint inside (the
        hint follows the error), still no key twice."""
        missing = os.path.join(self.scratch("none"), "cuda-11.6")
        r = run(["--json", "verify", "--cuda-root", missing], env=self.env())
        self.assertGreaterEqual(r.rc, 2)
        doc = json.loads(r.out, object_pairs_hook=pairs_once)
        self.assertEqual(cddtest.check_envelope(doc, r.rc), [])
        self.assertEqual(key_order(r.out)[:6], ENVELOPE)
        self.assertEqual(list(doc["error"]), ["code", "message", "hint"])
        self.assertEqual(doc["error"]["code"], "NOTFOUND")
        self.assertIn("--cuda-root", doc["error"]["hint"])


if __name__ == "__main__":
    unittest.main()
