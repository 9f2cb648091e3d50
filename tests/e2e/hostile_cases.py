"""The table of hostile archives (docs/security.md, The archive checks;
issue 2): each case is the good Linux tarball or Windows zip with one thing
changed. Used by test_hostile.py (install and `manifest create` must reject
each one with exit 3 and leave everything untouched) and by test_fixtures.py
(the builders themselves are checked without the binary).

A case is built by Case.build(fixture, folder, outside):
  mutate(entries, ctx) -> entries   change the list of members, and/or
  raw(bytes, ctx) -> bytes           corrupt the archive file itself
The manifest used is the good archive's, re-pinned to the hostile archive's
sha256 and size (repin=True, the default): otherwise every case would be
stopped by the archive checksum alone and the entry checks would never run.
Cases with repin=False test that pin.
"""

import os

import archives
import fixtures
import forge
import synth
from archives import CHARDEV, DIR, FIFO, FILE, HARDLINK, SYMLINK, Entry
from layoutmodel import LINUX

UNSAFE = ("UNSAFE",)
# The unsafe part sits in the component that strip_components removes (or
# the name cannot be split at all): rejecting the raw name (UNSAFE) or the
# stripped one as not in the manifest (ARCHIVE) are both correct.
UNSAFE_OR_UNLISTED = ("UNSAFE", "ARCHIVE")
MISMATCH = ("ARCHIVE",)
SIZE_OR_HASH = ("ARCHIVE", "CHECKSUM")
CORRUPT = ("CORRUPT", "ARCHIVE")
BOMB_SIZE = 50 << 20


class Ctx(object):
    """What a mutation may use: the top folder, the absolute path of the
    folder beside the tree (escapes aim there so they can be seen), the good
    fixture."""

    def __init__(self, fixture, outside):
        self.fixture, self.top, self.outside = fixture, fixture.top, outside

    def n(self, rel):
        return self.top + "/" + rel


class Section(object):
    """A heading in the CASES list: the cases after it, up to the next one,
    are its group (case.group), which test_hostile.py runs as one ctest
    entry so that a failure names its group."""

    def __init__(self, name, title):
        self.name, self.title = name, title


class Case(object):
    def __init__(self, name, base, why, mutate=None, raw=None, codes=UNSAFE,
                 repin=True, create=False, bomb=False, mention=None):
        self.name, self.base, self.why = name, base, why
        self.mutate, self.raw, self.codes = mutate, raw, codes
        self.repin, self.create, self.bomb = repin, create, bomb
        self.mention = mention
        self.group = None       # the Section it is under (_sections)

    def fixture(self):
        return getattr(fixtures.FIX, self.base)

    def entries(self, ctx):
        entries = list(ctx.fixture.entries)
        if self.mutate:
            entries = self.mutate(entries, ctx)
        return entries

    def archive_bytes(self, ctx):
        fx = ctx.fixture
        entries = self.entries(ctx)
        if self.mutate is None:
            with open(fx.path, "rb") as f:
                data = f.read()
        elif fx.platform == LINUX:
            data = archives.tar_xz_bytes(entries, preset=0 if self.bomb else 1)
        else:
            data = archives.zip_bytes(entries)
        if self.raw:
            data = self.raw(data, ctx)
        return data

    def build(self, folder, outside):
        """Write the hostile archive (under the real file name) and the
        manifest to use into folder. Returns (archive, manifest, ctx)."""
        fx = self.fixture()
        ctx = Ctx(fx, outside)
        data = self.archive_bytes(ctx)
        archive = fixtures.write_bytes(os.path.join(folder, fx.filename), data)
        if self.repin:
            manifest = fx.manifest_variant(
                os.path.join(folder, "manifest.json"),
                sha256=synth.sha256_bytes(data), size=len(data))
        else:
            manifest = fx.manifest_path
        return archive, manifest, ctx

    def __repr__(self):
        return "<Case %s>" % self.name


# -- mutation helpers ----------------------------------------------------------

def add(*makers):
    """Append entries; each maker(ctx) -> Entry."""
    def mutate(entries, ctx):
        return entries + [m(ctx) for m in makers]
    return mutate


def add_file(name_fn, data=b"/* evil */\n", mode=0o644):
    return add(lambda ctx: Entry(name_fn(ctx), FILE, data, mode=mode))


def replace(rel, fn):
    """Replace the member at top/rel by fn(entry, ctx) (an Entry)."""
    def mutate(entries, ctx):
        out, hit = [], False
        for e in entries:
            if e.name == ctx.n(rel):
                out.append(fn(e, ctx))
                hit = True
            else:
                out.append(e)
        if not hit:
            raise KeyError(rel)
        return out
    return mutate


def rename(rel, new_name_fn):
    return replace(rel, lambda e, ctx: e.copy(name=new_name_fn(ctx)))


def remove(rel):
    def mutate(entries, ctx):
        out = [e for e in entries if e.name != ctx.n(rel)]
        if len(out) != len(entries) - 1:
            raise KeyError(rel)
        return out
    return mutate


def duplicate(rel, new_name_fn=None, data=None):
    """Append a second member named like rel (or new_name_fn(ctx)), with
    rel's bytes or data."""
    def mutate(entries, ctx):
        src = [e for e in entries if e.name == ctx.n(rel)][0]
        e = src.copy()
        if new_name_fn:
            e.name = new_name_fn(ctx)
        if data is not None:
            e.data = data
        return entries + [e]
    return mutate


def retarget(rel, target_fn):
    return replace(rel, lambda e, ctx: e.copy(target=target_fn(ctx)))


def chain(*mutations):
    def mutate(entries, ctx):
        for m in mutations:
            entries = m(entries, ctx)
        return entries
    return mutate


def with_data(rel, fn):
    return replace(rel, lambda e, ctx: e.copy(data=fn(e.data)))


def _xz_flip_middle(data, ctx):
    return archives.flip_byte(data, len(data) // 2)


def _append_byte(data, ctx):
    return data + b"\0"


def _other_archive(data, ctx):
    with open(fixtures.FIX.linux_old.path, "rb") as f:
        return f.read()


def _windows_zip_bytes(data, ctx):
    with open(fixtures.FIX.windows.path, "rb") as f:
        return f.read()


W_DLL = "bin/cudnn64_8.dll"
L_SO = "lib/libcudnn.so.8.5.0"


# -- reader differentials (issue 9): archives built by forge.py -------------------
# Each is a raw builder (the names in them are not what an honest reader
# lists, so test_fixtures' name check does not apply).

def forged_zip(change, prefix=b"", adjust=False, suffix=b""):
    """The good zip's members, changed by change(members, ctx) in place."""
    def raw(data, ctx):
        ms = forge.members(ctx.fixture.entries)
        change(ms, ctx)
        return forge.zip_bytes(ms, prefix=prefix, adjust=adjust, suffix=suffix)
    return raw


def _member(ms, ctx, rel):
    return ms[forge.find(ms, ctx.n(rel))]


def _central_name_escape(ms, ctx):
    # unzip and Explorer write the central name; libarchive 3.6 took the
    # local one, a listed DLL.
    m = _member(ms, ctx, W_DLL)
    m["local_name"] = m["name"]
    m["name"] = forge._b(ctx.n("bin/../../../outside/evil.dll"))


def _overlapping(ms, ctx):
    ms.append(dict(name=forge._b(ctx.n("bin/evil.dll")), data=b"", method=8,
                   create_system=0, external_attr=0x20,
                   point_at=forge.find(ms, ctx.n(W_DLL))))


def _unicode_path(ms, ctx):
    _member(ms, ctx, W_DLL)["upath"] = forge._b(ctx.n("bin/../../outside/evil.dll"))


def _descriptor(**lie):
    def change(ms, ctx):
        m = _member(ms, ctx, "bin/cudnn_ops_infer64_8.dll")
        m["desc"] = 1
        m.update(lie)
    return change


def _nul_name(ms, ctx):
    m = _member(ms, ctx, "include/cudnn.h")
    m["name"] = forge._b(ctx.n("include/cudnn.h")) + b"\0/../../../outside/evil.h"


def _fifo_with_bytes(ms, ctx):
    # The listed header's own bytes, only the type differs.
    m = _member(ms, ctx, "include/cudnn_backend.h")
    m["create_system"], m["external_attr"] = 3, (0o010644) << 16


def _nul_long_name(data, ctx):
    # GNU long name 'include/cudnn.h\0/../..': libarchive cut it at the NUL
    # and installed it as the listed header.
    hostile = ctx.n("include/cudnn.h") + "\0" + "/.." * 40 + "/outside/evil.h"
    entries = [e.copy(name=hostile) if e.name == ctx.n("include/cudnn.h") else e
               for e in ctx.fixture.entries]
    return archives.tar_xz_bytes(entries)


def _nul_pax_path(data, ctx):
    name = ctx.n("include/cudnn.h")
    return archives.xz(forge.tar_pax_bytes(
        ctx.fixture.entries, {name: {"path": name + "\0/../../../outside/evil.h"}}))


SPARSE_MEMBERS = 20
SPARSE_SIZE = 1 << 30


def _sparse_bomb(data, ctx):
    # 20 GNU sparse members of 1 GiB each (holes): a few KB of tar.xz.
    raw = b"".join(forge.gnu_sparse_member(ctx.n("lib/libcudnn_sparse%d.a" % i),
                                           SPARSE_SIZE)
                   for i in range(SPARSE_MEMBERS))
    return archives.xz(forge.tar_open(ctx.fixture.entries) + raw +
                       forge.tar_end(), preset=6)


def _sparse_pax(data, ctx):
    # pax sparse 1.0: the map in the member's data, GNU.sparse.* records.
    name = ctx.n("lib/libcudnn_sparse.a")
    recs = [forge.pax_record("GNU.sparse.major", "1"),
            forge.pax_record("GNU.sparse.minor", "0"),
            forge.pax_record("GNU.sparse.name", name),
            forge.pax_record("GNU.sparse.realsize", str(SPARSE_SIZE))]
    member = forge._header(ctx.n("lib/GNUSparseFile.0/libcudnn_sparse.a"), b"0", 512)
    body = b"1\n%d\n1\n" % (SPARSE_SIZE - 1)
    return archives.xz(forge.tar_open(ctx.fixture.entries) +
                       forge.pax_header(recs) + member + body.ljust(512, b"\0") +
                       forge.tar_end(), preset=6)


def _pax_realsize(data, ctx):
    # A listed header of a few bytes that libarchive pads with zeros to 1 GiB.
    name = ctx.n("include/cudnn_backend.h")
    return archives.xz(forge.tar_pax_bytes(
        ctx.fixture.entries, {name: {"SCHILY.realsize": str(SPARSE_SIZE)}}))


def _gnu_realsize(data, ctx):
    # A regular GNU member whose header's real-size field says 1 GiB: the
    # reader pads its few bytes with zeros (no 'S' type needed).
    raw = bytearray(archives.tar_bytes(ctx.fixture.entries))
    name = forge._b(ctx.n("include/cudnn_backend.h"))
    pos = 0
    while raw[pos:pos + len(name)] != name or raw[pos + 156:pos + 157] != b"0":
        pos += 512
    raw[pos + 483:pos + 495] = b"%011o\0" % SPARSE_SIZE
    raw[pos + 148:pos + 156] = b" " * 8
    raw[pos + 148:pos + 156] = b"%06o\0 " % sum(raw[pos:pos + 512])
    return archives.xz(bytes(raw))


SPARSE_MAP_ENTRIES = 4000000


def _sparse_huge_map(data, ctx):
    # A pax sparse map of 4 million entries (libarchive once built it, 200 MB,
    # before any name check).
    smap = ",".join(["0,1"] * (SPARSE_MAP_ENTRIES // 2))
    recs = [forge.pax_record("GNU.sparse.size", str(SPARSE_SIZE)),
            forge.pax_record("GNU.sparse.numblocks", str(SPARSE_MAP_ENTRIES // 2)),
            forge.pax_record("GNU.sparse.map", smap)]
    return archives.xz(forge.tar_open(ctx.fixture.entries) +
                       forge.pax_header(recs) +
                       forge._header(ctx.n("lib/libcudnn_map.a"), b"0", 0) +
                       forge.tar_end(), preset=6)


def _junk_before(data, ctx):
    return b"MZ" + b"\0" * 510 + data          # offsets left as they were


def _junk_after(data, ctx):
    return data + b"appended after the end record\n"

CASES = [
    Section("escapes", "names that leave the tree"),
    Case("dotdot_escape", "linux", "'..' climbs out of include/",
         add_file(lambda c: c.n("include/../../outside/evil.h")), create=True),
    Case("dotdot_after_top", "windows", "'..' right after the top folder",
         add_file(lambda c: c.n("../../outside/evil.dll")), create=True),
    Case("dotdot_replacing_member", "linux",
         "a listed header renamed so that it climbs out",
         rename("include/cudnn.h", lambda c: c.n("include/../../../outside/include/cudnn.h")),
         create=True),
    Case("absolute_path", "linux", "an absolute name aimed beside the tree",
         add_file(lambda c: c.outside + "/evil.h"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("absolute_after_top", "linux", "'//' after the top folder makes the rest absolute",
         add_file(lambda c: c.top + "/" + c.outside + "/evil.h"), create=True),
    Case("drive_letter", "windows", "a drive-relative name (C:evil.dll)",
         add_file(lambda c: c.n("bin/C:evil.dll")), create=True),
    Case("zip_windows_absolute", "windows", "C:/Windows/evil.dll in a zip",
         add_file(lambda c: "C:/Windows/evil.dll"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_windows_absolute_backslash", "windows", "C:\\Windows\\evil.dll in a zip",
         add_file(lambda c: "C:\\Windows\\System32\\evil.dll"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("unc_path", "windows", "a UNC name \\\\server\\share\\evil.dll",
         add_file(lambda c: "\\\\server\\share\\evil.dll"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("unc_after_top", "windows", "a UNC name after the top folder",
         add_file(lambda c: c.n("\\\\server\\share\\evil.dll")), create=True),
    Case("backslash", "linux", "a backslash inside a name",
         add_file(lambda c: c.n("include\\cudnn_evil.h")), create=True),
    Case("backslash_traversal", "windows", "..\\..\\ climbs out on Windows",
         add_file(lambda c: c.n("bin/..\\..\\..\\outside\\evil.dll")), create=True),
    Section("windows_names", "names Windows treats specially"),
    Case("ntfs_stream", "windows", "an NTFS alternate data stream of a header",
         add_file(lambda c: c.n("include/cudnn.h:evil")), create=True),
    Case("reserved_nul", "windows", "the device name NUL",
         add_file(lambda c: c.n("bin/NUL")), create=True),
    Case("reserved_con_h", "linux", "con.h is the console device on Windows",
         add_file(lambda c: c.n("include/con.h")), create=True),
    Case("reserved_com1_dll", "windows", "COM1.dll is a serial port on Windows",
         add_file(lambda c: c.n("bin/COM1.dll")), create=True),
    # Non-ASCII: a tool running in the C locale may also refuse the name as
    # unconvertible (CORRUPT); either way it must not get in.
    Case("reserved_superscript", "windows", "COM\u00b9.dll is a device too",
         add_file(lambda c: c.n("bin/COM\u00b9.dll")), codes=UNSAFE + ("CORRUPT",),
         create=True),
    Case("trailing_dot", "windows", "cudnn64_8.dll. aliases cudnn64_8.dll",
         duplicate(W_DLL, lambda c: c.n(W_DLL + ".")), create=True),
    Case("trailing_space", "linux", "'cudnn.h ' aliases cudnn.h on Windows",
         add_file(lambda c: c.n("include/cudnn.h ")), create=True),
    Case("short_name_folder", "windows", "an 8.3 short name (PROGRA~1)",
         add_file(lambda c: c.n("PROGRA~1/evil.dll")), create=True),
    Case("short_name_file", "windows", "an 8.3 alias of a listed DLL",
         duplicate(W_DLL, lambda c: c.n("bin/CUDNN6~1.DLL")), create=True),
    Case("control_char_escape", "linux", "an ANSI escape sequence in a name",
         add_file(lambda c: c.n("include/cudnn\x1b[2J.h")), create=True),
    Case("control_char_newline", "linux", "a newline in a name",
         add_file(lambda c: c.n("include/cudnn.h\nevil.h")), create=True),
    Case("invalid_utf8", "linux", "bytes that are not UTF-8",
         add_file(lambda c: c.n("include/cudnn\udcff\udcfe.h")), create=True),
    Case("forbidden_chars", "linux", "characters Windows forbids: < > | ? * \"",
         add_file(lambda c: c.n('include/cud<n>n|"?*.h')), create=True),
    Case("dot_component", "linux", "'.' component in a listed member's name",
         rename("include/cudnn.h", lambda c: c.n("include/./cudnn.h")), create=True),
    Case("empty_component", "linux", "'//' inside a listed member's name",
         rename("include/cudnn.h", lambda c: c.n("include//cudnn.h")), create=True),
    Case("long_name", "linux", "a 5000-character name",
         add_file(lambda c: c.n("include/" + "a" * 5000 + ".h")), create=True),
    Case("long_component", "linux", "one 300-byte component",
         add_file(lambda c: c.n("include/" + "b" * 300 + ".h")), create=True),
    Section("links", "links"),
    Case("symlink_escape", "linux", "a listed link retargeted at ../../outside",
         retarget("lib/libcudnn.so.8", lambda c: "../../outside/libcudnn.so.8.5.0"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("symlink_absolute", "linux", "a listed link retargeted at an absolute path",
         retarget("lib/libcudnn.so", lambda c: c.outside + "/sentinel.txt"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("symlink_other_folder", "linux", "a link into another folder",
         retarget("lib/libcudnn.so", lambda c: "../include/cudnn.h"),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("symlink_to_parent", "linux", "a link to '..'",
         retarget("lib/libcudnn_ops_infer.so", lambda c: ".."),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("symlink_wrong_target", "linux", "a listed link pointing at another (safe) name",
         retarget("lib/libcudnn.so", lambda c: "libcudnn_ops_infer.so.8"),
         codes=UNSAFE_OR_UNLISTED, mention="libcudnn.so"),
    Case("symlink_undeclared", "linux", "a link the manifest does not list",
         add(lambda c: Entry(c.n("lib/libcudnn_extra.so"), SYMLINK,
                             target="libcudnn.so.8.5.0")),
         codes=UNSAFE_OR_UNLISTED, mention="libcudnn_extra.so"),
    Case("symlink_loop_replacing_file", "linux",
         "the real library replaced by a link that loops back",
         replace("lib/libcudnn_ops_infer.so.8.5.0",
                 lambda e, c: Entry(e.name, SYMLINK, target="libcudnn_ops_infer.so.8")),
         codes=UNSAFE_OR_UNLISTED),
    Case("symlink_then_write_through", "linux",
         "lib/x -> outside, then lib/x/evil written through it",
         add(lambda c: Entry(c.n("lib/x"), SYMLINK, target=c.outside),
             lambda c: Entry(c.n("lib/x/evil.so"), FILE, b"evil")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("symlink_then_write_through_relative", "linux",
         "lib/y -> ../../outside, then lib/y/libcudnn.so.8.5.0",
         add(lambda c: Entry(c.n("lib/y"), SYMLINK, target="../../outside"),
             lambda c: Entry(c.n("lib/y/libcudnn.so.8.5.0"), FILE, b"evil")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_symlink", "windows", "a Unix symlink member in the zip",
         add(lambda c: Entry(c.n("bin/zlibwapi.dll"), SYMLINK,
                             target="../../outside/sentinel.txt")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("hardlink_outside", "linux", "a hard link to a file beside the tree",
         add(lambda c: Entry(c.n("lib/libcudnn_evil.so"), HARDLINK,
                             target="../../outside/sentinel.txt")), create=True),
    Case("hardlink_replacing_member", "linux", "a listed header as a hard link",
         replace("include/cudnn_version.h",
                 lambda e, c: Entry(e.name, HARDLINK, target=c.n("include/cudnn.h"))),
         create=True),
    Case("fifo", "linux", "a FIFO in place of a listed header",
         replace("include/cudnn_backend.h", lambda e, c: Entry(e.name, FIFO)),
         create=True),
    Case("char_device", "linux", "a character device (1,3: /dev/null)",
         replace("lib/libcudnn_cnn_train_static.a", lambda e, c: Entry(e.name, CHARDEV)),
         create=True),
    # libarchive may read a zip "FIFO" as an empty regular file: then it is
    # only a size mismatch, but never a FIFO in the tree.
    Case("zip_fifo", "windows", "a FIFO member (Unix attributes) in the zip",
         replace("include/cudnn_backend.h", lambda e, c: Entry(e.name, FIFO)),
         codes=UNSAFE_OR_UNLISTED),
    Section("duplicates", "duplicates"),
    Case("duplicate_exact", "linux", "the same header twice",
         duplicate("include/cudnn.h"), codes=UNSAFE_OR_UNLISTED, create=True),
    Case("duplicate_other_bytes", "linux", "a second copy of a library with other bytes",
         duplicate(L_SO, data=b"\x7fELF evil"), codes=UNSAFE_OR_UNLISTED + ("CHECKSUM",),
         create=True),
    Case("duplicate_case", "linux", "include/CUDNN.h beside include/cudnn.h",
         duplicate("include/cudnn.h", lambda c: c.n("include/CUDNN.h")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_duplicate_case", "windows", "bin/CUDNN64_8.DLL beside bin/cudnn64_8.dll",
         duplicate(W_DLL, lambda c: c.n("bin/CUDNN64_8.DLL")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_duplicate_exact", "windows", "the same DLL twice",
         duplicate(W_DLL), codes=UNSAFE_OR_UNLISTED, create=True),
    # One name on NTFS by Unicode simple case folding, beyond ASCII (install
    # may stop first at the unlisted name; manifest create must find the pair).
    Case("zip_case_fold_armenian", "windows", "include/\u0531.h beside include/\u0561.h",
         add(lambda c: Entry(c.n("include/\u0531.h"), FILE, b"/* one */\n"),
             lambda c: Entry(c.n("include/\u0561.h"), FILE, b"/* two */\n")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_case_fold_caron", "windows", "include/\u01cd.h beside include/\u01ce.h",
         add(lambda c: Entry(c.n("include/\u01cd.h"), FILE, b"/* one */\n"),
             lambda c: Entry(c.n("include/\u01ce.h"), FILE, b"/* two */\n")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_case_fold_greek_tonos", "windows", "include/\u0386.h beside include/\u03ac.h",
         add(lambda c: Entry(c.n("include/\u0386.h"), FILE, b"/* one */\n"),
             lambda c: Entry(c.n("include/\u03ac.h"), FILE, b"/* two */\n")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Case("zip_case_fold_roman_numeral", "windows", "include/\u2160.h beside include/\u2170.h",
         add(lambda c: Entry(c.n("include/\u2160.h"), FILE, b"/* one */\n"),
             lambda c: Entry(c.n("include/\u2170.h"), FILE, b"/* two */\n")),
         codes=UNSAFE_OR_UNLISTED, create=True),
    Section("mismatches", "members that do not match the manifest"),
    Case("unexpected_file", "linux", "a header the manifest does not list",
         add_file(lambda c: c.n("include/extra.h")), codes=MISMATCH, mention="extra.h"),
    Case("zip_unexpected_file", "windows", "a DLL the manifest does not list",
         add_file(lambda c: c.n("bin/zlibwapi.dll"), b"MZ evil"), codes=MISMATCH,
         mention="zlibwapi.dll"),
    Case("missing_file", "linux", "a listed library absent",
         remove("lib/libcudnn_adv_train.so.8.5.0"), codes=MISMATCH,
         mention="libcudnn_adv_train.so.8.5.0"),
    Case("missing_symlink", "linux", "a listed link absent",
         remove("lib/libcudnn.so"), codes=MISMATCH),
    Case("zip_missing_file", "windows", "a listed DLL absent",
         remove("bin/cudnn_cnn_infer64_8.dll"), codes=MISMATCH,
         mention="cudnn_cnn_infer64_8.dll"),
    Case("dir_in_place_of_file", "linux", "a folder where a header should be",
         replace("include/cudnn_version.h", lambda e, c: Entry(e.name + "/", DIR)),
         codes=UNSAFE_OR_UNLISTED),
    Case("bomb", "linux", "50 MB of zeros where the manifest says a few KiB",
         with_data("include/cudnn_backend.h", lambda d: bytes(BOMB_SIZE)),
         codes=SIZE_OR_HASH, bomb=True, mention="cudnn_backend.h"),
    Case("zip_bomb", "windows", "50 MB of zeros in a deflated member",
         with_data("bin/cudnn_adv_train64_8.dll", lambda d: bytes(BOMB_SIZE)),
         codes=SIZE_OR_HASH, bomb=True),
    Case("larger_by_one", "linux", "a header one byte longer",
         with_data("include/cudnn_ops_train.h", lambda d: d + b"\n"), codes=SIZE_OR_HASH),
    Case("smaller", "linux", "a library 100 bytes short",
         with_data("lib/libcudnn_cnn_infer.so.8.5.0", lambda d: d[:-100]),
         codes=SIZE_OR_HASH),
    Case("empty_member", "linux", "a listed header with no bytes",
         with_data("include/cudnn_adv_infer.h", lambda d: b""), codes=SIZE_OR_HASH),
    Case("flipped_byte", "linux", "one byte of a library changed",
         with_data(L_SO, lambda d: archives.flip_byte(d, len(d) // 3)),
         codes=("CHECKSUM",), mention="libcudnn.so.8.5.0"),
    Case("zip_flipped_byte", "windows", "one byte of a DLL changed",
         with_data(W_DLL, lambda d: archives.flip_byte(d, 100)), codes=("CHECKSUM",)),
    Case("swapped_contents", "linux", "two headers' bytes swapped",
         lambda entries, ctx: _swap(entries, ctx, "include/cudnn_ops_infer.h",
                                    "include/cudnn_ops_train.h"),
         codes=SIZE_OR_HASH),
    Section("broken", "broken archives"),
    Case("truncated_xz", "linux", "the tar.xz cut at 60%",
         raw=lambda d, c: archives.truncate(d, 0.6), codes=CORRUPT, create=True),
    Case("xz_flipped_byte", "linux", "a byte of the compressed stream changed",
         raw=_xz_flip_middle, codes=CORRUPT + ("CHECKSUM", "UNSAFE"), create=True),
    Case("zip_bad_crc", "windows", "a member's recorded CRC-32 is wrong",
         raw=lambda d, c: archives.zip_bad_crc(d, c.n("bin/cudnn_ops_infer64_8.dll")),
         codes=CORRUPT + ("CHECKSUM",), create=True),
    Case("zip_corrupt_data", "windows", "a byte of deflated data changed",
         raw=lambda d, c: archives.zip_corrupt_data(d, c.n("bin/cudnn_ops_train64_8.dll")),
         codes=CORRUPT + ("CHECKSUM",), create=True),
    Case("zip_cut_central_directory", "windows",
         "the zip cut inside its central directory",
         raw=lambda d, c: archives.zip_cut_central_directory(d), codes=CORRUPT,
         create=True),
    Case("zip_truncated", "windows", "the zip cut in half",
         raw=lambda d, c: archives.truncate(d, 0.5), codes=CORRUPT, create=True),
    Case("not_an_archive", "linux", "text named .tar.xz",
         raw=lambda d, c: b"this is not an archive\n" * 200, codes=CORRUPT, create=True),
    Case("empty_file", "linux", "an empty file named .tar.xz",
         raw=lambda d, c: b"", codes=CORRUPT),
    Case("zip_named_tar_xz", "linux", "the Windows zip given as the Linux tarball",
         raw=_windows_zip_bytes, codes=CORRUPT + UNSAFE),
    Section("differentials", "reader differentials (issue 9)"),
    Case("zip_central_name_escape", "windows",
         "central name bin/../../../outside/evil.dll, local header a listed DLL",
         raw=forged_zip(_central_name_escape), create=True, mention="evil.dll"),
    Case("zip_overlapping_entries", "windows",
         "a second central record pointing at a listed DLL's data",
         raw=forged_zip(_overlapping), codes=CORRUPT, create=True, mention="evil.dll"),
    Case("zip_unicode_path_disagrees", "windows",
         "a Unicode Path field naming ../../outside/evil.dll",
         raw=forged_zip(_unicode_path), create=True, mention="Unicode Path"),
    Case("zip_descriptor_lies_crc", "windows",
         "a data descriptor whose CRC-32 differs from the central record's",
         raw=forged_zip(_descriptor(desc_crc_xor=0x5A5A)), codes=CORRUPT,
         create=True, mention="data descriptor"),
    Case("zip_descriptor_lies_sizes", "windows",
         "a data descriptor whose sizes differ from the central record's",
         raw=forged_zip(_descriptor(desc_size_add=7)), codes=CORRUPT,
         create=True, mention="data descriptor"),
    Case("zip_junk_before", "windows", "512 bytes before the zip, offsets not adjusted",
         raw=_junk_before, codes=CORRUPT, create=True),
    Case("zip_junk_before_adjusted", "windows",
         "a self-extractor stub before the zip, offsets adjusted",
         raw=forged_zip(lambda ms, ctx: None, prefix=b"MZ stub\0" * 64, adjust=True),
         codes=CORRUPT, create=True, mention="before the first local header"),
    Case("zip_junk_after", "windows", "bytes after the end record",
         raw=_junk_after, codes=CORRUPT, create=True, mention="after the end"),
    Case("zip_nul_name", "windows", "include/cudnn.h\\0/../../../outside/evil.h",
         raw=forged_zip(_nul_name), create=True, mention="NUL"),
    Case("zip_fifo_with_bytes", "windows",
         "a FIFO (Unix mode) carrying a listed header's exact bytes",
         raw=forged_zip(_fifo_with_bytes), create=True, mention="cudnn_backend.h"),
    Case("gnu_long_name_nul", "linux", "a GNU long name include/cudnn.h\\0/../..",
         raw=_nul_long_name, create=True, mention="NUL"),
    Case("pax_path_nul", "linux", "a pax path include/cudnn.h\\0/../..",
         raw=_nul_pax_path, create=True, mention="NUL"),
    Case("sparse_bomb", "linux", "20 GNU sparse members of 1 GiB each in a few KB",
         raw=_sparse_bomb, create=True, bomb=True, mention="sparse"),
    Case("sparse_pax", "linux", "a pax (1.0) sparse member of 1 GiB",
         raw=_sparse_pax, create=True, bomb=True, mention="sparse"),
    Case("gnu_realsize_bomb", "linux", "a GNU header's real size pads a header to 1 GiB",
         raw=_gnu_realsize, create=True, bomb=True, mention="real size"),
    Case("pax_realsize_bomb", "linux", "SCHILY.realsize pads a header to 1 GiB of zeros",
         raw=_pax_realsize, create=True, bomb=True, mention="SCHILY.realsize"),
    Case("sparse_huge_map", "linux", "a pax sparse map of 4 million entries",
         raw=_sparse_huge_map, codes=CORRUPT + UNSAFE, create=True, bomb=True),
    Section("pin", "the archive pin"),
    Case("pin_mismatch_other_archive", "linux",
         "a valid but different archive (8.4.1) against the 8.5.0 pin",
         raw=_other_archive, codes=("CHECKSUM",), repin=False),
    Case("pin_mismatch_trailing_byte", "linux",
         "the good tarball plus one byte: tar still reads it, only the pin tells",
         raw=_append_byte, codes=("CHECKSUM",), repin=False),
    Case("pin_mismatch_unsafe_member", "linux",
         "an archive with an escape, against the good pin",
         add_file(lambda c: c.n("include/../../outside/evil.h")),
         codes=("CHECKSUM", "UNSAFE"), repin=False),
]


def _swap(entries, ctx, a, b):
    ea = [e for e in entries if e.name == ctx.n(a)][0]
    eb = [e for e in entries if e.name == ctx.n(b)][0]
    out = []
    for e in entries:
        if e is ea:
            out.append(e.copy(data=eb.data))
        elif e is eb:
            out.append(e.copy(data=ea.data))
        else:
            out.append(e)
    return out


def _sections(items):
    """The cases of items, each given the name of the Section above it."""
    cases, group = [], None
    for item in items:
        if isinstance(item, Section):
            group = item.name
        else:
            assert group is not None, "%s comes before any Section" % item.name
            item.group = group
            cases.append(item)
    return cases


CASES = _sections(CASES)
GROUPS = list(dict.fromkeys(c.group for c in CASES))   # in table order
BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "duplicate case names"
