#!/usr/bin/env python3
"""Generate the demo's data: a fake cuDNN 8.5.0.96 Linux archive that looks
like NVIDIA's (same names, layout, symlink chains), its manifest, a tampered
copy, and a scratch CUDA 11.6 tree. The libraries are real shared objects
built with cc from tests/fakes/ (real sonames and cuDNN's exported version
functions), so the verify that ends the install has something to load, and
a fake NVIDIA driver (libcuda.so.1) for its GPU checks: the fake cuDNN
computes on host memory, so on a machine with a GPU the real driver's device
pointers would crash its convolution; with the fake one the demo runs the
same everywhere. Uses the generators of the end-to-end tests (tests/e2e/).

usage: demo_fixtures.py DIR BIN   (prints shell assignments for demo.sh)"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))
OUT = os.path.abspath(sys.argv[1])
os.environ["CDD_TEST_TMP"] = OUT
os.environ["CDD_BIN"] = os.path.abspath(sys.argv[2])
import cddtest  # noqa: E402
import fakecudnn  # noqa: E402


def main():
    why = fakecudnn.problem()
    if why is None:
        fake = fakecudnn.archive("ok")
        path, manifest, verify = fake.path, fake.manifest, ""
        driver = fakecudnn.fake_driver()
    else:
        # No compiler: synthetic bytes, which cannot be loaded, so the demo
        # skips the verify that would otherwise end the install.
        fx = cddtest.Fixtures(os.path.join(OUT, "archives")).linux
        path, manifest, verify = fx.path, fx.manifest_path, "--no-verify"
        driver = ""
        sys.stderr.write("demo: %s; installing without verify\n" % why)
    tree = os.path.join(OUT, "cuda-11.6")
    cddtest.make_cuda_tree(tree, platform=cddtest.LINUX, version="11.6.2")
    with open(path, "rb") as f:
        data = bytearray(f.read())
    data[len(data) // 2] ^= 0x01  # one flipped bit somewhere in the middle
    tampered = os.path.join(OUT, "tampered", os.path.basename(path))
    os.makedirs(os.path.dirname(tampered))
    with open(tampered, "wb") as f:
        f.write(data)
    print("ARCHIVE='%s'" % path)
    print("MANIFEST='%s'" % manifest)
    print("TAMPERED='%s'" % tampered)
    print("TREE='%s'" % tree)
    print("VERIFY='%s'" % verify)
    print("DRIVER='%s'" % driver)


if __name__ == "__main__":
    main()
