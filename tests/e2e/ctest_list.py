"""The ctest entries of the end-to-end scripts, for tests/CMakeLists.txt
(run at configure time, and again whenever a file here changes):

    python3 tests/e2e/ctest_list.py tests/e2e/test_install.py ...

prints one line per entry, "<script> <group> <test name>...": the group
names the entry (e2e.<script>.<group>), the test names are what the script
is run with (``python3 test_install.py -v FreshInstall``). A script gets
one entry per TestCase class it defines, unless it defines ctest_groups()
returning {group: ["Class.test_method", ...]} (test_hostile.py: one entry
per section of the case table): the classes named there are then split as
it says, and must be covered whole, each test once, each group within one
class. A script that cannot
be imported here gets one entry, "all", running all of it, and a warning
on stderr: ctest then shows the failure.
"""

import os
import re
import sys
import unittest

sys.dont_write_bytecode = True     # no __pycache__ in the source tree

NAME = re.compile(r"^[A-Za-z0-9_.]+$")


def _tests_by_class(module):
    """{class name: [test ids 'Class.method', ...]} of the TestCase classes
    module defines (imported classes are listed by their own module)."""
    by_class = {}
    pending = [unittest.defaultTestLoader.loadTestsFromModule(module)]
    while pending:
        suite = pending.pop()
        for t in suite:
            if isinstance(t, unittest.TestSuite):
                pending.append(t)
            elif type(t).__module__ == module.__name__:
                cls = type(t).__name__
                by_class.setdefault(cls, []).append(
                    "%s.%s" % (cls, t._testMethodName))
    return by_class


def entries(path):
    """[(group, [test names])] of one script; raises ValueError when its
    ctest_groups() does not cover its classes exactly."""
    stem = os.path.splitext(os.path.basename(path))[0]
    module = __import__(stem)
    by_class = _tests_by_class(module)
    out = []
    groups = module.ctest_groups() if hasattr(module, "ctest_groups") else {}
    claimed = {}
    for group, names in groups.items():
        if not NAME.match(group) or not names:
            raise ValueError("%s: bad group %r" % (stem, group))
        # One class per group: a test's folder in a group's WORK_ROOT is
        # named by the test alone (cddcase.py).
        if len(set(n.split(".")[0] for n in names)) != 1:
            raise ValueError("%s: group %s holds tests of several classes"
                             % (stem, group))
        for n in names:
            if n in claimed:
                raise ValueError("%s: %s is in groups %s and %s"
                                 % (stem, n, claimed[n], group))
            claimed[n] = group
        out.append((group, list(names)))
    split = set(n.split(".")[0] for n in claimed)
    for cls in sorted(by_class):
        if cls not in split:
            out.append((cls, [cls]))
            continue
        missing = sorted(set(by_class[cls]) - set(claimed))
        if missing:
            raise ValueError("%s: ctest_groups() leaves out %s"
                             % (stem, ", ".join(missing[:5])))
    unknown = sorted(n for n in claimed
                     if n not in by_class.get(n.split(".")[0], ()))
    if unknown:
        raise ValueError("%s: ctest_groups() names no such test: %s"
                         % (stem, ", ".join(unknown[:5])))
    return out


def main(paths):
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    for path in paths:
        stem = os.path.splitext(os.path.basename(path))[0]
        if os.path.dirname(os.path.abspath(path)) != here:
            raise SystemExit("ctest_list.py: %s is not in %s" % (path, here))
        try:
            found = entries(path)
        except Exception as e:   # noqa: BLE001 - any import error: run it whole
            sys.stderr.write("ctest_list.py: %s: %s: %s; one entry runs all of it\n"
                             % (path, type(e).__name__, e))
            found = [("all", [])]
        for group, names in found:
            print(" ".join([stem, group] + names))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
