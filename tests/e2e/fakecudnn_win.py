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
  "delayload" cudnn_ops_infer64_8.dll delay-loads that absent zlibwapi.dll
              (/DELAYLOAD: it loads; the first call into zlib would fail)
  "resmismatch" cudnn_ops_train64_8.dll carries version resource 8.4.1.50,
              the others 8.5.0.96: DLLs of two builds
  "resmissing" cudnn_adv_train64_8.dll carries no version resource
  "sm80"      cudnn_ops_infer64_8.dll and cudnn_cnn_infer64_8.dll carry a
              .nv_fatb section with SASS for sm_80 only (fatbin.py)

Every DLL carries a version resource (windres): FILEVERSION 8.5.0.96 unless
said otherwise.

Delay loads: mingw's ld links a DLL against a delay-import library made by
`dlltool --output-delaylib` (descriptor, thunks and the __delayLoadHelper2
call are real), but binutils 2.40 leaves the PE data directory 13 (the
delay-import directory, which dumpbin and verify read; the loader never
does) empty, and writes no table terminator after the descriptor;
set_delay_directory() writes a proper table and points the directory at it.

fake_cudnn_conv.c has no dllexport: mingw's linker then exports every global
function (auto-export), which gives cudnnGetVersion and friends.
Builds are cached for the whole test process under CDD_TEST_TMP.
"""

import os
import shutil
import struct
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import archives  # noqa: E402
import cddenv  # noqa: E402
import cddrun  # noqa: E402
import fakebuild  # noqa: E402
import fatbin  # noqa: E402
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
VARIANTS = ("ok", "zlibwapi", "delayload", "resmismatch", "resmissing",
            "sm80")
WINDRES = os.environ.get("CDD_MINGW_WINDRES") or "x86_64-w64-mingw32-windres"
DLLTOOL = os.environ.get("CDD_MINGW_DLLTOOL") or "x86_64-w64-mingw32-dlltool"
MISMATCH_SUB = "ops_train"
MISMATCH_RES = "8.4.1.50"
NORES_SUB = "adv_train"
FATBIN_SUBS = ("ops_infer", "cnn_infer")


def dll_name(sub):
    return "cudnn_%s64_8.dll" % sub


def problem():
    """None when fake DLLs can be built here, else why not."""
    for tool in (CC, WINDRES, DLLTOOL):
        if shutil.which(tool) is None:
            return "no mingw-w64 %s to build the fake cuDNN DLLs" % tool
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
    fakebuild.run(cmd, "building %s" % out)
    return out


_builds = fakebuild.Builds(BUILD_ROOT)
_once = _builds.once
_build_dir = _builds.dir


def version_resource(version):
    """A COFF object holding VERSIONINFO for "8.5.0.96" (windres)."""
    def make():
        d = _build_dir("res-" + version)
        parts = version.split(".")
        rc = os.path.join(d, "version.rc")
        with open(rc, "w") as f:
            f.write("1 VERSIONINFO\nFILEVERSION %s\nPRODUCTVERSION %s\n"
                    "BEGIN\n BLOCK \"StringFileInfo\"\n BEGIN\n"
                    "  BLOCK \"040904b0\"\n  BEGIN\n"
                    "   VALUE \"CompanyName\", \"cudnn-deploy tests\"\n"
                    "   VALUE \"FileVersion\", \"%s\"\n"
                    "   VALUE \"ProductVersion\", \"%s\"\n  END\n END\n"
                    " BLOCK \"VarFileInfo\"\n BEGIN\n"
                    "  VALUE \"Translation\", 0x409, 1200\n END\nEND\n"
                    % (",".join(parts), ",".join(parts), version, version))
        obj = os.path.join(d, "version.o")
        fakebuild.run([WINDRES, rc, "-O", "coff", "-o", obj], "windres")
        return obj
    return _once(("res", version), make)


def zlibwapi_delaylib():
    """A delay-import library for zlibwapi.dll (dlltool --output-delaylib)."""
    def make():
        d = _build_dir("zlibwapi-delay")
        dfile = os.path.join(d, "zlibwapi.def")
        with open(dfile, "w") as f:
            f.write("LIBRARY zlibwapi.dll\nEXPORTS\nuncompress\n")
        lib = os.path.join(d, "libzlibwapi-delay.a")
        fakebuild.run([DLLTOOL, "--input-def", dfile, "--output-delaylib",
                       lib, "--dllname", ZLIB], "dlltool")
        return lib
    return _once("zlib-delay", make)


def _pe_sections(data):
    pe = struct.unpack_from("<I", data, 0x3C)[0]
    nsec = struct.unpack_from("<H", data, pe + 6)[0]
    opt = pe + 24
    optsz = struct.unpack_from("<H", data, pe + 20)[0]
    secs = []
    for i in range(nsec):
        vsize, va, rsize, roff = struct.unpack_from("<IIII", data,
                                                    opt + optsz + 40 * i + 8)
        secs.append((va, vsize, roff, rsize))
    return opt, secs


DELAY_SLOT_MARK = b"cdd-delay-table-slot"


def delay_table_source():
    """A C file reserving 64 bytes of .rdata, marked, for the table
    set_delay_directory() writes."""
    def make():
        d = _build_dir("delay-slot")
        path = os.path.join(d, "delay_slot.c")
        with open(path, "w") as f:
            f.write("/* generated by tests/e2e/fakecudnn_win.py */\n"
                    "__attribute__((used, aligned(8)))\n"
                    "const unsigned char fake_delay_table[64] = \"%s\";\n"
                    % DELAY_SLOT_MARK.decode())
        return path
    return _once("delay-slot", make)


def set_delay_directory(path, dll):
    """Give the PE32+ image at path the delay-import directory ld leaves
    out: dlltool put one descriptor (attributes 1 = RVA form, name dll) in
    .text with code right after it, so it is copied, with the empty
    descriptor that ends a table, into the slot of delay_table_source(),
    and data directory 13 points there. The thunks keep using the original
    descriptor; only tools read the directory."""
    with open(path, "rb") as f:
        data = bytearray(f.read())
    opt, secs = _pe_sections(data)

    def rva_of(off):
        for va, vsize, roff, rsize in secs:
            if roff <= off < roff + min(rsize, vsize):
                return va + off - roff
        return None

    desc = -1
    name = data.find(dll.encode() + b"\0")
    while name >= 0 and desc < 0:
        if rva_of(name) is not None:
            want = struct.pack("<II", 1, rva_of(name))
            desc = data.find(want)
            while desc >= 0 and (desc % 4 or rva_of(desc) is None):
                desc = data.find(want, desc + 1)
        name = data.find(dll.encode() + b"\0", name + 1)
    slot = data.find(DELAY_SLOT_MARK)
    if desc < 0 or slot < 0 or slot % 8 or rva_of(slot) is None:
        raise RuntimeError("%s: no delay-load descriptor for %s, or no slot"
                           % (path, dll))
    data[slot:slot + 64] = bytes(data[desc:desc + 32]) + b"\0" * 32
    struct.pack_into("<II", data, opt + 112 + 13 * 8, rva_of(slot), 64)
    with open(path, "wb") as f:
        f.write(data)


def fatbin_source():
    """A C file placing SASS-for-sm_80 fatbinaries in section .nv_fatb,
    the name nvcc's host compiler gives it on Windows."""
    def make():
        d = _build_dir("fatbin")
        return fatbin.c_source(os.path.join(d, "sm80.c"),
                               fatbin.section([fatbin.sass(80)]), ".nv_fatb")
    return _once("fatsrc", make)


def main_library(default_version=8500):
    """cudnn64_8.dll from fake_cudnn_conv.c; default_version is
    cudnnGetVersion's answer without FAKE_CUDNN_VERSION."""
    def make():
        d = _build_dir("main-%d" % default_version)
        return cc_dll(os.path.join(d, MAIN), ["fake_cudnn_conv.c"],
                      ["FAKE_CUDNN_DEFAULT_VERSION=%d" % default_version],
                      [version_resource(VERSION)])
    return _once(("main", default_version), make)


def fake_driver():
    """Absolute path of a fake nvcuda.dll (fake_cuda.c cross-built), in a
    folder of its own: the GPU layer takes it by CUDNN_DEPLOY_DRIVER_LIB."""
    def make():
        d = _build_dir("driver")
        return cc_dll(os.path.join(d, "nvcuda.dll"), ["fake_cuda.c"])
    return _once("driver", make)


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
    """cudnn_<sub>64_8.dll from fake_cudnn_sub.c with its check symbol and
    a version resource; variant "zlibwapi": imports the withheld
    zlibwapi.dll; "delayload": delay-loads it; "resmismatch": version
    resource MISMATCH_RES; "sm80": a .nv_fatb section."""
    def make():
        d = _build_dir("sub-" + variant)
        defines = ["CHECK_SYMBOL=" + CHECK_SYMBOLS[sub], "CHECK_STATUS=0"]
        sources = ["fake_cudnn_sub.c"]
        link = [] if variant == "resmissing" else [
            version_resource(MISMATCH_RES if variant == "resmismatch"
                             else VERSION)]
        if variant in ("zlibwapi", "delayload"):
            defines.append("NEEDS_SYMBOL=uncompress")
            link.append(zlibwapi_stub() if variant == "zlibwapi"
                        else zlibwapi_delaylib())
        elif sub == INTERNAL_DEP[0]:
            defines.append("NEEDS_SYMBOL=" + CHECK_SYMBOLS[INTERNAL_DEP[1]])
            link.append(sub_library(INTERNAL_DEP[1]))
        if variant == "sm80":
            sources.append(fatbin_source())
        if variant == "delayload":
            sources.append(delay_table_source())
        out = cc_dll(os.path.join(d, dll_name(sub)), sources, defines, link)
        if variant == "delayload":
            set_delay_directory(out, ZLIB)
        return out
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
    special = {"zlibwapi": (ZLIB_SUB,), "delayload": (ZLIB_SUB,),
               "resmismatch": (MISMATCH_SUB,), "resmissing": (NORES_SUB,),
               "sm80": FATBIN_SUBS}
    for s in SUBLIBS:
        v = variant if s in special.get(variant, ()) else "ok"
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
