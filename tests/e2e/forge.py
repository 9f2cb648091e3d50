"""Writers of archives no honest tool writes (issue 9, the reader
differentials): a zip whose local headers, central records, Unicode Path
fields and data descriptors can each say something else, with bytes before
or after it; tar streams with pax records and GNU sparse members written by
hand. Used by hostile_cases.py; everything is built at test time."""

import io
import stat
import struct
import tarfile
import zlib

import archives
from archives import CHARDEV, DIR, FIFO, FILE, SYMLINK

DOS_TIME, DOS_DATE = 0, (42 << 9) | (8 << 5) | 1   # 2022-08-01


def _b(name):
    return name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")


def members(entries):
    """Zip members (dicts, see zip_bytes) for archives.Entry members, as
    archives.zip_bytes would write them."""
    out = []
    for e in entries:
        m = dict(name=_b(e.name), data=b"", method=8, create_system=0,
                 external_attr=0x20)
        if e.kind == FILE:
            m["data"] = e.data
        elif e.kind == DIR:
            m.update(name=_b(e.name.rstrip("/") + "/"), method=0, external_attr=0x10)
        elif e.kind == SYMLINK:
            m.update(data=_b(e.target), method=0, create_system=3,
                     external_attr=(stat.S_IFLNK | 0o777) << 16)
        elif e.kind in (FIFO, CHARDEV):
            ft = stat.S_IFIFO if e.kind == FIFO else stat.S_IFCHR
            m.update(create_system=3, external_attr=(ft | 0o644) << 16)
        else:
            raise ValueError(e.kind)
        out.append(m)
    return out


def _unicode_path(name, upath):
    body = b"\x01" + struct.pack("<I", zlib.crc32(name) & 0xFFFFFFFF) + upath
    return struct.pack("<HH", 0x7075, len(body)) + body


def zip_bytes(ms, prefix=b"", adjust=False, suffix=b""):
    """A zip of members ms (dicts). Keys beyond name/data/method/
    create_system/external_attr, each making one thing lie:
      local_name   the local header's name (the central one is name)
      upath        an Info-ZIP Unicode Path field (0x7075) with this name
      desc         1: bit 3 and a data descriptor (with signature)
      desc_crc_xor, desc_size_add   the descriptor lies
      point_at     no data of its own: the central record points at the
                   local header of member point_at
    prefix: bytes before the zip (offsets adjusted only with adjust);
    suffix: bytes after the end record."""
    out = io.BytesIO()
    out.write(prefix)
    base = 0 if adjust else len(prefix)
    info = []
    for m in ms:
        if m.get("point_at") is not None:
            info.append(None)
            continue
        data = m["data"]
        comp = data
        if m["method"] == 8:
            c = zlib.compressobj(6, zlib.DEFLATED, -15)
            comp = c.compress(data) + c.flush()
        crc = zlib.crc32(data) & 0xFFFFFFFF
        flags = 0x0800 if any(b >= 0x80 for b in m["name"]) else 0
        desc = m.get("desc", 0)
        if desc:
            flags |= 0x0008
        lname = m.get("local_name", m["name"])
        extra = _unicode_path(m["name"], m["upath"]) if m.get("upath") else b""
        off = out.tell() - base
        out.write(struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, flags, m["method"],
                              DOS_TIME, DOS_DATE, 0 if desc else crc,
                              0 if desc else len(comp), 0 if desc else len(data),
                              len(lname), len(extra)))
        out.write(lname + extra + comp)
        if desc:
            out.write(struct.pack("<IIII", 0x08074B50, crc ^ m.get("desc_crc_xor", 0),
                                  len(comp) + m.get("desc_size_add", 0),
                                  len(data) + m.get("desc_size_add", 0)))
        info.append((off, crc, len(comp), len(data), flags))
    cd_off = out.tell() - base
    cd = io.BytesIO()
    for i, m in enumerate(ms):
        si = i if m.get("point_at") is None else m["point_at"]
        src = ms[si]
        off, crc, csize, usize, flags = info[si]
        extra = _unicode_path(m["name"], m["upath"]) if m.get("upath") else b""
        cd.write(struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50,
                             (m["create_system"] << 8) | 20, 20, flags, src["method"],
                             DOS_TIME, DOS_DATE, crc, csize, usize, len(m["name"]),
                             len(extra), 0, 0, 0, m["external_attr"], off))
        cd.write(m["name"] + extra)
    cdb = cd.getvalue()
    out.write(cdb)
    out.write(struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(ms), len(ms), len(cdb),
                          cd_off, 0))
    out.write(suffix)
    return out.getvalue()


def find(ms, name):
    for i, m in enumerate(ms):
        if m["name"] == _b(name):
            return i
    raise KeyError(name)


# ---- tar -----------------------------------------------------------------------

def tar_pax_bytes(entries, pax=None):
    """A POSIX pax tar of entries; pax maps an entry's name to extra pax
    records for it (written as given: a value may hold a NUL)."""
    pax = pax or {}
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT,
                      encoding="utf-8", errors="surrogateescape") as tf:
        for e in entries:
            ti = tarfile.TarInfo(e.name)
            ti.mtime, ti.mode = archives.FIXED_MTIME, e.mode
            data = None
            if e.kind == FILE:
                ti.size, data = len(e.data), io.BytesIO(e.data)
            elif e.kind == DIR:
                ti.type = tarfile.DIRTYPE
            elif e.kind == SYMLINK:
                ti.type, ti.linkname = tarfile.SYMTYPE, e.target
            else:
                raise ValueError(e.kind)
            if e.name in pax:
                ti.pax_headers = dict(pax[e.name])
            tf.addfile(ti, data)
    return buf.getvalue()


def _header(name, typeflag, size, extra=b""):
    """A GNU (old-style) tar header; extra fills bytes 345.. (sparse map)."""
    h = bytearray(512)
    nb = _b(name)[:100]
    h[0:len(nb)] = nb
    h[100:108] = b"0000644\0"
    h[108:116] = b"0001750\0"
    h[116:124] = b"0001750\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"%011o\0" % archives.FIXED_MTIME
    h[156:157] = typeflag
    h[257:265] = b"ustar  \0"
    h[345:345 + len(extra)] = extra
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h)


def gnu_sparse_member(name, real_size):
    """An old-GNU sparse member ('S'): one stored byte at the end of
    real_size bytes of holes, which a reader expands to real_size bytes."""
    sp = b"%011o\0" % (real_size - 1) + b"%011o\0" % 1   # offset, numbytes
    extra = bytearray(512 - 345)
    extra[386 - 345:386 - 345 + 24] = sp
    extra[482 - 345] = 0                               # isextended
    extra[483 - 345:495 - 345] = b"%011o\0" % real_size  # realsize
    return _header(name, b"S", 1, bytes(extra)) + b"x" + b"\0" * 511


def pax_record(key, value):
    """One pax record: b"<len> key=value\\n", the length counting itself."""
    body = b" " + _b(key) + b"=" + _b(value) + b"\n"
    n = len(body) + 1
    while len(str(n)) + len(body) != n:
        n += 1
    return str(n).encode() + body


def pax_header(records, name=b"PaxHeaders/x"):
    data = b"".join(records)
    return _header(name, b"x", len(data)) + data + b"\0" * ((512 - len(data) % 512) % 512)


def tar_end():
    return b"\0" * 1024


def tar_open(entries):
    """archives.tar_bytes' GNU tar of entries without its end-of-archive blocks, so
    that more members can follow."""
    data = archives.tar_bytes(entries)
    with tarfile.open(fileobj=io.BytesIO(data)) as tf:
        tf.getmembers()
        end = tf.offset
    return data[:end]
