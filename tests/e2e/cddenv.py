"""Where the end-to-end tests run: the binary under test, the scratch folders.

    CDD_BIN            path of the built cudnn-deploy (tests skip when unset)
    CDD_TEST_TMP       scratch folder (default: $TMPDIR/cdd-e2e)
    CDD_TEST_GROUP     set by ctest when it runs one class or case group of a
                       script (tests/CMakeLists.txt): that run gets its own
                       folder, since ctest runs the groups of one script in
                       parallel
    CDD_TEST_FAST_TMP  RAM folder for the crash loops (empty: none)
    CDD_TEST_PYLIB     a folder of Python packages the tests import (the
                       device campaign's jsonschema); not PYTHONPATH, which
                       the tool reads too (doctor scans it for wheels)

Importing this module from a test script empties the script's (or group's)
folder: every run starts clean.
"""

import os
import re
import shutil
import sys
import tempfile

# Modes the tool creates (0644 / 0755) are asserted exactly; a restrictive
# umask in the caller's shell must not turn them into something else.
os.umask(0o022)

if os.environ.get("CDD_TEST_PYLIB"):
    sys.path.insert(0, os.environ["CDD_TEST_PYLIB"])

BIN = os.environ.get("CDD_BIN") or None
TMP_ROOT = os.path.abspath(os.environ.get("CDD_TEST_TMP")
                           or os.path.join(tempfile.gettempdir(), "cdd-e2e"))


def _script_name():
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None) or "interactive"
    return os.path.splitext(os.path.basename(f))[0]


def _group():
    """The ctest group this run is (CDD_TEST_GROUP), or ""."""
    group = os.environ.get("CDD_TEST_GROUP") or ""
    if group and not re.match(r"^[A-Za-z0-9_.]+$", group):
        raise ValueError("CDD_TEST_GROUP=%r: letters, digits, '_' and '.' only"
                         % group)
    return group


# The ctest entry this run is (one class, or part of one), or "".
GROUP = _group()

# One folder per test script, or per group of it (ctest runs them in
# parallel): e2e-<script>[-<group>]. Inside, a test's folders are
# <Class>/<test>/..., or <test>/... in a group's folder, which names the
# class already: paths stay as long as before (Windows trees are near the
# 260-character limit in the deepest tests).
WORK_ROOT = os.path.join(TMP_ROOT, "e2e-" + _script_name()
                         + ("-" + GROUP if GROUP else ""))


def _fast_root():
    """A RAM-backed scratch folder for the crash loops, which run the binary
    hundreds of times on small trees: there every fsync costs nothing, and
    what they test (logic of journal and recovery) does not depend on the
    disk. CDD_TEST_FAST_TMP names one; else /dev/shm when it is a writable
    tmpfs with room; else None (use CDD_TEST_TMP)."""
    env = os.environ.get("CDD_TEST_FAST_TMP")
    if env is not None:
        return os.path.abspath(env) if env else None
    shm = "/dev/shm"
    try:
        st = os.statvfs(shm)
        if os.access(shm, os.W_OK) and st.f_bavail * st.f_frsize >= (256 << 20):
            return os.path.join(shm, "cdd-e2e-%d-%d" % (os.getuid(), os.getpid()))
    except (OSError, AttributeError):
        pass
    return None


FAST_ROOT = _fast_root()

if _script_name().startswith("test_"):
    # Start each run from a clean folder (its own: scripts and groups run in
    # parallel).
    shutil.rmtree(WORK_ROOT, ignore_errors=True)
