"""action.yml (docs/fleet.md, GitHub Actions) cannot run here: its YAML is
checked instead — a composite action whose run steps name a shell, whose
scripts exist, and which uses only inputs it declares. PyYAML when it is
installed, else a minimal reader of the few shapes the file uses."""

import os
import re
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cddtest  # noqa: E402

ROOT = os.path.normpath(os.path.join(os.path.dirname(
    os.path.abspath(__file__)), "..", ".."))
ACTION = os.path.join(ROOT, "action.yml")


def load(text):
    try:
        import yaml
    except ImportError:
        return None
    return yaml.safe_load(text)


class ActionYaml(cddtest.CddTestCase):
    needs_binary = False

    def setUp(self):
        with open(ACTION) as f:
            self.text = f.read()

    def test_parses_as_a_composite_action(self):
        doc = load(self.text)
        if doc is None:
            # Minimal check: the top-level keys and the composite marker.
            for key in ("name:", "description:", "inputs:", "runs:"):
                self.assertRegex(self.text, r"(?m)^" + key)
            self.assertIn("using: composite", self.text)
            return
        self.assertEqual(doc["runs"]["using"], "composite")
        self.assertTrue(doc["name"] and doc["description"])
        for step in doc["runs"]["steps"]:
            self.assertTrue(("run" in step) != ("uses" in step), step)
            if "run" in step:
                self.assertIn(step.get("shell"), ("bash", "pwsh", "sh"), step)
        for name, spec in doc["inputs"].items():
            self.assertIn("description", spec, name)

    def test_uses_only_declared_inputs_and_existing_scripts(self):
        declared = set(re.findall(r"(?m)^  ([a-z][a-z0-9-]*):\s*$",
                                  self.text.split("\noutputs:")[0]))
        used = set(re.findall(r"\$\{\{\s*inputs\.([a-z0-9-]+)", self.text))
        self.assertTrue(used)
        self.assertEqual(used - declared, set())
        for script in re.findall(r'\$SRC/(scripts/[a-z-]+\.sh)', self.text):
            self.assertTrue(os.path.isfile(os.path.join(ROOT, script)),
                            script)


if __name__ == "__main__":
    cddtest.main()
