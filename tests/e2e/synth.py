"""Deterministic bytes and hashes: the same seed gives the same bytes on
every run, so generated archives, trees and manifests are reproducible.
"""

import hashlib
import random
import struct


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
