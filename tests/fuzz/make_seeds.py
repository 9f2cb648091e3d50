#!/usr/bin/env python3
"""The seed corpus of the fuzz targets (tests/fuzz/, docs/fuzzing.md),
written at build time into OUT/<target>/ (nothing binary is committed):
small, deterministic inputs of each format -- good ones shaped like the real
cuDNN archives and state files, and the hostile shapes the unit and e2e
suites refuse -- plus the inputs of every fuzzer finding fixed so far
(REGRESSIONS, replayed by ctest as part of the corpus).

    make_seeds.py [--manifests DIR] OUT

Only the ELF seeds need a tool: the C compiler (cc) links a few tiny shared
objects; without one those seeds are left out, with a note."""

import argparse
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import zipfile

SHA = "14e78a26f30ad05810aee663185e2740f1d2dcc93e4497770e2414c6a0f39654"
TOP_LINUX = "cudnn-linux-x86_64-8.5.0.96_cuda11-archive"
TOP_WIN = "cudnn-windows-x86_64-8.5.0.96_cuda11-archive"
ZIP_TIME = (2022, 8, 1, 0, 0, 0)
TAR_MTIME = 1660000000



def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


# ---- names ----------------------------------------------------------------

NAMES = [
    "include/cudnn.h", "lib/libcudnn.so.8.5.0", "bin/cudnn64_8.dll",
    "lib/x64/cudnn.lib", "LICENSE", "include/", "lib/x64/",
    "../etc/passwd", "a/../../b", "/etc/passwd", "//server/share/x",
    "\\\\server\\share", "C:x", "c:/windows", "a\\b", "a:stream", "a/./b",
    "a//b", "a/", "con", "CON.txt", "nul .h", "lpt9", "com0.x",
    "COM\u00b9", "lpt\u00b3.a", "conin$", "CLOCK$.x", "PROGRA~1", "a~1b",
    "dot.", "space ", "inc<lude", "a|b", "a?b", "a*b", "a\"b",
    "a\x01b", "a\x7fb", "a\u0085b", "a\u202eb.h", "a\u200bb", "a\ufeffb",
    "\uff0e\uff0e/x", "a\u2215b", "a\u00a5b", "caf\u00e9/na\u00efve.h",
    "\u0130stanbul/\u0131.h", "\u03a3\u03c3\u03c2", "\u1e9e\u00df",
    "\U0001F600/x.h", "x" * 255, "x" * 256, ("a/" * 512) + "b",
    ("d" * 200 + "/") * 5 + "e",
]
BAD_UTF8 = [b"a\x80b", b"\xc0\xafetc", b"\xe0\x80\xafx", b"\xed\xa0\x80x",
            b"\xf4\x90\x80\x80", b"\xf5\x80\x80\x80", b"\xc2", b"\xe2\x82",
            b"\xff\xfe", b"ok/\xe2\x80\xae.h"]


def seeds_pathsafe(out):
    for i, n in enumerate(NAMES):
        write(out, "pathsafe", "name-%02d" % i, n)
    for i, b in enumerate(BAD_UTF8):
        write(out, "pathsafe", "utf8-%02d" % i, b)


# ---- manifests, redistrib, receipt, journal ---------------------------------

def small_manifest(files_exact=True, verify=False, platform="linux-x86_64"):
    m = {"schema_version": 1, "product": "cudnn", "version": "8.5.0.96",
         "cuda_major": 11, "platform": platform,
         "archive": {"filename": TOP_LINUX + ".tar.xz", "sha256": SHA,
                     "size": 123, "strip_components": 1,
                     "url": ["https://example.invalid/a.tar.xz"]},
         "files_exact": files_exact,
         "files": [
             {"path": "include/cudnn.h", "role": "header", "sha256": SHA,
              "size": 11},
             {"path": "lib/libcudnn.so.8.5.0", "role": "runtime",
              "sha256": SHA, "size": 11},
             {"path": "lib/libcudnn.so.8", "role": "symlink",
              "target": "libcudnn.so.8.5.0"},
             {"path": "lib/libcudnn.so", "role": "symlink",
              "target": "libcudnn.so.8"},
             {"path": "LICENSE", "role": "license"}]}
    if verify:
        m["verify"] = {"version_number": 8500,
                       "library": "lib/libcudnn.so.8",
                       "version_symbol": "cudnnGetVersion",
                       "mismatch_status": 14, "sublibraries": []}
    return json.dumps(m, indent=1)


def seeds_manifest(out, mdir):
    if mdir and os.path.isdir(mdir):
        for n in sorted(os.listdir(mdir)):
            if n.endswith(".json"):
                with open(os.path.join(mdir, n), "rb") as f:
                    write(out, "manifest", "shipped-" + n, f.read())
    write(out, "manifest", "small", small_manifest())
    write(out, "manifest", "small-verify", small_manifest(verify=True))
    write(out, "manifest", "small-open", small_manifest(files_exact=False))
    bad = json.loads(small_manifest())
    bad["files"][1]["path"] = "../lib/libcudnn.so"
    write(out, "manifest", "bad-path", json.dumps(bad))
    write(out, "manifest", "deep", "[" * 40 + "]" * 40)
    write(out, "manifest", "dupkey",
          '{"schema_version":1,"schema_version":1,"files":[]}')


def seeds_redistrib(out):
    new = {"release_label": "8.9.7.29", "cudnn": {
        "name": "NVIDIA CUDA Deep Neural Network library",
        "version": "8.9.7.29",
        "linux-x86_64": {
            "cuda11": {"relative_path": "cudnn/linux-x86_64/"
                       "cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz",
                       "sha256": SHA, "md5": "0" * 32, "size": "861488496"},
            "cuda12": {"relative_path": "cudnn/linux-x86_64/"
                       "cudnn-linux-x86_64-8.9.7.29_cuda12-archive.tar.xz",
                       "sha256": SHA, "md5": "0" * 32, "size": "1"}},
        "windows-x86_64": {
            "cuda11": {"relative_path": "cudnn/windows-x86_64/"
                       "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip",
                       "sha256": SHA, "size": "542516637"}}}}
    old = {"release_date": "2022-08-01", "cudnn": {
        "version": "8.5.0.96",
        "linux-x86_64": {"relative_path": "cudnn/linux-x86_64/"
                         "cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz",
                         "sha256": SHA},
        "windows-x86_64": {"relative_path": "cudnn/windows-x86_64/"
                           "cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip",
                           "sha256": SHA}}}
    # the first byte picks the query (fuzz_redistrib.c)
    for sel in (0x00, 0x02, 0x04 | 0x10, 0x01, 0x08):
        write(out, "redistrib", "new-%02x" % sel, bytes([sel]) + json.dumps(new).encode())
        write(out, "redistrib", "old-%02x" % sel, bytes([sel]) + json.dumps(old).encode())
    bad = json.loads(json.dumps(new))
    bad["cudnn"]["linux-x86_64"]["cuda11"]["relative_path"] = \
        "../../cudnn-linux-x86_64-8.9.7.29_cuda11-archive.tar.xz"
    write(out, "redistrib", "bad-path", b"\x02" + json.dumps(bad).encode())


def receipt_text(files, backed_up, dirs, txn="20260101T000000Z-1"):
    r = {"schema_version": 1, "tool_version": "0.1.0", "transaction": txn,
         "installed_at": "2026-01-01T00:00:00Z",
         "manifest": {"name": "m", "sha256": SHA, "product": "cudnn",
                      "version": "8.5.0.96", "platform": "linux-x86_64",
                      "cuda_major": 11},
         "target": {"kind": "cuda", "layout": "cuda-linux",
                    "cuda_version": "11.6"},
         "archive": {"filename": "a.tar.xz", "sha256": SHA, "size": 1,
                     "pinned": True, "pin_source": "manifest"},
         "files": files, "backed_up": backed_up, "created_dirs": dirs}
    return json.dumps(r, indent=1)


def seeds_receipt(out):
    f_ok = {"path": "lib64/libcudnn.so.8.5.0", "role": "runtime",
            "sha256": SHA, "size": 11}
    link = {"path": "lib64/libcudnn.so.8", "role": "symlink",
            "symlink": "libcudnn.so.8.5.0"}
    hdr = {"path": "include/cudnn.h", "role": "header", "sha256": SHA,
           "size": 3, "preexisting": True, "mtime_ns": 1660000000000000000}
    write(out, "receipt", "good", receipt_text([f_ok, link, hdr], [], []))
    write(out, "receipt", "backups", receipt_text(
        [f_ok], [{"path": "lib64/libcudnn.so.8.5.0", "sha256": SHA, "size": 11},
                 {"path": "lib64/libcudnn.so.8", "symlink": "libcudnn.so.8.4.1"},
                 "include/cudnn.h"], ["share/doc/cudnn"]))
    write(out, "receipt", "outside", receipt_text(
        [dict(f_ok, path="../etc/passwd")], [], []))
    write(out, "receipt", "state", receipt_text(
        [dict(f_ok, path=".cudnn-deploy/journal")], [], []))


def seeds_journal(out):
    head = "cudnn-deploy-journal 2 T-1 install keep-backup\n"
    st = ".cudnn-deploy/stage-T-1/"
    prev_f = "f:11:" + SHA
    j = [
        head + "M\tlib64\nP\t%sbin/a.dll\tbin/a.dll\t%s\nP\t%slib64/x\tlib64/x\n"
        "D\tlib64/libcudnn.so.8\tl:libcudnn.so.8.5.0\nR\tlib64/old\nE\n"
        % (st, prev_f, st),
        head + "P\t%sinclude/cudnn.h\tinclude/cudnn.h\nE\nC\n" % st,
        "cudnn-deploy-journal 2 T-1 uninstall purge-backup\n"
        "D\tinclude/cudnn.h\t%s\nE\nC\n" % prev_f,
        head + "P\t%sx\tx\n" % st,                      # no end: never acted
        head + "P\t../x\tinclude/x\nE\n",
        head + "P\t%sx\t.cudnn-deploy/receipt.json\nE\n" % st,
        head + "D\tx\tf:12:zz\nE\n",
        head + "E\nE\n",
        head + "C\n",
        "cudnn-deploy-journal 1 T-1 install keep-backup\nE\n",
        head + "\nE\n",
    ]
    for i, t in enumerate(j):
        write(out, "journal", "j-%02d" % i, t)


# ---- ELF (linked by cc) and PE (built here) --------------------------------

ELF_SRC = """
int cudnnGetVersion(void) { return 8500; }
int cudnnGetCudartVersion(void) { return 11060; }
int cudnnCreate(void **h) { *h = 0; return 0; }
int cudnnDestroy(void *h) { return 0; }
const char *cudnnGetErrorString(int s) { return "ok"; }
int cudnn_data_symbol = 1;
static int hidden(void) { return 2; }
int cudnnOpsInferVersionCheck(void) { return hidden(); }
"""


def seeds_elf(out):
    cc = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not cc:
        print("make_seeds: no C compiler, no ELF seeds", file=sys.stderr)
        return
    variants = {
        "gnuhash": ["-Wl,--hash-style=gnu"],
        "sysvhash": ["-Wl,--hash-style=sysv", "-Wl,-rpath,$ORIGIN"],
        "runpath": ["-Wl,--hash-style=both", "-Wl,--enable-new-dtags",
                    "-Wl,-rpath,$ORIGIN/../lib"],
        "stripped": ["-Wl,-s"],
    }
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "fake.c")
        with open(src, "w") as f:
            f.write(ELF_SRC)
        for name, flags in variants.items():
            so = os.path.join(tmp, name + ".so")
            cmd = [cc, "-shared", "-fPIC", "-O1", "-nostdlib", "-o", so, src,
                   "-Wl,-soname,libcudnn.so.8", "-Wl,--no-as-needed",
                   "-Wl,-z,max-page-size=16", "-Wl,-z,common-page-size=16",
                   "-Wl,-z,noseparate-code", "-Wl,--build-id=none",
                   "-lc"] + flags
            if subprocess.run(cmd, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode != 0:
                print("make_seeds: %s failed, no %s seed" % (cc, name),
                      file=sys.stderr)
                continue
            with open(so, "rb") as f:
                write(out, "elf", "so-" + name, f.read())


def build_pe(is64, imports=(), delay=(), delay_va=False, dllname=None,
             exports=()):
    """A DLL image as tests/unit/test_pe.c builds it: .text and .rdata,
    import, delay-import and export directories in .rdata."""
    TEXT_VA, TEXT_RAW, RDATA_VA, RDATA_RAW, LFANEW = 0x1000, 0x400, 0x2000, 0x600, 0x80
    base = 0x180000000 if is64 else 0x10000000
    ws = 8 if is64 else 4
    rd = bytearray()

    def alloc(n, align):
        off = (len(rd) + align - 1) // align * align
        rd.extend(b"\0" * (off + n - len(rd)))
        return off

    def put(off, v, n):
        rd[off:off + n] = (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")

    def rstr(s):
        b = s.encode() + b"\0"
        off = alloc(len(b), 1)
        rd[off:off + len(b)] = b
        return RDATA_VA + off

    imp = dly = exp = 0
    if imports:
        d = alloc((len(imports) + 1) * 20, 4)
        imp = RDATA_VA + d
        for i, name in enumerate(imports):
            nm = rstr(name)
            hn = alloc(2, 2)
            rstr("SomeFunction")
            it = alloc(2 * ws, 8)
            iat = alloc(2 * ws, 8)
            put(it, RDATA_VA + hn, ws)
            put(iat, RDATA_VA + hn, ws)
            e = d + 20 * i
            put(e, RDATA_VA + it, 4)
            put(e + 12, nm, 4)
            put(e + 16, RDATA_VA + iat, 4)
    if delay:
        d = alloc((len(delay) + 1) * 32, 4)
        dly = RDATA_VA + d
        for i, name in enumerate(delay):
            nm = rstr(name)
            slots = alloc(5 * ws, 8)
            adj = base if delay_va else 0
            e = d + 32 * i
            put(e, 0 if delay_va else 1, 4)
            put(e + 4, nm + adj, 4)
            put(e + 8, RDATA_VA + slots + adj, 4)
            put(e + 12, RDATA_VA + slots + ws + adj, 4)
            put(e + 16, RDATA_VA + slots + 3 * ws + adj, 4)
    if dllname:
        n = len(exports)
        d = alloc(40, 4)
        exp = RDATA_VA + d
        nm = rstr(dllname)
        funcs = alloc(4 * n, 4)
        names = alloc(4 * n, 4)
        ords = alloc(2 * n, 2)
        for i, sym in enumerate(sorted(exports)):
            r = rstr(sym)
            put(funcs + 4 * i, TEXT_VA + 16 * (i % 16), 4)
            put(names + 4 * i, r, 4)
            put(ords + 2 * i, i, 2)
        put(d + 12, nm, 4)
        put(d + 16, 1, 4)
        put(d + 20, n, 4)
        put(d + 24, n, 4)
        put(d + 28, RDATA_VA + funcs, 4)
        put(d + 32, RDATA_VA + names, 4)
        put(d + 36, RDATA_VA + ords, 4)
    if not rd:
        alloc(16, 1)
    raw = (len(rd) + 0x1ff) & ~0x1ff
    img = bytearray(RDATA_RAW + raw)
    img[RDATA_RAW:RDATA_RAW + len(rd)] = rd
    img[TEXT_RAW:TEXT_RAW + 0x200] = b"\xcc" * 0x200

    def p(off, v, n):
        img[off:off + n] = (v & ((1 << (8 * n)) - 1)).to_bytes(n, "little")

    opt_size, dd = (240, 112) if is64 else (224, 96)
    img[0:2] = b"MZ"
    p(0x3c, LFANEW, 4)
    img[LFANEW:LFANEW + 4] = b"PE\0\0"
    coff = LFANEW + 4
    p(coff, 0x8664 if is64 else 0x14c, 2)
    p(coff + 2, 2, 2)
    p(coff + 16, opt_size, 2)
    p(coff + 18, 0x2022, 2)
    opt = LFANEW + 24
    p(opt, 0x20b if is64 else 0x10b, 2)
    if is64:
        p(opt + 24, base, 8)
    else:
        p(opt + 28, base, 4)
    p(opt + 32, 0x1000, 4)
    p(opt + 36, 0x200, 4)
    p(opt + 56, RDATA_VA + ((len(rd) + 0xfff) & ~0xfff), 4)
    p(opt + 60, 0x400, 4)
    p(opt + dd - 4, 16, 4)
    dirs = opt + dd
    p(dirs, exp, 4)
    p(dirs + 4, 40 if exp else 0, 4)
    p(dirs + 8, imp, 4)
    p(dirs + 12, (len(imports) + 1) * 20 if imp else 0, 4)
    p(dirs + 13 * 8, dly, 4)
    p(dirs + 13 * 8 + 4, (len(delay) + 1) * 32 if dly else 0, 4)
    s = opt + opt_size
    img[s:s + 5] = b".text"
    p(s + 8, 0x100, 4)
    p(s + 12, TEXT_VA, 4)
    p(s + 16, 0x200, 4)
    p(s + 20, TEXT_RAW, 4)
    p(s + 36, 0x60000020, 4)
    s += 40
    img[s:s + 6] = b".rdata"
    p(s + 8, len(rd), 4)
    p(s + 12, RDATA_VA, 4)
    p(s + 16, raw, 4)
    p(s + 20, RDATA_RAW, 4)
    p(s + 36, 0x40000040, 4)
    return bytes(img)


def seeds_pe(out):
    exports = ["cudnnGetVersion", "cudnnCnnInferVersionCheck", "cudnnCreate",
               "cudnnConvolutionForward"]
    write(out, "pe", "cnn64", build_pe(
        True, imports=["cudnn_ops_infer64_8.dll", "cublas64_11.dll",
                       "KERNEL32.dll"],
        dllname="cudnn_cnn_infer64_8.dll", exports=exports))
    write(out, "pe", "delay32", build_pe(
        False, imports=["KERNEL32.dll"], delay=["zlibwapi.dll", "nvcuda.dll"]))
    write(out, "pe", "delay32va", build_pe(
        False, delay=["zlibwapi.dll"], delay_va=True))
    write(out, "pe", "exports-only", build_pe(
        True, dllname="cudnn64_8.dll", exports=exports[:1]))


def fatbin_container(entries):
    """A fatbinary container as nvcc writes one: (kind, arch, (major, minor),
    flags, payload) entries, 64-byte headers (72 for PTX)."""
    body = b""
    for kind, arch, (major, minor), flags, payload in entries:
        hs = 72 if kind == 1 else 64
        h = bytearray(hs)
        struct.pack_into("<HHIQ", h, 0, kind, 0x101, hs, len(payload))
        struct.pack_into("<HHI", h, 24, minor, major, arch)
        struct.pack_into("<Q", h, 40, flags | 0x11)
        body += bytes(h) + payload
    return struct.pack("<IHHQ", 0xBA55ED50, 1, 16, len(body)) + body


def seeds_fatbin(out):
    sass = lambda arch, fl=0: (2, arch, (0, 0), fl, b"\x7fELF cubin" + b"\0" * 20)
    ptx = lambda arch, v: (1, arch, v, 0, b".version 8.4\n.target sm_%d\n" % arch)
    write(out, "fatbin", "sass-ptx", fatbin_container(
        [sass(75), sass(80), sass(90), ptx(90, (8, 4))]))
    write(out, "fatbin", "variants", fatbin_container(
        [sass(90, 0x100000), sass(100, 0x200000), (2, 120, (0, 0), 0x2000, b"zz")])
        + b"\0" * 16 + fatbin_container([ptx(80, (7, 0)), (16, 0, (0, 0), 0, b"lto")]))
    write(out, "fatbin", "empty-container", fatbin_container([]))


# ---- archives ----------------------------------------------------------------

def zip_bytes(entries, top=TOP_WIN, method=zipfile.ZIP_STORED):
    """entries: (path, data) files, (path, None) folders, (path, '->t')
    symlinks (Unix mode in the external attributes)."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        for path, data in entries:
            name = top + "/" + path if top else path
            zi = zipfile.ZipInfo(name, ZIP_TIME)
            if data is None:
                zi.external_attr = (0o40755 << 16) | 0x10
                z.writestr(zi, b"")
            elif isinstance(data, str) and data.startswith("->"):
                zi.create_system = 3
                zi.external_attr = 0o120777 << 16
                z.writestr(zi, data[2:].encode())
            else:
                zi.compress_type = method
                zi.external_attr = 0o100644 << 16
                z.writestr(zi, data)
    return b.getvalue()


def tar_bytes(entries, top=TOP_LINUX, fmt=tarfile.USTAR_FORMAT):
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=fmt) as t:
        for path, data in entries:
            ti = tarfile.TarInfo(top + "/" + path if top else path)
            ti.mtime = TAR_MTIME
            ti.uname = ti.gname = ""
            if data is None:
                ti.type = tarfile.DIRTYPE
                ti.mode = 0o755
                t.addfile(ti)
            elif isinstance(data, str) and data.startswith("->"):
                ti.type = tarfile.SYMTYPE
                ti.linkname = data[2:]
                ti.mode = 0o777
                t.addfile(ti)
            elif isinstance(data, str) and data.startswith("=>"):
                ti.type = tarfile.LNKTYPE
                ti.linkname = data[2:]
                t.addfile(ti)
            else:
                ti.size = len(data)
                ti.mode = 0o644
                t.addfile(ti, io.BytesIO(data))
    return b.getvalue()


HDR = b"/* cudnn.h */\n#define CUDNN_MAJOR 8\n"
LINUX = [("include", None), ("include/cudnn.h", HDR),
         ("include/cudnn_version.h", b"#define CUDNN_MINOR 5\n"),
         ("lib", None), ("lib/libcudnn.so.8.5.0", b"\x7fELF fake\n"),
         ("lib/libcudnn.so.8", "->libcudnn.so.8.5.0"),
         ("lib/libcudnn.so", "->libcudnn.so.8"),
         ("lib/libcudnn_static.a", b"!<arch>\n"), ("LICENSE", b"licence\n")]
WIN = [("bin/", None), ("bin/cudnn64_8.dll", b"MZ fake\n"),
       ("include/cudnn.h", HDR), ("lib/x64/cudnn.lib", b"!<arch>\n"),
       ("LICENSE", b"licence\n")]


def pax_long(path, key="path"):
    """A tar whose pax header gives one member a long path."""
    b = io.BytesIO()
    with tarfile.open(fileobj=b, mode="w", format=tarfile.PAX_FORMAT) as t:
        ti = tarfile.TarInfo("x")
        ti.mtime = TAR_MTIME
        ti.uname = ti.gname = ""
        ti.pax_headers = {key: path}
        ti.size = len(HDR)
        t.addfile(ti, io.BytesIO(HDR))
    return b.getvalue()


def seeds_archives(out):
    tars = {
        "linux-ustar": tar_bytes(LINUX),
        "linux-gnu": tar_bytes(LINUX, fmt=tarfile.GNU_FORMAT),
        "linux-pax": tar_bytes(LINUX, fmt=tarfile.PAX_FORMAT),
        "gnu-longname": tar_bytes(
            [("include/cudnn.h", HDR), ("include/" + "n" * 120 + ".h", HDR)],
            fmt=tarfile.GNU_FORMAT),
        "pax-path": pax_long(TOP_LINUX + "/include/cudnn.h"),
        "evil-folder": tar_bytes([("include/cudnn.h", HDR),
                                  ("include/evil/x.h", HDR),
                                  ("lib/evil/libx.so", HDR)]),
        # files where fuzz_extract's tree holds links to outside it
        "evil-links": tar_bytes([("include/cudnn.h", HDR),
                                 ("include/cudnn_evil.h", HDR),
                                 ("lib/libevil.so.1", HDR)]),
        "evil-links-sym": tar_bytes([("include/cudnn.h", HDR),
                                     ("include/cudnn_evil.h", "->cudnn.h"),
                                     ("lib/libevil.so.1.0", HDR),
                                     ("lib/libevil.so.1", "->libevil.so.1.0")]),
        "escape-link": tar_bytes([("include/cudnn.h", HDR),
                                  ("lib/libx.so", "->../../outside/keep.h")]),
        "hardlink": tar_bytes([("include/cudnn.h", HDR),
                               ("include/h.h", "=>" + TOP_LINUX + "/include/cudnn.h")]),
        "dotdot": tar_bytes([("include/cudnn.h", HDR), ("../../x", HDR)]),
        "case-dup": tar_bytes([("include/cudnn.h", HDR),
                               ("include/CUDNN.h", HDR)]),
    }
    for name, data in tars.items():
        write(out, "tarscan", name, data)
        write(out, "extract", "tar-" + name, data)
    write(out, "extract", "tgz-linux", gzip.compress(tars["linux-ustar"], mtime=0))
    zips = {
        "win-stored": zip_bytes(WIN),
        "win-deflate": zip_bytes(WIN, method=zipfile.ZIP_DEFLATED),
        "old-cuda-top": zip_bytes(WIN, top="cuda"),
        "evil-folder": zip_bytes([("include/cudnn.h", HDR),
                                  ("bin/evil/x.dll", HDR)]),
        "evil-links": zip_bytes([("include/cudnn.h", HDR),
                                 ("bin/evil.dll", HDR),
                                 ("lib/x64/evil.lib", HDR)]),
        "zip-symlink": zip_bytes([("include/cudnn.h", HDR),
                                  ("bin/x.dll", "->../../outside")]),
        "case-dup": zip_bytes([("include/cudnn.h", HDR),
                               ("BIN/A.DLL", HDR), ("bin/a.dll", HDR)]),
        "linux-in-zip": zip_bytes(LINUX, top=TOP_LINUX),
    }
    for name, data in zips.items():
        write(out, "zipcd", name, data)
        write(out, "extract", "zip-" + name, data)
    write(out, "zipcd", "junk-before", b"MZjunk" * 10 + zips["win-stored"])
    write(out, "zipcd", "empty", b"PK\x05\x06" + b"\0" * 18)


# ---- raw deflate streams (the zip inflater) -----------------------------------

def seeds_inflate(out):
    import zlib
    text = HDR * 20 + bytes(range(256)) + b"\0" * 300
    cases = []
    for level in (0, 1, 6, 9):
        c = zlib.compressobj(level, zlib.DEFLATED, -15)
        cases.append(("level%d" % level, c.compress(text) + c.flush()))
    for name, strat in (("fixed", zlib.Z_FIXED), ("huffman", zlib.Z_HUFFMAN_ONLY),
                        ("rle", zlib.Z_RLE)):
        c = zlib.compressobj(6, zlib.DEFLATED, -15, 8, strat)
        cases.append((name, c.compress(text) + c.flush()))
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    cases.append(("empty", c.flush()))
    c = zlib.compressobj(6, zlib.DEFLATED, -15)
    two = c.compress(text[:100]) + c.flush(zlib.Z_FULL_FLUSH) + \
        c.compress(text[100:]) + c.flush()
    cases.append(("flushed", two))
    for name, data in list(cases):
        write(out, "inflate", name, data)
    write(out, "inflate", "trailing", cases[2][1] + b"PK\x07\x08")
    write(out, "inflate", "truncated", cases[2][1][:-3])


# ---- regressions ----------------------------------------------------------

def regressions():
    """Inputs (or inputs of the same shape) that once broke a property or a
    sanitizer, by target; each fixed in the commit that added it here
    (docs/fuzzing.md lists them)."""
    bad_sum = bytearray(tar_bytes([("include/cudnn.h", HDR)]))
    bad_sum[148:156] = b"0000000\0"      # a header checksum that is wrong
    return {
        # tarscan.c: after a failure, a zero-length feed returned 0
        "tarscan": [bytes(bad_sum)],
        # inflate.c: no compressed bytes, stepped from a null input pointer
        # (UBSan: applying zero offset to null pointer)
        "inflate": [b"",
                    # inflate_isal.c: ISA-L wrapped avail_in below zero on a
                    # back-reference before the start; one byte too many
                    # counted as consumed
                    bytes.fromhex("42253001007ffc76e923185d250b2c0b")],
        # receipt.c: a schema_version (or cuda_major) beyond int reached an
        # int cast (UBSan: float-cast-overflow)
        "receipt": [b'{\n "schema_version":000000000000000008933093716,\n'
                    b' "files": []\n}',
                    b'{"schema_version": 1, "manifest": {"cuda_major": '
                    b'1e15}, "target": {}, "archive": {}, "files": []}'],
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--manifests", help="the shipped manifests' folder")
    ap.add_argument("out")
    a = ap.parse_args()
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    seeds_pathsafe(a.out)
    seeds_manifest(a.out, a.manifests)
    seeds_redistrib(a.out)
    seeds_receipt(a.out)
    seeds_journal(a.out)
    seeds_elf(a.out)
    seeds_pe(a.out)
    seeds_fatbin(a.out)
    seeds_archives(a.out)
    seeds_inflate(a.out)
    for target, inputs in regressions().items():
        for i, data in enumerate(inputs):
            write(a.out, target, "regress-%02d" % i, data)
    n = sum(len(fs) for _, _, fs in os.walk(a.out))
    print("make_seeds: %d inputs in %s" % (n, a.out))


if __name__ == "__main__":
    main()
