"""Fake cuDNN archives and their exact manifests, on disk: the NVIDIA layout
of the Linux tarball and the Windows zip with synthetic contents of the
right kind (linux_entries(), windows_entries(), make_manifest()), Fixture
(one archive and its manifest written out), and FIX, the standard fixtures
(FIX.linux, FIX.windows, FIX.linux_old, ...) built once per test process on
first use.
"""

import collections
import copy
import json
import os
import struct

from archives import DIR, FILE, SYMLINK, Entry, tar_xz_bytes, zip_bytes
from cddenv import WORK_ROOT
from layoutmodel import (CHECK_SYMBOLS, CHECK_SYMBOLS9, HEADERS, LINUX,
                         MACHINE, SUBLIBS, WINDOWS, dest_of, family,
                         is_windows, role_of)
from synth import big_bytes, sha256_bytes, synth_bytes, synth_size


def elf_header(machine, elf_class=2):
    """A minimal valid ELF header of a shared object (ET_DYN) for machine
    (62 x86-64, 183 AArch64), little-endian, no program or section headers:
    what a machine check reads, nothing a loader could run."""
    h = bytearray(64)
    h[0:4] = b"\x7fELF"
    h[4], h[5], h[6] = elf_class, 1, 1
    struct.pack_into("<HHI", h, 16, 3, machine, 1)
    struct.pack_into("<HHHHHH", h, 52, 64, 56, 0, 64, 0, 0)
    return bytes(h)


def pe_header(machine):
    """MZ, e_lfanew 0x40, "PE\\0\\0" and the COFF machine (0x8664 x64,
    0xAA64 ARM64) of a DLL: what a machine check reads."""
    h = bytearray(0x40)
    h[0:2] = b"MZ"
    struct.pack_into("<I", h, 0x3C, 0x40)
    return bytes(h) + b"PE\0\0" + struct.pack("<HHIIIHH", machine, 0, 0, 0, 0,
                                              0, 0x2022)


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
        return pe_header(MACHINE[platform]) + big_bytes(seed, n, block)
    if ".so" in base:
        n = (3 << 20) if big else synth_size(seed, 4000, 16000)
        return elf_header(MACHINE[platform]) + big_bytes(seed, n, block)
    raise ValueError(rel)


def linux_entries(version="8.5.0.96", cuda_tag="11", sublibs=SUBLIBS,
                  headers=HEADERS, salt="", big=False, platform=LINUX):
    """(top folder, entries) of a Linux tarball laid out like NVIDIA's
    (platform linux-sbsa / linux-aarch64: the same layout, AArch64 ELF)."""
    top = "cudnn-%s-%s_cuda%s-archive" % (platform, version, cuda_tag)
    so_ver = ".".join(version.split(".")[:3])
    so_major = version.split(".")[0]

    def f(rel, mode=0o644):
        return Entry(top + "/" + rel, FILE,
                     _file_bytes(platform, version, rel, salt, big), mode=mode)

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
                    headers=HEADERS, salt="", big=False, platform=WINDOWS,
                    dll_dir="bin"):
    """(top folder, entries) of a Windows zip laid out like NVIDIA's. dll_dir:
    "bin" (up to cuDNN 9.22) or "bin/x64" (9.23 on)."""
    top = "cudnn-%s-%s_cuda%s-archive" % (platform, version, cuda_tag)
    major = version.split(".")[0]

    def f(rel):
        return Entry(top + "/" + rel, FILE,
                     _file_bytes(platform, version, rel, salt, big))

    entries = [Entry(top + "/", DIR), Entry(top + "/bin/", DIR)]
    if dll_dir != "bin":
        entries.append(Entry(top + "/" + dll_dir + "/", DIR))
    dlls = ["cudnn64_%s.dll" % major] + ["cudnn_%s64_%s.dll" % (s, major)
                                          for s in sublibs]
    entries += [f(dll_dir + "/" + d) for d in dlls]
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


def verify_section(platform, version, sublibs, dll_dir="bin"):
    major, minor, patch = (int(x) for x in version.split(".")[:3])
    if not is_windows(platform):
        main = "lib/libcudnn.so.%d" % major
        sub = ["lib/libcudnn_%s.so.%d" % (s, major) for s in sublibs]
    else:
        main = "%s/cudnn64_%d.dll" % (dll_dir, major)
        sub = ["%s/cudnn_%s64_%d.dll" % (dll_dir, s, major) for s in sublibs]
    checks = CHECK_SYMBOLS if major < 9 else CHECK_SYMBOLS9
    subs = []
    for l, s in zip(sub, sublibs):
        # null: no version-check export (cuDNN 9's engines, heuristic).
        subs.append({"library": l, "check_symbol": checks.get(s)})
    return {
        "version_number": major * (1000 if major < 9 else 10000)
        + minor * 100 + patch,
        "library": main,
        "version_symbol": "cudnnGetVersion",
        "cudart_symbol": "cudnnGetCudartVersion",
        "mismatch_status": 14 if major < 9 else 1002,
        "sublibraries": subs,
    }


def make_manifest(platform, version, cuda_major, filename, top, entries,
                  archive_data=None, sublibs=SUBLIBS, files_exact=True,
                  dll_dir="bin"):
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
    sub = platform
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
        "verify": verify_section(platform, version, sublibs, dll_dir),
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
                 sublibs=SUBLIBS, preset=1, dll_dir="bin"):
        self.folder, self.platform, self.version = folder, platform, version
        self.cuda_major, self.top, self.entries = cuda_major, top, entries
        self.sublibs, self.dll_dir = sublibs, dll_dir
        linux = not is_windows(platform)
        ext = ".tar.xz" if linux else ".zip"
        self.filename = top + ext
        data = tar_xz_bytes(entries, preset) if linux else zip_bytes(entries)
        self.path = write_bytes(os.path.join(folder, self.filename), data)
        self.sha256, self.size = sha256_bytes(data), len(data)
        self.files = collections.OrderedDict()
        for e in entries:
            rel = strip_top(e.name, top)
            if rel and e.kind != DIR:
                self.files[rel] = e
        self.manifest = make_manifest(platform, version, cuda_major,
                                      self.filename, top, entries, data,
                                      sublibs, dll_dir=dll_dir)
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
