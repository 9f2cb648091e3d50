"""One import for an end-to-end test script: the shared code, re-exported
from the modules that hold it, one concern each. Every test file does

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cddtest

and runs alone (``python3 tests/e2e/test_install.py -v``, or one class:
``... test_install.py -v Status``); cddenv.py lists the variables it reads.
Nothing binary is committed: archives, manifests and trees are generated
deterministically from seeds, so two runs produce the same bytes.

  cddenv.py       CDD_BIN, CDD_TEST_TMP, the scratch folders    BIN, WORK_ROOT
  cddrun.py       running the binary, the --json envelope      run(), run_json()
  synth.py        deterministic bytes, hashes                  synth_bytes()
  archives.py     archive members, tar/zip writers, corruption Entry, zip_bytes()
  layoutmodel.py  the tests' own model of the layout rules     role_of(), LAYOUTS
  fixtures.py     fake cuDNN archives and manifests, FIX       FIX.linux, Fixture
  trees.py        CUDA trees, prefixes, workspaces             make_cuda_tree()
  snapshots.py    snapshots, the state folder, leftovers       snapshot(), LockHolder
  cddcase.py      the base class, main() and its exit status   CddTestCase

The helper modules (hostile_cases.py, forge.py, ...) import from those
modules directly; test scripts use this one.
"""

from archives import (CHARDEV, DIR, FIFO, FILE, FIXED_MTIME,  # noqa: F401
                      HARDLINK, SYMLINK, ZIP_DATE, Entry, flip_byte, tar_bytes,
                      tar_xz_bytes, truncate, xz, zip_bad_crc, zip_bytes,
                      zip_corrupt_data, zip_cut_central_directory)
from cddcase import (EXIT_ALL_SKIPPED, CddTestCase, exit_status,  # noqa: F401
                     main)
from cddenv import BIN, FAST_ROOT, GROUP, TMP_ROOT, WORK_ROOT  # noqa: F401
from cddrun import (CHECK_STATUSES, DEFAULT_TIMEOUT, ERROR_CODES,  # noqa: F401
                    CommandTimeout,
                    EXIT_CHECK, EXIT_ENV, EXIT_OK, EXIT_REJECTED, EXIT_USAGE,
                    FAULT_VAR, JsonResult, Result, binary_problem,
                    check_envelope, clean_env, describe, has_fault_hook,
                    install_args, needs_fault_hook, parse_one_object,
                    plan_of, run, run_json, spawn)
from fixtures import (FIX, Fixture, Fixtures, linux_entries,  # noqa: F401
                      make_manifest, strip_top, verify_section,
                      windows_entries, write_bytes, write_json)
from layoutmodel import (CHECK_SYMBOLS, HEADERS, LAYOUTS, LINUX,  # noqa: F401
                         ROLES, SUBLIBS, WINDOWS, dest_of, role_of)
from snapshots import (BACKUP, IGNORE_LOCK, IGNORE_LOCK_LOG, LOCK, VERIFIED,  # noqa: F401,E501
                       LOG, MANIFEST_COPY, RECEIPT, STATE, STATE_ALLOWED,
                       LockHolder, backup_dirs, comparable_state,
                       diff_snapshots, leftovers, normalize, read_log,
                       read_receipt, receipt_files, snapshot, without_state)
from synth import (big_bytes, sha256_bytes, sha256_file,  # noqa: F401
                   synth_bytes, synth_size)
from trees import (SENTINEL_TEXT, Workspace, make_cuda_tree,  # noqa: F401
                   make_prefix, put_file)
