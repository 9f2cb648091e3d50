"""Fake cuDNN 8.5.0.96 Linux archives built from tests/fakes/*.c with `cc`,
for the verify tests: real shared objects with the real sonames and the real
exported function names, packed in NVIDIA's layout, with a manifest written
by the binary's own `manifest create`.

    import fakecudnn
    why = fakecudnn.problem()          # None, or why nothing can be built
    fx = fakecudnn.archive("ok")       # FakeArchive: .path .manifest .folder
    lib = fakecudnn.old_main_dir()     # folder with an 8.4.1 libcudnn.so.8
    drv = fakecudnn.fake_driver()      # abs path of a fake libcuda.so.1

Variants of archive():
  "ok"           everything loads and checks; libcudnn_cnn_infer needs
                 libcudnn_ops_infer.so.8 (DT_NEEDED), as the real one does
  "mismatch"     libcudnn_ops_train's version check returns 14 (another cuDNN
                 version)
  "missing_dep"  libcudnn_adv_infer was linked against a stub
                 libcublasLt.so.11 that is not shipped (and is nowhere on this
                 machine), so its dependency is missing
  "sm80"         as "ok", and libcudnn_ops_infer and libcudnn_cnn_infer carry
                 a .nv_fatbin section with SASS for sm_80 only (fatbin.py)
  "sm80_ptx"     as "sm80", plus PTX for compute_80 (JIT on newer GPUs)

Builds are cached for the whole test process (each library, archive and
manifest is made once) under CDD_TEST_TMP.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archives  # noqa: E402
import cddenv  # noqa: E402
import cddrun  # noqa: E402
import fakebuild  # noqa: E402
import fatbin  # noqa: E402
import fixtures  # noqa: E402
import layoutmodel  # noqa: E402
from archives import DIR, FILE, SYMLINK, Entry  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FAKES = os.path.normpath(os.path.join(HERE, "..", "fakes"))
CC = os.environ.get("CC") or "cc"
BUILD_ROOT = os.path.join(cddenv.WORK_ROOT, "fakecudnn")

VERSION = "8.5.0.96"
SO_VER = "8.5.0"
TOP = "cudnn-linux-x86_64-%s_cuda11-archive" % VERSION
FILENAME = TOP + ".tar.xz"
SUBLIBS = layoutmodel.SUBLIBS
CHECK_SYMBOLS = layoutmodel.CHECK_SYMBOLS
MISMATCH_STATUS = 14

# Sub-library -> (what is special about it) per variant.
MISMATCH_SUB = "ops_train"
MISSING_DEP_SUB = "adv_infer"
MISSING_DEP = "libcublasLt.so.11"
# As in the real cuDNN 8: the cnn library needs the ops library.
INTERNAL_DEP = ("cnn_infer", "ops_infer")
# The sub-libraries that carry GPU code in the "sm80*" variants.
FATBIN_SUBS = ("ops_infer", "cnn_infer")

HEADERS = {
    "cudnn_version.h": (
        "/* fake cudnn_version.h for the cudnn-deploy tests */\n"
        "#ifndef CUDNN_VERSION_H_\n#define CUDNN_VERSION_H_\n\n"
        "#define CUDNN_MAJOR 8\n#define CUDNN_MINOR 5\n"
        "#define CUDNN_PATCHLEVEL 0\n\n"
        "#define CUDNN_VERSION (CUDNN_MAJOR * 1000 + CUDNN_MINOR * 100 + "
        "CUDNN_PATCHLEVEL)\n\n#endif\n"),
    "cudnn.h": "/* fake cudnn.h */\n#include \"cudnn_version.h\"\n"
               "#include \"cudnn_ops_infer.h\"\n",
    "cudnn_ops_infer.h": "/* fake cudnn_ops_infer.h */\n"
                         "typedef enum { CUDNN_STATUS_SUCCESS = 0 } "
                         "cudnnStatus_t;\n",
}
LICENSE = b"Fake NVIDIA cuDNN licence for the cudnn-deploy tests.\n"


def problem():
    """None when fake libraries can be built here, else why not."""
    if not sys.platform.startswith("linux"):
        return "fake cuDNN libraries are built for Linux only"
    if shutil.which(CC) is None:
        return "no C compiler (%s) to build the fake cuDNN libraries" % CC
    return None


def cc_shared(out, sources, soname=None, defines=(), libdirs=(), libs=()):
    """cc -shared -fPIC; returns out. Raises with cc's output on failure."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [CC, "-std=c11", "-O1", "-shared", "-fPIC", "-o", out]
    cmd += ["-D" + d for d in defines]
    if soname:
        cmd.append("-Wl,-soname," + soname)
    cmd += [os.path.join(FAKES, s) if not os.path.isabs(s) else s
            for s in sources]
    cmd += ["-L" + d for d in libdirs]
    cmd += ["-l:" + l for l in libs]
    fakebuild.run(cmd, "building %s" % out)
    return out


_builds = fakebuild.Builds(BUILD_ROOT)
_once = _builds.once
_build_dir = _builds.dir


def _real(name):
    return "%s.so.%s" % (name, SO_VER)


def _soname(name):
    return "%s.so.8" % name


def main_library(default_version=8500):
    """libcudnn.so.8.5.0 (soname libcudnn.so.8) from fake_cudnn_conv.c;
    default_version is cudnnGetVersion's answer without FAKE_CUDNN_VERSION."""
    def make():
        d = _build_dir("main-%d" % default_version)
        return cc_shared(os.path.join(d, _real("libcudnn")),
                         ["fake_cudnn_conv.c"], _soname("libcudnn"),
                         ["FAKE_CUDNN_DEFAULT_VERSION=%d" % default_version])
    return _once(("main", default_version), make)


def cublaslt_stub():
    """A stub libcublasLt.so.11 to link against; never shipped."""
    def make():
        d = _build_dir("stub")
        src = os.path.join(d, "cublaslt_stub.c")
        with open(src, "w") as f:
            f.write("int fake_cublaslt_stub_fn(void) { return 0; }\n")
        cc_shared(os.path.join(d, MISSING_DEP), [src], MISSING_DEP)
        return d
    return _once("stub", make)


def fatbin_source(kind):
    """A C file placing the fatbinary of kind ("sm80", "sm80_ptx") in
    .nv_fatbin."""
    def make():
        d = _build_dir("fatbin")
        ents = [fatbin.sass(80)]
        if kind == "sm80_ptx":
            ents.append(fatbin.ptx(80, 8, 0))
        return fatbin.c_source(os.path.join(d, kind + ".c"),
                               fatbin.section(ents), ".nv_fatbin")
    return _once(("fatsrc", kind), make)


def sub_library(sub, variant="ok", fat=None):
    """libcudnn_<sub>.so.8.5.0 from fake_cudnn_sub.c with its check symbol;
    variant "mismatch": the check returns 14; "missing_dep": needs the
    withheld libcublasLt.so.11; fat: also a fatbinary (fatbin_source)."""
    def make():
        name = "libcudnn_" + sub
        d = _build_dir("sub-" + variant + ("-" + fat if fat else ""))
        defines = ["CHECK_SYMBOL=" + CHECK_SYMBOLS[sub],
                   "CHECK_STATUS=%d" % (MISMATCH_STATUS if variant == "mismatch" else 0)]
        libdirs, libs = [], []
        if variant == "missing_dep":
            defines.append("NEEDS_SYMBOL=fake_cublaslt_stub_fn")
            libdirs.append(cublaslt_stub())
            libs.append(MISSING_DEP)
        elif sub == INTERNAL_DEP[0]:
            dep = "libcudnn_" + INTERNAL_DEP[1]
            defines.append("NEEDS_SYMBOL=" + CHECK_SYMBOLS[INTERNAL_DEP[1]])
            libdirs.append(os.path.dirname(sub_library(INTERNAL_DEP[1])))
            libs.append(_real(dep))
        sources = ["fake_cudnn_sub.c"] + ([fatbin_source(fat)] if fat else [])
        return cc_shared(os.path.join(d, _real(name)), sources,
                         _soname(name), defines, libdirs, libs)
    return _once(("sub", sub, variant, fat), make)


def fake_driver():
    """Absolute path of a fake libcuda.so.1 (fake_cuda.c)."""
    def make():
        d = _build_dir("driver")
        return cc_shared(os.path.join(d, "libcuda.so.1"), ["fake_cuda.c"],
                         "libcuda.so.1")
    return _once("driver", make)


def old_main_dir():
    """A folder holding an older (8.4.1) libcudnn.so.8, as a stale copy
    elsewhere on the search path would (libcudnn.so.8 -> .so.8.4.1)."""
    def make():
        d = _build_dir("old-8.4.1")
        real = os.path.join(d, "libcudnn.so.8.4.1")
        shutil.copyfile(main_library(8401), real)
        os.chmod(real, 0o755)
        os.symlink("libcudnn.so.8.4.1", os.path.join(d, "libcudnn.so.8"))
        return d
    return _once("old", make)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def entries(variant="ok"):
    """The archive's members in NVIDIA's layout (name order, like
    `tar --sort=name`)."""
    ents = [Entry(TOP + "/", DIR), Entry(TOP + "/LICENSE", FILE, LICENSE),
            Entry(TOP + "/include/", DIR)]
    for h in sorted(HEADERS):
        ents.append(Entry(TOP + "/include/" + h, FILE, HEADERS[h].encode()))
    ents.append(Entry(TOP + "/lib/", DIR))
    lib = []
    for name in ["libcudnn"] + ["libcudnn_" + s for s in SUBLIBS]:
        if name == "libcudnn":
            built = main_library()
        else:
            sub = name[len("libcudnn_"):]
            special = ((variant == "mismatch" and sub == MISMATCH_SUB) or
                       (variant == "missing_dep" and sub == MISSING_DEP_SUB))
            fat = (variant if variant.startswith("sm80") and sub in FATBIN_SUBS
                   else None)
            built = sub_library(sub, variant if special else "ok", fat)
        lib.append(Entry("%s/lib/%s" % (TOP, _real(name)), FILE, _read(built),
                         mode=0o755))
        lib.append(Entry("%s/lib/%s" % (TOP, _soname(name)), SYMLINK,
                         target=_real(name)))
        lib.append(Entry("%s/lib/%s.so" % (TOP, name), SYMLINK,
                         target=_soname(name)))
    return ents + sorted(lib, key=lambda e: e.name)


class FakeArchive(object):
    """A built archive and the manifest `manifest create` wrote for it."""

    def __init__(self, variant, folder, path, manifest):
        self.variant, self.folder = variant, folder
        self.path, self.manifest = path, manifest

    def install_args(self, tree, *extra):
        return (["install", "--cuda-root", tree, "--manifest", self.manifest,
                 "--archive", self.path] + [str(e) for e in extra])


VARIANTS = ("ok", "mismatch", "missing_dep", "sm80", "sm80_ptx")


def archive(variant="ok"):
    """The FakeArchive of a variant (built once per process)."""
    if variant not in VARIANTS:
        raise ValueError(variant)

    def make():
        d = _build_dir("archive-" + variant)
        path = fixtures.write_bytes(os.path.join(d, FILENAME),
                                    archives.tar_xz_bytes(entries(variant)))
        manifest = os.path.join(d, TOP + ".json")
        # The binary's own manifest create: version from cudnn_version.h,
        # CUDA major from the file name, verify section from the layout.
        cddrun.run(["manifest", "create", path, "-o", manifest], expect=0)
        return FakeArchive(variant, d, path, manifest)
    return _once(("archive", variant), make)


def planted_dependency(name, marker):
    """A library an attacker plants where the loader would find a
    dependency (libcublasLt.so.11): soname name, and the ELF constructor of
    fake_planted.c appending to marker when anything loads it. Returns the
    folder it is in."""
    import hashlib
    key = hashlib.sha256((name + marker).encode()).hexdigest()[:16]

    def make():
        d = _build_dir("planted-dep-" + key)
        # The stub's one export too, so that a library needing it loads.
        cc_shared(os.path.join(d, name), ["fake_planted.c"], name,
                  ['MARKER_PATH="%s"' % marker,
                   "CHECK_SYMBOL=fake_cublaslt_stub_fn"])
        return d
    return _once(("planted-dep", name, marker), make)


def failmalloc_shim():
    """tests/shim/failmalloc.c built as an LD_PRELOAD shim (glibc only),
    or None where it cannot be built."""
    def make():
        d = _build_dir("shim")
        out = os.path.join(d, "failmalloc.so")
        src = os.path.join(HERE, "..", "shim", "failmalloc.c")
        p = subprocess.run([CC, "-O2", "-shared", "-fPIC", "-o", out, src,
                            "-ldl"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT)
        return out if p.returncode == 0 else None
    return _once("failmalloc", make)


def planted_library(name, marker, size=None):
    """What an attacker plants for libcudnn[_<sub>].so.8.5.0 (name
    "libcudnn" or "libcudnn_ops_infer"): the same soname and check symbol,
    and an ELF constructor that appends to marker (an absolute path) when
    anything loads it (tests/fakes/fake_planted.c). size: padded with zero
    bytes to exactly that many (the original's size, so a size check cannot
    tell them apart); ValueError when the planted one is larger."""
    import hashlib
    key = hashlib.sha256(marker.encode()).hexdigest()[:16]

    def make():
        d = _build_dir("planted-" + key)
        defines = ['MARKER_PATH="%s"' % marker]
        sub = name[len("libcudnn_"):] if name.startswith("libcudnn_") else None
        if sub:
            defines.append("CHECK_SYMBOL=" + CHECK_SYMBOLS[sub])
        out = os.path.join(d, _real(name))
        cc_shared(out, ["fake_planted.c"], _soname(name), defines)
        subprocess.run(["strip", "--strip-unneeded", out],
                       stderr=subprocess.DEVNULL)
        return out
    built = _once(("planted", name, marker), make)
    data = _read(built)
    if size is not None:
        if len(data) > size:
            raise ValueError("planted %s is %d bytes, more than %d"
                             % (name, len(data), size))
        data += b"\0" * (size - len(data))
    return data


def plant(tree, name, marker, libdir="lib64"):
    """Replace the installed real file of name in tree by the planted
    library with the original's size, mode and modification time (a new
    file renamed over it, as a writer of the folder would). Returns its
    path."""
    path = os.path.join(tree, libdir, _real(name))
    st = os.stat(path)
    data = planted_library(name, marker, st.st_size)
    tmp = path + ".planting"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, st.st_mode & 0o7777)
    os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
    os.replace(tmp, path)
    return path
