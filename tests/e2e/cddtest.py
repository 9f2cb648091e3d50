"""Shared code of the end-to-end tests: run the real binary, build fake cuDNN
archives and CUDA trees at test time, and compare trees byte for byte.

Python 3 standard library only. Every test file does

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import cddtest

and runs alone (``python3 tests/e2e/test_install.py -v``) with

    CDD_BIN       path of the built cudnn-deploy (tests skip when unset)
    CDD_TEST_TMP  scratch folder (default: $TMPDIR/cdd-e2e)

Nothing binary is committed: archives, manifests and trees are generated
deterministically from seeds, so two runs produce the same bytes.

Map of this file:
  1. running the binary            run(), run_json(), check_envelope(), install_args()
  2. deterministic bytes           synth_bytes(), big_bytes()
  3. archive entries and writers   Entry, tar_xz_bytes(), zip_bytes(), raw mutators
  4. fake cuDNN and manifests      linux_entries(), windows_entries(), make_manifest(),
                                   Fixture, FIX (the standard fixtures, built lazily)
  5. target trees                  make_cuda_tree(), make_prefix()
  6. snapshots and state           snapshot(), comparable_state(), diff_snapshots(),
                                   leftovers(), read_receipt(), LockHolder
  7. test base class               Workspace, CddTestCase
"""

import collections
import copy
import hashlib
import io
import json
import lzma
import os
import random
import shutil
import stat
import struct
import subprocess
import sys
import tarfile
import tempfile
import threading
import unittest
import warnings
import zipfile

# Modes the tool creates (0644 / 0755) are asserted exactly; a restrictive
# umask in the caller's shell must not turn them into something else.
os.umask(0o022)

BIN = os.environ.get("CDD_BIN") or None
TMP_ROOT = os.path.abspath(os.environ.get("CDD_TEST_TMP")
                           or os.path.join(tempfile.gettempdir(), "cdd-e2e"))


def _script_name():
    main = sys.modules.get("__main__")
    f = getattr(main, "__file__", None) or "interactive"
    return os.path.splitext(os.path.basename(f))[0]


# One folder per test script (ctest may run scripts in parallel).
WORK_ROOT = os.path.join(TMP_ROOT, "e2e-" + _script_name())


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
    # Start each script from a clean folder (its own: scripts run in parallel).
    shutil.rmtree(WORK_ROOT, ignore_errors=True)

STATE = ".cudnn-deploy"
LOCK = STATE + "/lock"
LOG = STATE + "/log.jsonl"
RECEIPT = STATE + "/receipt.json"
MANIFEST_COPY = STATE + "/manifest.json"
BACKUP = STATE + "/backup"
# Paths a snapshot may ignore: the lock file stays forever (and its content
# is the last holder's pid); the log grows by one line per change.
IGNORE_LOCK = (LOCK,)
IGNORE_LOCK_LOG = (LOCK, LOG)

EXIT_OK, EXIT_CHECK, EXIT_USAGE, EXIT_REJECTED, EXIT_ENV = 0, 1, 2, 3, 4

# ---------------------------------------------------------------------------
# 1. Running the binary
# ---------------------------------------------------------------------------

Result = collections.namedtuple("Result", "rc out err")
JsonResult = collections.namedtuple("JsonResult", "rc doc err out")

DEFAULT_TIMEOUT = 120


def binary_problem():
    """None when CDD_BIN names an executable, else why not."""
    if not BIN:
        return "CDD_BIN is not set (point it at the built cudnn-deploy)"
    if not (os.path.isfile(BIN) and os.access(BIN, os.X_OK)):
        return "CDD_BIN=%s is not an executable file" % BIN
    return None


FAULT_VAR = "CUDNN_DEPLOY_TEST_FAULT"


def has_fault_hook(path=None):
    """Was the binary built with -DCDD_FAULT_INJECTION=ON? Only such a build
    holds the variable's name (a release build neither reads it nor has the
    code). path: the executable (default CDD_EXE under Wine, else CDD_BIN)."""
    path = path or os.environ.get("CDD_EXE") or BIN
    try:
        with open(path, "rb") as f:
            return FAULT_VAR.encode() in f.read()
    except OSError:
        return False


# Tests that inject faults through the variable: skipped (and said so) on a
# build without the hook; the test suite's builds have it.
needs_fault_hook = unittest.skipUnless(
    has_fault_hook(), "needs a test build (-DCDD_FAULT_INJECTION=ON)")


def clean_env(extra=None):
    """The environment for the binary: ours, minus anything that would change
    what it does (fault injection, CUDA_PATH_*), plus extra (None removes)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CUDA_PATH") and k != "CUDNN_DEPLOY_TEST_FAULT"}
    env.setdefault("LC_ALL", "C.UTF-8")
    # Never touch the user's download cache.
    env["XDG_CACHE_HOME"] = os.path.join(TMP_ROOT, "xdg-cache")
    for k, v in (extra or {}).items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = v
    return env


def describe(cmd, rc, out, err):
    return ("\n$ %s\n-> exit %r\n--- stdout ---\n%s\n--- stderr ---\n%s"
            % (" ".join(str(c) for c in cmd), rc, out[-4000:], err[-4000:]))


def run(args, env=None, expect=None, timeout=DEFAULT_TIMEOUT, cwd=None):
    """Run cudnn-deploy with args; returns Result(rc, out, err) (also a
    3-tuple). expect: an exit code (or a tuple of them) to assert."""
    cmd = [BIN] + [str(a) for a in args]
    p = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, env=clean_env(env),
                       timeout=timeout, cwd=cwd)
    res = Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                 p.stderr.decode("utf-8", "replace"))
    if expect is not None:
        ok = res.rc in expect if isinstance(expect, tuple) else res.rc == expect
        if not ok:
            raise AssertionError("expected exit %r" % (expect,)
                                 + describe(cmd, res.rc, res.out, res.err))
    return res


CHECK_STATUSES = ("pass", "warn", "fail", "skip")
ERROR_CODES = ("USAGE", "NOTSUP", "MANIFEST", "ARCHIVE", "CORRUPT", "UNSAFE",
               "CHECKSUM", "UNPINNED", "VERSION", "TARGET", "STATE",
               "MODIFIED", "CHECK", "NOTFOUND", "IO", "PERM", "NOSPC", "BUSY",
               "LOCKED", "NETWORK", "INTERRUPTED", "FAULT", "NOMEM")


def parse_one_object(text):
    """stdout of --json must be exactly one JSON object (whitespace around
    it allowed, nothing else)."""
    try:
        doc = json.loads(text)
    except ValueError as e:
        raise AssertionError("stdout is not exactly one JSON document (%s):\n%s"
                             % (e, text[:2000]))
    if not isinstance(doc, dict):
        raise AssertionError("stdout JSON is not an object: %r" % (doc,))
    return doc


def check_envelope(doc, rc):
    """The keys every --json answer has (docs/design.md, Report). Returns a list of
    problems (empty when fine)."""
    bad = []
    for key in ("command", "ok", "changed", "exit_code", "target", "checks"):
        if key not in doc:
            bad.append("missing key %r" % key)
    if bad:
        return bad
    if not isinstance(doc["command"], str) or not doc["command"]:
        bad.append("command is not a non-empty string")
    if not isinstance(doc["ok"], bool) or doc["ok"] != (rc == 0):
        bad.append("ok=%r but exit code %d" % (doc["ok"], rc))
    if not isinstance(doc["changed"], bool):
        bad.append("changed is not a bool")
    if doc["exit_code"] != rc or isinstance(doc["exit_code"], bool):
        bad.append("exit_code=%r but the process exited %d"
                   % (doc["exit_code"], rc))
    if doc["target"] is not None and not isinstance(doc["target"], str):
        bad.append("target is neither a string nor null")
    if not isinstance(doc["checks"], list):
        bad.append("checks is not a list")
    else:
        for i, c in enumerate(doc["checks"]):
            if not isinstance(c, dict) or set(("name", "status", "detail")) - set(c):
                bad.append("checks[%d] lacks name/status/detail" % i)
            elif c["status"] not in CHECK_STATUSES:
                bad.append("checks[%d].status=%r" % (i, c["status"]))
    err = doc.get("error")
    if rc >= 2 and err is None:
        bad.append("exit %d without an error object" % rc)
    if err is not None:
        if not isinstance(err, dict) or not isinstance(err.get("code"), str) \
                or not isinstance(err.get("message"), str):
            bad.append("error must be {code: str, message: str}: %r" % (err,))
        elif err["code"] not in ERROR_CODES:
            bad.append("unknown error code %r" % err["code"])
        elif not err["message"].strip():
            bad.append("empty error message")
    return bad


def run_json(args, env=None, expect=None, timeout=DEFAULT_TIMEOUT):
    """Run with --json first; asserts stdout is exactly one object with the
    envelope keys; returns JsonResult(rc, doc, err, out)."""
    args = ["--json"] + list(args)
    res = run(args, env=env, expect=expect, timeout=timeout)
    cmd = [BIN] + args
    try:
        doc = parse_one_object(res.out)
    except AssertionError as e:
        raise AssertionError(str(e) + describe(cmd, res.rc, res.out, res.err))
    bad = check_envelope(doc, res.rc)
    if bad:
        raise AssertionError("bad --json answer: " + "; ".join(bad)
                             + describe(cmd, res.rc, res.out, res.err))
    return JsonResult(res.rc, doc, res.err, res.out)


def spawn(args, env=None):
    """Start cudnn-deploy without waiting (kill tests). Own process group so a
    signal reaches only it."""
    return subprocess.Popen([BIN] + [str(a) for a in args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=clean_env(env),
                            start_new_session=True)


def install_args(target, fixture=None, manifest=None, archive=None, *extra):
    """install argv. target: argv list (['--cuda-root', DIR]) or a Workspace.
    --no-verify: the fake libraries are not loadable; verification of real
    ones is the verify issue's business."""
    if isinstance(target, Workspace):
        target = target.target_args
    return (["install"] + list(target)
            + ["--manifest", manifest or fixture.manifest_path,
               "--archive", archive or fixture.path, "--no-verify"]
            + [str(e) for e in extra])


# ---------------------------------------------------------------------------
# 2. Deterministic bytes
# ---------------------------------------------------------------------------

def _seed_int(seed):
    return int.from_bytes(hashlib.sha256(seed.encode()).digest()[:8], "big")


def synth_bytes(seed, n):
    """n pseudo-random bytes, the same for the same seed on every run."""
    r = random.Random(_seed_int(seed))
    if n <= 0:
        return b""
    if hasattr(r, "randbytes"):
        return r.randbytes(n)
    return r.getrandbits(8 * n).to_bytes(n, "little")


def synth_size(seed, lo, hi):
    return lo + _seed_int("size|" + seed) % (hi - lo + 1)


def big_bytes(seed, n, block=64 * 1024):
    """n bytes that are all different (each block carries its index) but
    compress well, so a large archive is quick to build and quick to read
    while the tool still writes, hashes and syncs every byte."""
    base = synth_bytes(seed, block)
    out = bytearray()
    i = 0
    while len(out) < n:
        out += struct.pack("<Q", i) + base[8:]
        i += 1
    return bytes(out[:n])


def sha256_bytes(b):
    return hashlib.sha256(b).hexdigest()


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# ---------------------------------------------------------------------------
# 3. Archive entries and writers
# ---------------------------------------------------------------------------

FILE, DIR, SYMLINK, HARDLINK, FIFO, CHARDEV = (
    "file", "dir", "symlink", "hardlink", "fifo", "chardev")
FIXED_MTIME = 1659312000          # 2022-08-01, when 8.5.0.96 came out
ZIP_DATE = (2022, 8, 1, 0, 0, 0)


class Entry(object):
    """One archive member: its raw name (with the top folder) and what it is.
    target: symlink/hardlink target."""
    __slots__ = ("name", "kind", "data", "target", "mode")

    def __init__(self, name, kind=FILE, data=b"", target=None, mode=None):
        self.name, self.kind, self.data, self.target = name, kind, data, target
        if mode is None:
            mode = {DIR: 0o755, SYMLINK: 0o777}.get(kind, 0o644)
        self.mode = mode

    def copy(self, **changes):
        e = Entry(self.name, self.kind, self.data, self.target, self.mode)
        for k, v in changes.items():
            setattr(e, k, v)
        return e

    def __repr__(self):
        extra = " -> %s" % self.target if self.target is not None else \
            " (%d bytes)" % len(self.data) if self.kind == FILE else ""
        return "<%s %r%s>" % (self.kind, self.name, extra)


def tar_bytes(entries):
    """An uncompressed GNU tar, as GNU tar writes it (long names through
    ././@LongLink). Names are written as given: nothing is normalised, so
    hostile names reach the tool intact."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.GNU_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tf:
        for e in entries:
            ti = tarfile.TarInfo(e.name)
            ti.mtime = FIXED_MTIME
            ti.uid = ti.gid = 1000
            ti.uname = ti.gname = "swqa"
            ti.mode = e.mode
            data = None
            if e.kind == FILE:
                ti.type, ti.size, data = tarfile.REGTYPE, len(e.data), io.BytesIO(e.data)
            elif e.kind == DIR:
                ti.type = tarfile.DIRTYPE
            elif e.kind == SYMLINK:
                ti.type, ti.linkname = tarfile.SYMTYPE, e.target
            elif e.kind == HARDLINK:
                ti.type, ti.linkname = tarfile.LNKTYPE, e.target
            elif e.kind == FIFO:
                ti.type = tarfile.FIFOTYPE
            elif e.kind == CHARDEV:
                ti.type, ti.devmajor, ti.devminor = tarfile.CHRTYPE, 1, 3
            else:
                raise ValueError(e.kind)
            tf.addfile(ti, data)
    return buf.getvalue()


def xz(raw, preset=1):
    return lzma.compress(raw, format=lzma.FORMAT_XZ, check=lzma.CHECK_CRC64,
                         preset=preset)


def tar_xz_bytes(entries, preset=1):
    return xz(tar_bytes(entries), preset)


def zip_bytes(entries):
    """A zip as NVIDIA's Windows archives are: deflated members, DOS
    attributes, directory entries. Symlinks and FIFOs (hostile cases only)
    use Unix attributes, as Info-ZIP writes them."""
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # duplicate names are on purpose
        with zipfile.ZipFile(buf, "w") as zf:
            for e in entries:
                zi = zipfile.ZipInfo(e.name, ZIP_DATE)
                zi.compress_type = zipfile.ZIP_DEFLATED
                if e.kind == FILE:
                    zi.create_system, zi.external_attr = 0, 0x20
                    zf.writestr(zi, e.data)
                elif e.kind == DIR:
                    if not zi.filename.endswith("/"):
                        zi.filename += "/"
                    zi.compress_type = zipfile.ZIP_STORED
                    zi.create_system, zi.external_attr = 0, 0x10
                    zf.writestr(zi, b"")
                elif e.kind == SYMLINK:
                    zi.compress_type = zipfile.ZIP_STORED
                    zi.create_system = 3
                    zi.external_attr = (stat.S_IFLNK | 0o777) << 16
                    zf.writestr(zi, e.target.encode("utf-8", "surrogateescape"))
                elif e.kind in (FIFO, CHARDEV):
                    zi.create_system = 3
                    ft = stat.S_IFIFO if e.kind == FIFO else stat.S_IFCHR
                    zi.external_attr = (ft | 0o644) << 16
                    zf.writestr(zi, b"")
                else:
                    raise ValueError("zip cannot hold a %s" % e.kind)
    return buf.getvalue()


# Raw mutations of archive bytes (corruption that no writer produces).

def truncate(data, fraction):
    return data[:int(len(data) * fraction)]


def flip_byte(data, offset):
    b = bytearray(data)
    b[offset] ^= 0x5A
    return bytes(b)


def _zip_member(data, name):
    """(local header offset, data offset, compressed size, central record
    offset) of a zip member."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        zi = zf.getinfo(name)
        start_dir = zf.start_dir
    lh = zi.header_offset
    nlen, xlen = struct.unpack("<HH", data[lh + 26:lh + 30])
    data_off = lh + 30 + nlen + xlen
    pos = start_dir
    enc = name.encode("utf-8")
    while data[pos:pos + 4] == b"PK\x01\x02":
        n, x, c = struct.unpack("<HHH", data[pos + 28:pos + 34])
        if data[pos + 46:pos + 46 + n] == enc:
            return lh, data_off, zi.compress_size, pos
        pos += 46 + n + x + c
    raise KeyError(name)


def zip_bad_crc(data, name):
    """Change the CRC-32 recorded for a member (local header and central
    directory alike), leaving its data intact: only a CRC check catches it."""
    lh, _, _, cd = _zip_member(data, name)
    b = bytearray(data)
    for off in (lh + 14, cd + 16):
        (crc,) = struct.unpack("<I", b[off:off + 4])
        b[off:off + 4] = struct.pack("<I", crc ^ 0xDEADBEEF)
    return bytes(b)


def zip_corrupt_data(data, name):
    """Flip a byte in the middle of a member's compressed data."""
    _, off, size, _ = _zip_member(data, name)
    return flip_byte(data, off + size // 2)


def zip_cut_central_directory(data):
    """Cut the zip in the middle of its central directory (the end record and
    most of the directory are gone; the local headers are all intact)."""
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        start_dir = zf.start_dir
    return data[:start_dir + (len(data) - start_dir) // 2]


# ---------------------------------------------------------------------------
# 4. Fake cuDNN archives and their manifests
# ---------------------------------------------------------------------------

LINUX = "linux-x86_64"
WINDOWS = "windows-x86_64"
SUBLIBS = ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer",
           "adv_train")
CHECK_SYMBOLS = {
    "ops_infer": "cudnnOpsInferVersionCheck",
    "ops_train": "cudnnOpsTrainVersionCheck",
    "cnn_infer": "cudnnCnnInferVersionCheck",
    "cnn_train": "cudnnCnnTrainVersionCheck",
    "adv_infer": "cudnnAdvInferVersionCheck",
    "adv_train": "cudnnAdvTrainVersionCheck",
}
HEADERS = (("cudnn.h",) + tuple("cudnn_%s.h" % s for s in SUBLIBS)
           + ("cudnn_backend.h", "cudnn_version.h"))
ROLES = ("runtime", "header", "import_lib", "static_lib", "license", "symlink")

# Where each role lands, per (target kind, platform): the layout contract.
LAYOUTS = {
    ("cuda", LINUX): {"runtime": "lib64", "symlink": "lib64",
                      "static_lib": "lib64", "header": "include",
                      "license": "share/doc/cudnn"},
    ("cuda", WINDOWS): {"runtime": "bin", "header": "include",
                        "import_lib": "lib/x64", "license": "doc/cudnn"},
    ("prefix", LINUX): {"runtime": "lib", "symlink": "lib",
                        "static_lib": "lib", "header": "include",
                        "license": "share/doc/cudnn"},
    ("prefix", WINDOWS): {"runtime": "Library/bin", "header": "Library/include",
                          "import_lib": "Library/lib",
                          "license": "Library/share/doc/cudnn"},
}


def role_of(platform, path, kind=FILE):
    """Role of an archive path (after the top folder), by the layout rules."""
    base = path.rsplit("/", 1)[-1]
    if path == "LICENSE":
        return "license"
    if path.startswith("include/") and base.endswith(".h"):
        return "header"
    if platform == LINUX and path.startswith("lib/"):
        if base.endswith(".a"):
            return "static_lib"
        if ".so" in base:
            return "symlink" if kind == SYMLINK else "runtime"
    if platform == WINDOWS:
        if path.startswith("bin/") and base.lower().endswith(".dll"):
            return "runtime"
        if path.startswith("lib/x64/") and base.lower().endswith(".lib"):
            return "import_lib"
    raise ValueError("no role for %s" % path)


def dest_of(target_kind, platform, path, role):
    return LAYOUTS[(target_kind, platform)][role] + "/" + path.rsplit("/", 1)[-1]


def _file_bytes(platform, version, rel, salt, big):
    """Synthetic content with the right magic for the kind of file."""
    seed = "%s|%s|%s|%s" % (platform, version, rel, salt)
    base = rel.rsplit("/", 1)[-1]
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    if base == "cudnn_version.h":
        return ("/* %s: synthetic cuDNN %s header written by the cudnn-deploy "
                "tests */\n#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n"
                "\n#define CUDNN_MAJOR %d\n#define CUDNN_MINOR %d\n"
                "#define CUDNN_PATCHLEVEL %d\n\n#define CUDNN_VERSION "
                "(CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + CUDNN_PATCHLEVEL)\n"
                "\n#endif /* CUDNN_VERSION_H */\n"
                % (base, version, major, minor, patch)).encode()
    # Binary payloads repeat a small random block (each copy numbered), so
    # they are all different yet compress fast: xz on random bytes is slow.
    block = (64 << 10) if big else 512
    if base.endswith(".h"):
        n = synth_size(seed, 1200, 5000)
        words = synth_bytes(seed, 64).hex()
        lines = ["/* %s: synthetic cuDNN %s header (tests) */" % (base, version)]
        i = 0
        while sum(len(l) + 1 for l in lines) < n:
            lines.append("#define CUDNN_SYNTHETIC_%s_%04d 0x%s" % (
                base.split(".")[0].upper(), i, words[(i * 7) % 96:(i * 7) % 96 + 32]))
            i += 1
        return ("\n".join(lines) + "\n").encode()
    if rel == "LICENSE":
        return ("Synthetic licence text for the cudnn-deploy tests, cuDNN %s.\n"
                % version).encode() * 20
    if base.endswith(".a") or base.endswith(".lib"):
        n = (512 << 10) if big and base.endswith(".a") else synth_size(seed, 1500, 6000)
        return b"!<arch>\n" + big_bytes(seed, n, block)
    if base.endswith(".dll"):
        n = (3 << 20) if big else synth_size(seed, 4000, 16000)
        return b"MZ\x90\x00" + big_bytes(seed, n, block)
    if ".so" in base:
        n = (3 << 20) if big else synth_size(seed, 4000, 16000)
        return b"\x7fELF\x02\x01\x01\x00" + big_bytes(seed, n, block)
    raise ValueError(rel)


def linux_entries(version="8.5.0.96", cuda_tag="11", sublibs=SUBLIBS,
                  headers=HEADERS, salt="", big=False):
    """(top folder, entries) of a Linux tarball laid out like NVIDIA's."""
    top = "cudnn-linux-x86_64-%s_cuda%s-archive" % (version, cuda_tag)
    so_ver = ".".join(version.split(".")[:3])
    so_major = version.split(".")[0]

    def f(rel, mode=0o644):
        return Entry(top + "/" + rel, FILE,
                     _file_bytes(LINUX, version, rel, salt, big), mode=mode)

    entries = [Entry(top + "/", DIR), f("LICENSE"), Entry(top + "/include/", DIR)]
    entries += [f("include/" + h) for h in sorted(headers)]
    entries.append(Entry(top + "/lib/", DIR))
    lib = []
    for name in ["libcudnn"] + ["libcudnn_" + s for s in sublibs]:
        real = "%s.so.%s" % (name, so_ver)
        lib.append(f("lib/" + real, 0o755))
        lib.append(Entry("%s/lib/%s.so.%s" % (top, name, so_major), SYMLINK,
                         target=real))
        lib.append(Entry("%s/lib/%s.so" % (top, name), SYMLINK,
                         target="%s.so.%s" % (name, so_major)))
    for s in sublibs:
        lib.append(f("lib/libcudnn_%s_static.a" % s))
    # Name order, as `tar --sort=name` gives: each .so link comes before the
    # file it points to, which the tool must accept.
    entries += sorted(lib, key=lambda e: e.name)
    return top, entries


def windows_entries(version="8.5.0.96", cuda_tag="11", sublibs=SUBLIBS,
                    headers=HEADERS, salt="", big=False):
    """(top folder, entries) of a Windows zip laid out like NVIDIA's."""
    top = "cudnn-windows-x86_64-%s_cuda%s-archive" % (version, cuda_tag)
    major = version.split(".")[0]

    def f(rel):
        return Entry(top + "/" + rel, FILE,
                     _file_bytes(WINDOWS, version, rel, salt, big))

    entries = [Entry(top + "/", DIR), Entry(top + "/bin/", DIR)]
    dlls = ["cudnn64_%s.dll" % major] + ["cudnn_%s64_%s.dll" % (s, major)
                                          for s in sublibs]
    entries += [f("bin/" + d) for d in dlls]
    entries.append(Entry(top + "/include/", DIR))
    entries += [f("include/" + h) for h in sorted(headers)]
    entries += [Entry(top + "/lib/", DIR), Entry(top + "/lib/x64/", DIR)]
    libs = ["cudnn.lib", "cudnn64_%s.lib" % major]
    for s in sublibs:
        libs += ["cudnn_%s.lib" % s, "cudnn_%s64_%s.lib" % (s, major)]
    entries += [f("lib/x64/" + n) for n in libs]
    entries.append(f("LICENSE"))
    return top, entries


def strip_top(name, top):
    return name[len(top) + 1:] if name.startswith(top + "/") else None


def verify_section(platform, version, sublibs):
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    if platform == LINUX:
        main = "lib/libcudnn.so.%d" % major
        sub = ["lib/libcudnn_%s.so.%d" % (s, major) for s in sublibs]
    else:
        main = "bin/cudnn64_%d.dll" % major
        sub = ["bin/cudnn_%s64_%d.dll" % (s, major) for s in sublibs]
    return {
        "version_number": major * 1000 + minor * 100 + patch,
        "library": main,
        "version_symbol": "cudnnGetVersion",
        "cudart_symbol": "cudnnGetCudartVersion",
        "mismatch_status": 14,
        "sublibraries": [{"library": l, "check_symbol": CHECK_SYMBOLS[s]}
                         for l, s in zip(sub, sublibs)],
    }


def make_manifest(platform, version, cuda_major, filename, top, entries,
                  archive_data=None, sublibs=SUBLIBS, files_exact=True):
    """The manifest of an archive, exact: every file and symlink with role,
    sha256 and size (symlinks: target), the archive's sha256 and size."""
    files = []
    for e in entries:
        rel = strip_top(e.name, top)
        if not rel or e.kind == DIR:
            continue
        if e.kind == SYMLINK:
            files.append({"path": rel, "role": "symlink", "target": e.target})
        else:
            files.append({"path": rel, "role": role_of(platform, rel),
                          "sha256": sha256_bytes(e.data), "size": len(e.data)})
    sub = "linux-x86_64" if platform == LINUX else "windows-x86_64"
    return {
        "schema_version": 1,
        "product": "cudnn",
        "version": version,
        "cuda_major": cuda_major,
        "platform": platform,
        "archive": {
            "filename": filename,
            "url": ["https://developer.download.nvidia.com/compute/cudnn/"
                    "redist/cudnn/%s/%s" % (sub, filename)],
            "sha256": sha256_bytes(archive_data) if archive_data is not None else None,
            "size": len(archive_data) if archive_data is not None else None,
            "strip_components": 1,
        },
        "files_exact": files_exact,
        "files": files,
        "verify": verify_section(platform, version, sublibs),
    }


def write_json(path, doc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")
    return path


def write_bytes(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".part"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    return path


class Fixture(object):
    """A generated archive and its exact manifest, on disk.

    path, manifest_path   files
    sha256, size          of the archive
    entries, top          what went into it
    files                 {archive path after the top folder: Entry}
    manifest              the manifest as a dict (a deep copy is written)
    """

    def __init__(self, folder, platform, version, cuda_major, top, entries,
                 sublibs=SUBLIBS, preset=1):
        self.folder, self.platform, self.version = folder, platform, version
        self.cuda_major, self.top, self.entries = cuda_major, top, entries
        self.sublibs = sublibs
        ext = ".tar.xz" if platform == LINUX else ".zip"
        self.filename = top + ext
        data = (tar_xz_bytes(entries, preset) if platform == LINUX
                else zip_bytes(entries))
        self.path = write_bytes(os.path.join(folder, self.filename), data)
        self.sha256, self.size = sha256_bytes(data), len(data)
        self.files = collections.OrderedDict()
        for e in entries:
            rel = strip_top(e.name, top)
            if rel and e.kind != DIR:
                self.files[rel] = e
        self.manifest = make_manifest(platform, version, cuda_major,
                                      self.filename, top, entries, data,
                                      sublibs)
        self.manifest_path = write_json(os.path.join(folder, "manifest.json"),
                                        self.manifest)

    def manifest_variant(self, path, edit=None, **archive_changes):
        """Write a changed copy of the manifest. edit(doc) may mutate the
        copy; archive_changes update its "archive" object."""
        doc = copy.deepcopy(self.manifest)
        doc["archive"].update(archive_changes)
        if edit:
            edit(doc)
        return write_json(path, doc)

    def role(self, rel):
        e = self.files[rel]
        return role_of(self.platform, rel, e.kind)

    def dest(self, rel, target_kind="cuda"):
        return dest_of(target_kind, self.platform, rel, self.role(rel))

    def expected(self, target_kind="cuda"):
        """{dest path: snapshot value} that an install must produce."""
        out = {}
        for rel, e in self.files.items():
            d = self.dest(rel, target_kind)
            if e.kind == SYMLINK:
                out[d] = ("link", e.target, None)
            else:
                mode = 0o755 if self.role(rel) == "runtime" else 0o644
                out[d] = ("file", sha256_bytes(e.data), mode)
        return out

    def expected_dirs(self, target_kind="cuda"):
        dirs = set()
        for d in self.expected(target_kind):
            parts = d.split("/")[:-1]
            for i in range(1, len(parts) + 1):
                dirs.add("/".join(parts[:i]))
        return dirs

    def entry(self, rel):
        return self.files[rel]


class Fixtures(object):
    """The standard fixtures, built once per test script on first use."""

    SPECS = {
        # name: (platform, version, cuda_tag, cuda_major, options)
        "linux": (LINUX, "8.5.0.96", "11", 11, {}),
        "windows": (WINDOWS, "8.5.0.96", "11", 11, {}),
        # The previous release: other bytes, other sonames, and no
        # cudnn_backend.h (so an upgrade adds, replaces and removes files).
        "linux_old": (LINUX, "8.4.1.50", "11.6", 11,
                      {"headers": tuple(h for h in HEADERS if h != "cudnn_backend.h")}),
        "windows_old": (WINDOWS, "8.4.1.50", "11.6", 11,
                        {"headers": tuple(h for h in HEADERS if h != "cudnn_backend.h")}),
        # Same layout with fewer libraries: the kill-by-step loops run the
        # binary twice per operation, so they use these.
        "linux_mini": (LINUX, "8.5.0.96", "11", 11,
                       {"sublibs": ("ops_infer",),
                        "headers": ("cudnn.h", "cudnn_ops_infer.h", "cudnn_version.h")}),
        "linux_mini_old": (LINUX, "8.4.1.50", "11.6", 11,
                           {"sublibs": ("ops_infer",),
                            "headers": ("cudnn.h", "cudnn_version.h")}),
        # A few MB per library, for kill-by-time and signal tests.
        "linux_big": (LINUX, "8.5.0.96", "11", 11, {"big": True}),
        # Same files as "linux" but hostile modes in the archive (setuid,
        # world-writable, unreadable): modes must never come from it.
        "linux_modes": (LINUX, "8.5.0.96", "11", 11, {"odd_modes": True}),
    }

    def __init__(self, root):
        self.root = root
        self._built = {}

    def __getattr__(self, name):
        if name.startswith("_") or name not in self.SPECS:
            raise AttributeError(name)
        if name not in self._built:
            self._built[name] = self._build(name)
        return self._built[name]

    def _build(self, name):
        platform, version, tag, cmaj, opts = self.SPECS[name]
        opts = dict(opts)
        odd = opts.pop("odd_modes", False)
        sublibs = opts.get("sublibs", SUBLIBS)
        maker = linux_entries if platform == LINUX else windows_entries
        top, entries = maker(version, tag, **opts)
        if odd:
            odd_modes = [0o4777, 0o600, 0o777, 0o400, 0o2755]
            entries = [e.copy(mode=odd_modes[i % len(odd_modes)])
                       if e.kind == FILE else e for i, e in enumerate(entries)]
        return Fixture(os.path.join(self.root, name), platform, version, cmaj,
                       top, entries, sublibs,
                       preset=0 if opts.get("big") else 1)


FIX = Fixtures(os.path.join(WORK_ROOT, "fixtures"))


# ---------------------------------------------------------------------------
# 5. Target trees
# ---------------------------------------------------------------------------

def _put(root, rel, data=b"", mode=0o644):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(p, mode)


def make_cuda_tree(root, platform=LINUX, version="11.6.2", source="json",
                   targets_links=False):
    """A CUDA toolkit tree as the NVIDIA installer leaves it (the parts that
    matter here). source says where its version can be read:
      "json"   version.json (+ include/cuda.h), as CUDA >= 11.1
      "txt"    version.txt only ("CUDA Version 11.6.124"), as CUDA <= 11.0
      "header" only CUDA_VERSION in include/cuda.h
      "none"   nothing says which CUDA this is
    targets_links (Linux): lib64 and include are symlinks into
    targets/x86_64-linux/, as in real Linux installs."""
    major, minor = (int(x) for x in version.split(".")[:2])
    os.makedirs(root)
    inc, lib = "include", ("lib64" if platform == LINUX else "lib/x64")
    if targets_links and platform == LINUX:
        os.makedirs(os.path.join(root, "targets/x86_64-linux/lib"))
        os.makedirs(os.path.join(root, "targets/x86_64-linux/include"))
        os.symlink("targets/x86_64-linux/lib", os.path.join(root, "lib64"))
        os.symlink("targets/x86_64-linux/include", os.path.join(root, "include"))
    if source == "json":
        doc = {"cuda": {"name": "CUDA SDK", "version": version},
               # Component versions differ from the SDK's; only "cuda" counts.
               "cuda_cudart": {"name": "CUDA Runtime (cudart)",
                               "version": "%d.%d.55" % (major, minor)},
               "cuda_nvcc": {"name": "CUDA NVCC",
                             "version": "%d.%d.152" % (major, minor)}}
        _put(root, "version.json", json.dumps(doc, indent=3) + "\n")
    elif source == "txt":
        _put(root, "version.txt", "CUDA Version %d.%d.124\n" % (major, minor))
    if source in ("json", "header"):
        _put(root, inc + "/cuda.h",
             "/* synthetic cuda.h */\n#ifndef __cuda_cuda_h__\n"
             "#define __cuda_cuda_h__\n#define CUDA_VERSION %d\n#endif\n"
             % (major * 1000 + minor * 10))
    else:
        _put(root, inc + "/cuda_runtime_api.h", "/* no version here */\n")
    if platform == LINUX:
        so = "libcudart.so.%d.0" % major if major < 12 else "libcudart.so.%d" % major
        _put(root, lib + "/" + so, synth_bytes("cudart" + version, 3000), 0o755)
        os.symlink(so, os.path.join(root, lib, "libcudart.so"))
        _put(root, "bin/nvcc", "#!/bin/sh\necho 'fake nvcc'\n", 0o755)
    else:
        dll = "cudart64_%d.dll" % (major * 10) if major < 12 else "cudart64_%d.dll" % major
        _put(root, "bin/" + dll, b"MZ" + synth_bytes("cudart" + version, 3000), 0o755)
        _put(root, "bin/nvcc.exe", b"MZ" + synth_bytes("nvcc" + version, 500), 0o755)
        _put(root, lib + "/cudart.lib", b"!<arch>\n" + synth_bytes("cudart.lib", 700))
    return root


def make_prefix(root, platform=LINUX):
    """A conda environment (or any prefix) before cuDNN goes in."""
    os.makedirs(root)
    _put(root, "conda-meta/history", "==> 2022-08-01 00:00:00 <==\n# cmd: conda create\n")
    if platform == LINUX:
        _put(root, "bin/python3", "#!/bin/sh\n", 0o755)
        _put(root, "lib/libpython3.so", synth_bytes("libpython", 2000), 0o755)
    else:
        _put(root, "python.exe", b"MZ" + synth_bytes("python.exe", 500), 0o755)
        _put(root, "Library/bin/zlib.dll", b"MZ" + synth_bytes("zlib.dll", 500), 0o755)
    return root


# ---------------------------------------------------------------------------
# 6. Snapshots and state
# ---------------------------------------------------------------------------

def snapshot(root, ignore=(), drop_empty_state=True):
    """Every path under root (relative, '/'-separated) -> (type, content,
    mode): ("file", sha256, mode), ("link", target, None), ("dir", None,
    mode), ("other", None, st_mode). None when root does not exist.
    ignore: relative paths left out. drop_empty_state: leave out
    .cudnn-deploy/backup and .cudnn-deploy themselves when nothing else
    remains in them (the lock may stay; nothing else may)."""
    if not os.path.lexists(root):
        return None
    snap = {}
    ignore = set(ignore)

    def walk(abs_dir, rel):
        for name in sorted(os.listdir(abs_dir)):
            p = os.path.join(abs_dir, name)
            r = rel + name
            if r in ignore:
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                snap[r] = ("link", os.readlink(p), None)
            elif stat.S_ISDIR(st.st_mode):
                snap[r] = ("dir", None, stat.S_IMODE(st.st_mode))
                walk(p, r + "/")
            elif stat.S_ISREG(st.st_mode):
                snap[r] = ("file", sha256_file(p), stat.S_IMODE(st.st_mode))
            else:
                snap[r] = ("other", None, st.st_mode)

    walk(root, "")
    if drop_empty_state:
        for d in (BACKUP, STATE):
            if d in snap and snap[d][0] == "dir" and \
                    not any(k.startswith(d + "/") for k in snap):
                del snap[d]
    return snap


def normalize(snap):
    """Make two snapshots of the same state comparable across runs: the
    receipt's content (time, transaction id) is volatile, and backup folders
    are named by transaction id."""
    out = {}
    for p, v in snap.items():
        parts = p.split("/")
        if p.startswith(BACKUP + "/"):
            parts[2] = "<txn>"
            p = "/".join(parts)
        if p == RECEIPT or (p.startswith(BACKUP + "/") and p.endswith("/" + RECEIPT)):
            v = ("file", "<volatile>", v[2])
        out[p] = v
    return out


def comparable_state(root):
    """A tree's state for before/after comparisons across runs: the snapshot
    without lock and log, backup folders' ids normalised, and the receipt
    reduced to what it says was installed (its time and transaction id
    differ from run to run)."""
    snap = snapshot(root, IGNORE_LOCK_LOG)
    if snap is None:
        return None
    out = normalize(snap)
    for p in snap:
        if p == RECEIPT or (p.startswith(BACKUP + "/") and p.endswith("/" + RECEIPT)):
            try:
                with open(os.path.join(root, p)) as f:
                    files = sorted((e.get("path"), e.get("sha256"),
                                    e.get("symlink", e.get("target")))
                                   for e in json.load(f)["files"])
            except (ValueError, KeyError, TypeError, AttributeError) as e:
                files = "unreadable receipt: %s" % e
            out[normalize({p: snap[p]}).popitem()[0]] = ("receipt", repr(files), None)
    return out


def without_state(snap):
    return {p: v for p, v in snap.items()
            if p != STATE and not p.startswith(STATE + "/")}


def diff_snapshots(a, b, limit=30):
    """Readable differences between snapshots a (expected) and b (actual)."""
    if a is None or b is None:
        return ["expected %s, got %s" % ("nothing" if a is None else "a tree",
                                         "nothing" if b is None else "a tree")]
    lines = []
    for p in sorted(set(a) | set(b)):
        if p not in b:
            lines.append("missing:    %s %r" % (p, a[p]))
        elif p not in a:
            lines.append("unexpected: %s %r" % (p, b[p]))
        elif a[p] != b[p]:
            lines.append("changed:    %s %r -> %r" % (p, a[p], b[p]))
    if len(lines) > limit:
        lines = lines[:limit] + ["... and %d more" % (len(lines) - limit)]
    return lines


STATE_ALLOWED = ("lock", "receipt.json", "manifest.json", "log.jsonl", "backup")


def leftovers(root, allow_backup=False):
    """Things in .cudnn-deploy/ that must not outlive a command: stage-*,
    journal*, *.tmp, anything unknown, and a non-empty backup/ unless
    allow_backup. Empty list when clean."""
    d = os.path.join(root, STATE)
    if not os.path.isdir(d):
        return []
    bad = []
    for name in sorted(os.listdir(d)):
        if name == "backup":
            inside = []
            for dp, dn, fn in os.walk(os.path.join(d, name)):
                inside += fn + [x for x in dn if os.path.islink(os.path.join(dp, x))]
            if inside and not allow_backup:
                bad.append("backup/ holds %s" % sorted(inside)[:5])
        elif name not in STATE_ALLOWED:
            bad.append(name)
    return bad


def backup_dirs(root):
    d = os.path.join(root, BACKUP)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


def read_receipt(root):
    with open(os.path.join(root, RECEIPT)) as f:
        return json.load(f)


def receipt_files(receipt):
    """{path: entry} of a receipt (files: [{path, sha256, size} or
    {path, symlink|target}])."""
    files = receipt.get("files")
    if not isinstance(files, list):
        raise AssertionError("receipt has no files list: %r" % sorted(receipt))
    return {f["path"]: f for f in files}


def read_log(root):
    p = os.path.join(root, LOG)
    if not os.path.exists(p):
        return []
    with open(p) as f:
        return [json.loads(line) for line in f if line.strip()]


class LockHolder(object):
    """Hold a tree's lock as another cudnn-deploy would: an fcntl (POSIX
    record) lock on .cudnn-deploy/lock, its pid in the file. The lock is held
    by a small helper process, not by the test process: POSIX record locks
    vanish when the holder closes *any* descriptor of the file, which a
    snapshot of the tree does. pid: the holder's pid."""

    SCRIPT = (
        "import fcntl, os, sys\n"
        "fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)\n"
        "fcntl.lockf(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)\n"
        "os.ftruncate(fd, 0)\n"
        "os.pwrite(fd, b'%d\\n' % os.getpid(), 0)\n"
        "sys.stdout.write('locked\\n')\n"
        "sys.stdout.flush()\n"
        "sys.stdin.read()\n")

    def __init__(self, root):
        self.path = os.path.join(root, LOCK)
        self.proc = None
        self.pid = None
        self._mutex = threading.Lock()

    def acquire(self):
        os.makedirs(os.path.dirname(self.path), exist_ok=True)
        self.proc = subprocess.Popen([sys.executable, "-c", self.SCRIPT, self.path],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = self.proc.stdout.readline()
        if line != b"locked\n":
            self.proc.kill()
            self.proc.wait()
            raise AssertionError("the lock helper could not take %s" % self.path)
        self.pid = self.proc.pid
        return self

    def release(self):
        with self._mutex:
            if self.proc is not None:
                self.proc.stdin.close()
                self.proc.wait(timeout=30)
                self.proc.stdout.close()
                self.proc = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()


# ---------------------------------------------------------------------------
# 7. Workspaces and the test base class
# ---------------------------------------------------------------------------

SENTINEL_TEXT = b"outside the tree: cudnn-deploy must never touch this\n"


class Workspace(object):
    """A scratch folder holding a target tree and, beside it, an "outside"
    folder with sentinel files. Everything in the folder except the tree is
    snapshotted at creation; check_outside() asserts it never changed."""

    def __init__(self, folder, tree="cuda", platform=LINUX, **tree_kw):
        if os.path.lexists(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        self.dir = folder
        self.tree = os.path.join(folder, "tree")
        self.outside = os.path.join(folder, "outside")
        self.kind = "prefix" if tree == "prefix" else "cuda"
        self.platform = platform
        _put(self.outside, "sentinel.txt", SENTINEL_TEXT)
        _put(self.outside, "include/cudnn.h", SENTINEL_TEXT)
        _put(self.outside, "lib64/libcudnn.so.8.5.0", SENTINEL_TEXT)
        if tree == "cuda":
            make_cuda_tree(self.tree, platform, **tree_kw)
        elif tree == "prefix":
            make_prefix(self.tree, platform)
        elif tree is not None:
            raise ValueError(tree)
        self._outside = self.outside_state()

    @property
    def target_args(self):
        return ["--prefix" if self.kind == "prefix" else "--cuda-root", self.tree]

    def outside_state(self):
        """Snapshot of the workspace minus the tree."""
        snap = snapshot(self.dir)
        return {p: v for p, v in snap.items()
                if p != "tree" and not p.startswith("tree/")}

    def outside_changes(self):
        return diff_snapshots(self._outside, self.outside_state())

    def snap(self, ignore=IGNORE_LOCK):
        return snapshot(self.tree, ignore)

    def path(self, rel):
        return os.path.join(self.tree, rel)


class CddTestCase(unittest.TestCase):
    """Base of the end-to-end tests: workspaces, running the binary, and
    assertions about trees."""

    needs_binary = True
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if cls.needs_binary:
            why = binary_problem()
            if why and not BIN:
                raise unittest.SkipTest(why)
            if why:
                raise AssertionError(why)

    # -- workspaces -----------------------------------------------------------

    def workspace(self, name="ws", tree="cuda", platform=LINUX, fast=False, **tree_kw):
        """A fresh workspace. fast: on FAST_ROOT (RAM) when there is one."""
        parts = self.id().split(".")
        root = FAST_ROOT if fast and FAST_ROOT else WORK_ROOT
        if root is FAST_ROOT and root and not os.path.isdir(root):
            os.makedirs(root)
            import atexit
            atexit.register(shutil.rmtree, root, True)
        folder = os.path.join(root, parts[-2], parts[-1], name)
        return Workspace(folder, tree, platform, **tree_kw)

    def scratch(self, name):
        parts = self.id().split(".")
        d = os.path.join(WORK_ROOT, parts[-2], parts[-1], name)
        if os.path.lexists(d):
            shutil.rmtree(d)
        os.makedirs(d)
        return d

    # -- running ----------------------------------------------------------------

    def cdd(self, *args, **kw):
        return run(list(args), **kw)

    def cdd_json(self, *args, **kw):
        return run_json(list(args), **kw)

    def install(self, ws, fixture, *extra, **kw):
        """install --json into a workspace; kw: expect (default 0),
        manifest, archive, env."""
        expect = kw.pop("expect", 0)
        args = install_args(ws, fixture, kw.pop("manifest", None),
                            kw.pop("archive", None), *extra)
        return run_json(args, expect=expect, **kw)

    # -- assertions -------------------------------------------------------------

    def assertSameTree(self, expected, actual, msg=""):
        lines = diff_snapshots(expected, actual)
        if lines:
            self.fail("%s\ntrees differ:\n  %s" % (msg, "\n  ".join(lines)))

    def assertOutsideUntouched(self, ws):
        lines = ws.outside_changes()
        if lines:
            self.fail("files outside the tree changed:\n  " + "\n  ".join(lines))

    def assertNoLeftovers(self, root, allow_backup=False):
        bad = leftovers(root, allow_backup)
        if bad:
            self.fail("left behind in %s/%s: %s" % (root, STATE, bad))

    def assertError(self, jres, rc, codes=None, msg=""):
        """A failed --json answer: exit rc, error.code in codes."""
        self.assertEqual(jres.rc, rc, msg + describe(["..."], jres.rc, jres.out, jres.err))
        self.assertFalse(jres.doc["ok"])
        err = jres.doc.get("error") or {}
        if codes is not None:
            if isinstance(codes, str):
                codes = (codes,)
            self.assertIn(err.get("code"), codes,
                          "%s error %r" % (msg, err))
        return err

    def assertInstalled(self, ws, fixture, before, target_kind=None):
        """The tree is `before` plus exactly the fixture's files in their
        layout (plus the folders that hold them; their modes are not
        asserted), and nothing but known state is left in .cudnn-deploy."""
        target_kind = target_kind or ws.kind
        after = without_state(ws.snap())
        expected = without_state(before)
        for d in fixture.expected_dirs(target_kind):
            if d not in expected:
                got = after.get(d)
                expected[d] = got if got and got[0] == "dir" else ("dir", None, "<created>")
        expected.update(fixture.expected(target_kind))
        self.assertSameTree(expected, after,
                            "after installing %s" % fixture.filename)
        self.assertNoLeftovers(ws.tree, allow_backup=True)

    def assertReceiptMatches(self, ws, fixture, target_kind=None):
        target_kind = target_kind or ws.kind
        files = receipt_files(read_receipt(ws.tree))
        expected = fixture.expected(target_kind)
        self.assertEqual(sorted(files), sorted(expected),
                         "receipt paths vs installed paths")
        for p, (kind, content, _) in expected.items():
            if kind == "file":
                self.assertEqual(files[p].get("sha256"), content, p)
                if "size" in files[p]:
                    self.assertEqual(files[p]["size"],
                                     os.path.getsize(ws.path(p)), p)


def plan_of(doc):
    """{path: action} of a --json answer's plan."""
    plan = doc.get("plan")
    if not isinstance(plan, list):
        raise AssertionError("no plan list in %r" % sorted(doc))
    out = {}
    for item in plan:
        for k in ("path", "action", "role"):
            if k not in item:
                raise AssertionError("plan item without %s: %r" % (k, item))
        out[item["path"]] = item["action"]
    return out


def main():
    unittest.main(verbosity=2)
