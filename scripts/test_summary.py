#!/usr/bin/env python3
"""make test's closing line: the ctest entries of each suite that ran in this
run, from ctest's JUnit files (--output-junit), e.g.
    linux: 98 passed, 4 skipped; windows (wine): 45 passed
Skipped entries (exit 77: every test in them skipped) count as skipped, never
as passed; a suite whose file is missing or older than --since did not run.

usage: test_summary.py [--since EPOCH] LABEL=FILE..."""
import os
import sys
import xml.etree.ElementTree as ET


def counts(path):
    """(passed, skipped, failed) ctest entries of one JUnit file."""
    passed = skipped = failed = 0
    for case in ET.parse(path).getroot().iter("testcase"):
        status = case.get("status")
        if case.find("skipped") is not None or status == "notrun":
            skipped += 1
        elif status == "run" and case.find("failure") is None:
            passed += 1
        else:
            failed += 1
    return passed, skipped, failed


def describe(label, path, since):
    try:
        if since is not None and os.path.getmtime(path) < since:
            return "%s: not run" % label
        p, s, f = counts(path)
    except (OSError, ET.ParseError):
        return "%s: not run" % label
    parts = ["%d passed" % p]
    if s:
        parts.append("%d skipped" % s)
    if f:
        parts.append("%d FAILED" % f)
    return "%s: %s" % (label, ", ".join(parts))


def main(argv):
    since = None
    if len(argv) >= 2 and argv[0] == "--since":
        since = float(argv[1])
        argv = argv[2:]
    if not argv or any("=" not in a for a in argv):
        sys.stderr.write(__doc__)
        return 2
    print("; ".join(describe(*a.split("=", 1), since=since) for a in argv))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
