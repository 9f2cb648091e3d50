"""Archive members and the writers that pack them: Entry, tar_bytes() (GNU
tar), tar_xz_bytes(), zip_bytes() (as NVIDIA's Windows zips are), and raw
mutations of archive bytes (corruption that no writer produces). Nothing here
knows about cuDNN: fixtures.py lays out the fake cuDNN archives.
"""

import io
import lzma
import stat
import struct
import tarfile
import warnings
import zipfile

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
