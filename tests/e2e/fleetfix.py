"""Fixtures of the fleet tests (test_fleet.py, test_ansible.py): a fake
zlib 1.2.3 DLL zip (zlib123dllx64.zip's members, a minimal PE image of the
asked machine as dll_x64/zlibwapi.dll) and manifests that declare it as an
optional component with the fake's own pin.

    z = zlib_zip(folder)                 # .path .sha256 .size .dll
    m = manifest_with_zlibwapi(fx, path, z)
"""

import copy
import os
import struct

from archives import DIR, FILE, Entry, zip_bytes
from fixtures import write_bytes, write_json
from synth import sha256_bytes, synth_bytes

AMD64, I386 = 0x8664, 0x014C
ZLIB_ZIP = "zlib123dllx64.zip"
ENTRY = "dll_x64/zlibwapi.dll"


def pe_image(machine, salt="zlibwapi"):
    """A DLL-shaped file: MZ header, e_lfanew 0x80, "PE\\0\\0", the COFF
    machine, then deterministic filler (what the machine check reads)."""
    head = bytearray(0x80)
    head[0:2] = b"MZ"
    struct.pack_into("<I", head, 0x3C, 0x80)
    coff = b"PE\0\0" + struct.pack("<HH", machine, 0) + bytes(16)
    return bytes(head) + coff + synth_bytes(salt, 4096)


class ZlibZip(object):
    """dll: the bytes of dll_x64/zlibwapi.dll (default: a PE image of
    machine)."""

    def __init__(self, folder, machine=AMD64, name=ZLIB_ZIP, dll=None):
        self.dll = dll if dll is not None else pe_image(machine)
        entries = [Entry("dll_x64/", DIR), Entry(ENTRY, FILE, self.dll),
                   Entry("dll_x64/zlibwapi.lib", FILE,
                         synth_bytes("zlib-lib", 2000)),
                   Entry("static_x64/", DIR),
                   Entry("static_x64/zlibstat.lib", FILE,
                         synth_bytes("zlib-static", 3000)),
                   Entry("readme.txt", FILE, b"zlib 1.2.3 (test fake)\n")]
        data = zip_bytes(entries)
        os.makedirs(folder, exist_ok=True)
        self.path = write_bytes(os.path.join(folder, name), data)
        self.sha256, self.size = sha256_bytes(data), len(data)


def zlib_zip(folder, machine=AMD64):
    return ZlibZip(folder, machine)


def component(z, url=None, cuda_majors=(11, 12), lo="8.3", hi="9.1"):
    doc = {"name": "zlibwapi",
           "summary": "zlib 1.2.3 DLL that cuDNN 8.3 to 9.1 import",
           "cuda_majors": list(cuda_majors), "cudnn_min": lo,
           "cudnn_max": hi,
           "archive": {"filename": os.path.basename(z.path),
                       "sha256": z.sha256, "size": z.size,
                       "strip_components": 0},
           "entry": {"path": ENTRY, "sha256": sha256_bytes(z.dll),
                     "size": len(z.dll)}}
    if url:
        doc["archive"]["url"] = [url]
    return doc


def manifest_with_zlibwapi(fx, path, z, **kw):
    doc = copy.deepcopy(fx.manifest)
    doc["components"] = [component(z, **kw)]
    return write_json(path, doc)


def dir_files(root):
    """{url path: bytes} of every file under root (for httpfault)."""
    files = {}
    for dp, _, fns in os.walk(root):
        for fn in fns:
            p = os.path.join(dp, fn)
            with open(p, "rb") as f:
                files["/" + os.path.relpath(p, root).replace(os.sep, "/")] = \
                    f.read()
    return files
