#!/usr/bin/env python3
"""Generate the demo's data: a fake cuDNN 8.5.0.96 Linux archive that looks
like NVIDIA's (same names, layout, symlink chains; synthetic bytes), its
exact manifest, a tampered copy, and a scratch CUDA 11.6 tree. Uses the same
generators as the end-to-end tests (tests/e2e/cddtest.py).

usage: demo_fixtures.py DIR   (prints shell assignments for demo.sh)"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
os.environ.setdefault("CDD_TEST_TMP", sys.argv[1] if len(sys.argv) > 1 else ".")
import cddtest  # noqa: E402


def main():
    out = os.path.abspath(sys.argv[1])
    fx = cddtest.Fixtures(os.path.join(out, "archives"))
    good = fx.linux
    tree = os.path.join(out, "cuda-11.6")
    cddtest.make_cuda_tree(tree, platform=cddtest.LINUX, version="11.6.2")
    with open(good.path, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x01  # one flipped bit somewhere in the middle
    tampered = os.path.join(out, "archives", "tampered", good.filename)
    os.makedirs(os.path.dirname(tampered))
    with open(tampered, "wb") as f:
        f.write(data)
    print("ARCHIVE='%s'" % good.path)
    print("MANIFEST='%s'" % good.manifest_path)
    print("TAMPERED='%s'" % tampered)
    print("TREE='%s'" % tree)


if __name__ == "__main__":
    main()
