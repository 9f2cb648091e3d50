"""Fake cuDNN 8.5.0.96 Windows zips built from tests/fakes/*.c with
mingw-w64 (x86_64-w64-mingw32-gcc -shared), for the verify tests under Wine:
the Windows counterpart of fakecudnn.py. Real DLLs with the real names and
exports, packed in NVIDIA's layout (top folder, bin/ the 7 DLLs, include/
headers with cudnn_version.h saying 8.5.0, lib/x64/ dummy import libraries,
LICENSE), with a manifest written by the .exe's own `manifest create`.

    import fakecudnn_win
    why = fakecudnn_win.problem()      # None, or why nothing can be built
    fx = fakecudnn_win.archive("ok")   # FakeArchive: .path .manifest .folder
    d = fakecudnn_win.old_main_dir()   # folder with an 8.4.1 cudnn64_8.dll

Variants of archive():
  "ok"        everything loads and checks; cudnn_cnn_infer64_8.dll imports
              cudnn_ops_infer64_8.dll, as the real one does
  "zlibwapi"  cudnn_ops_infer64_8.dll imports zlibwapi.dll (as cuDNN 8.3 to
              9.1 do), linked against a stub zlibwapi.dll that is not shipped
              and lies nowhere the loader looks: the real "error 126"

fake_cudnn_conv.c has no dllexport: mingw's linker then exports every global
function (auto-export), which gives cudnnGetVersion and friends.
Builds are cached for the whole test process under CDD_TEST_TMP.
"""

import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archives  # noqa: E402
import cddenv  # noqa: E402
import cddrun  # noqa: E402
import fixtures  # noqa: E402
import layoutmodel  # noqa: E402
from archives import FILE, Entry  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FAKES = os.path.normpath(os.path.join(HERE, "..", "fakes"))
CC = os.environ.get("CDD_MINGW_CC") or "x86_64-w64-mingw32-gcc"
BUILD_ROOT = os.path.join(cddenv.WORK_ROOT, "fakecudnn-win")

VERSION = "8.5.0.96"
SUBLIBS = layoutmodel.SUBLIBS
CHECK_SYMBOLS = layoutmodel.CHECK_SYMBOLS
MAIN = "cudnn64_8.dll"
ZLIB = "zlibwapi.dll"
ZLIB_SUB = "ops_infer"
# As in the real cuDNN 8: the cnn library needs the ops library.
INTERNAL_DEP = ("cnn_infer", "ops_infer")
VARIANTS = ("ok", "zlibwapi")


def dll_name(sub):
    return "cudnn_%s64_8.dll" % sub


def problem():
    """None when fake DLLs can be built here, else why not."""
    if shutil.which(CC) is None:
        return "no mingw-w64 compiler (%s) to build the fake cuDNN DLLs" % CC
    return None


def cc_dll(out, sources, defines=(), link=()):
    """mingw gcc -shared; link: DLLs to import from (ld links against a DLL
    directly). Returns out; raises with the compiler's output on failure."""
    os.makedirs(os.path.dirname(out), exist_ok=True)
    cmd = [CC, "-std=c11", "-O1", "-shared", "-o", out]
    cmd += ["-D" + d for d in defines]
    cmd += [os.path.join(FAKES, s) if not os.path.isabs(s) else s
            for s in sources]
    cmd += list(link)
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if p.returncode != 0:
        raise RuntimeError("building %s failed:\n$ %s\n%s"
                           % (out, " ".join(cmd), p.stdout.decode(errors="replace")))
    return out


_cache = {}


def _once(key, make):
    if key not in _cache:
        _cache[key] = make()
    return _cache[key]


def _build_dir(*parts):
    d = os.path.join(BUILD_ROOT, *parts)
    os.makedirs(d, exist_ok=True)
    return d


def main_library(default_version=8500):
    """cudnn64_8.dll from fake_cudnn_conv.c; default_version is
    cudnnGetVersion's answer without FAKE_CUDNN_VERSION."""
    def make():
        d = _build_dir("main-%d" % default_version)
        return cc_dll(os.path.join(d, MAIN), ["fake_cudnn_conv.c"],
                      ["FAKE_CUDNN_DEFAULT_VERSION=%d" % default_version])
    return _once(("main", default_version), make)


def zlibwapi_stub():
    """A stub zlibwapi.dll to link against, in a folder of its own: never
    shipped, never on PATH."""
    def make():
        d = _build_dir("zlibwapi-stub")
        src = os.path.join(d, "zlibwapi_stub.c")
        with open(src, "w") as f:
            f.write("__declspec(dllexport) int uncompress(void) "
                    "{ return 0; }\n")
        return cc_dll(os.path.join(d, ZLIB), [src])
    return _once("zlib", make)


def sub_library(sub, variant="ok"):
    """cudnn_<sub>64_8.dll from fake_cudnn_sub.c with its check symbol;
    variant "zlibwapi": imports the withheld zlibwapi.dll."""
    def make():
        d = _build_dir("sub-" + variant)
        defines = ["CHECK_SYMBOL=" + CHECK_SYMBOLS[sub], "CHECK_STATUS=0"]
        link = []
        if variant == "zlibwapi":
            defines.append("NEEDS_SYMBOL=uncompress")
            link.append(zlibwapi_stub())
        elif sub == INTERNAL_DEP[0]:
            defines.append("NEEDS_SYMBOL=" + CHECK_SYMBOLS[INTERNAL_DEP[1]])
            link.append(sub_library(INTERNAL_DEP[1]))
        return cc_dll(os.path.join(d, dll_name(sub)), ["fake_cudnn_sub.c"],
                      defines, link)
    return _once(("sub", sub, variant), make)


def old_main_dir():
    """A folder holding an older cudnn64_8.dll (cudnnGetVersion() = 8401),
    as a stale copy earlier on PATH would."""
    def make():
        d = _build_dir("old-8.4.1")
        shutil.copyfile(main_library(8401), os.path.join(d, MAIN))
        return d
    return _once("old", make)


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def entries(variant="ok"):
    """(top, entries): fixtures.windows_entries' layout (cudnn_version.h says
    8.5.0; dummy .lib import libraries; LICENSE) with the built DLLs."""
    top, ents = fixtures.windows_entries(VERSION)
    built = {MAIN: main_library()}
    for s in SUBLIBS:
        v = variant if (variant == "zlibwapi" and s == ZLIB_SUB) else "ok"
        built[dll_name(s)] = sub_library(s, v)
    out = []
    for e in ents:
        base = e.name.rsplit("/", 1)[-1]
        if e.kind == FILE and e.name.startswith(top + "/bin/"):
            e = Entry(e.name, FILE, _read(built.pop(base)))
        out.append(e)
    assert not built, built
    return top, out


class FakeArchive(object):
    """A built zip and the manifest `manifest create` wrote for it."""

    def __init__(self, variant, folder, path, manifest):
        self.variant, self.folder = variant, folder
        self.path, self.manifest = path, manifest


def archive(variant="ok"):
    """The FakeArchive of a variant (built once per process)."""
    if variant not in VARIANTS:
        raise ValueError(variant)

    def make():
        d = _build_dir("archive-" + variant)
        top, ents = entries(variant)
        path = fixtures.write_bytes(os.path.join(d, top + ".zip"),
                                    archives.zip_bytes(ents))
        manifest = os.path.join(d, top + ".json")
        # The .exe's own manifest create (cdd-wine.sh turns the paths into
        # Z:\...): version from cudnn_version.h, CUDA major from the name.
        cddrun.run(["manifest", "create", path, "-o", manifest], expect=0)
        return FakeArchive(variant, d, path, manifest)
    return _once(("archive", variant), make)
