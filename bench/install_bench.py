#!/usr/bin/env python3
"""Benchmark: cudnn-deploy install against `unzip -o` of the same archive.

Generates a Windows-layout cuDNN-shaped zip (31 entries; the DLL sizes scaled
so the whole archive is about --mb megabytes, mostly incompressible like the
real DLLs), then times, in the same run and interleaved:
  baseline  unzip -o -q ARCHIVE -d fresh_dir         (what users do by hand)
  install   cudnn-deploy install --no-verify into a fresh CUDA tree
  again     cudnn-deploy install --no-verify into the installed tree
            (every file identical: nothing should be rewritten)
and reports medians, the ratio install/unzip, and the peak RSS of each tool
(to show memory does not grow with archive size: run with two --mb values).

usage: install_bench.py BIN [--mb 200] [--rounds 5]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))


def timed(cmd, env=None):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       env=env)
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                          p.stderr.decode(errors="replace")))
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    # ru_maxrss of children is the max over all children so far (KiB).
    return dt, after.ru_maxrss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--mb", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="cdd-bench.")
    os.environ.setdefault("CDD_TEST_TMP", work)
    import cddtest  # noqa: E402  (generators shared with the tests)

    # Scale: the real 8.5 zip is ~517 MB over 7 DLLs; make ours --mb.
    per_dll = a.mb * 1024 * 1024 // 7
    top, entries = cddtest.windows_entries("8.5.0.96", "11")
    big = []
    for e in entries:
        if e.kind == cddtest.FILE and e.name.endswith(".dll"):
            e = e.copy(data=cddtest.big_bytes(e.name, per_dll))
        big.append(e)
    fx = cddtest.Fixture(os.path.join(work, "fx"), cddtest.WINDOWS,
                         "8.5.0.96", 11, top, big)
    size = os.path.getsize(fx.path)
    print("archive: %s, %.1f MB, %d entries" % (fx.filename, size / 1e6,
                                                len(fx.files)))
    res = {"unzip": [], "install": [], "again": []}
    rss = {}
    for i in range(a.rounds):
        d = os.path.join(work, "unz%d" % i)
        dt, _ = timed(["unzip", "-o", "-q", fx.path, "-d", d])
        res["unzip"].append(dt)
        shutil.rmtree(d)
        tree = os.path.join(work, "tree%d" % i)
        cddtest.make_cuda_tree(tree, platform=cddtest.WINDOWS)
        args = [a.bin, "--quiet", "install", "--cuda-root", tree,
                "--manifest", fx.manifest_path, "--archive", fx.path,
                "--no-verify"]
        dt, r = timed(["/usr/bin/env"] + args)
        res["install"].append(dt)
        dt, r = timed(["/usr/bin/env"] + args)
        res["again"].append(dt)
        shutil.rmtree(tree)
    # Peak RSS per tool, measured alone (RUSAGE_CHILDREN is cumulative max).
    for name, cmd in (("unzip", ["unzip", "-o", "-q", fx.path, "-d",
                                 os.path.join(work, "rss")]),):
        out = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd],
                             stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
        rss[name] = int(out.stderr.decode().strip().splitlines()[-1])
    tree = os.path.join(work, "rss-tree")
    cddtest.make_cuda_tree(tree, platform=cddtest.WINDOWS)
    out = subprocess.run(["/usr/bin/time", "-f", "%M", a.bin, "--quiet",
                          "install", "--cuda-root", tree, "--manifest",
                          fx.manifest_path, "--archive", fx.path,
                          "--no-verify"],
                         stderr=subprocess.PIPE, stdout=subprocess.DEVNULL)
    rss["install"] = int(out.stderr.decode().strip().splitlines()[-1])
    m = {k: statistics.median(v) for k, v in res.items()}
    print("rounds: %d (interleaved)" % a.rounds)
    for k in ("unzip", "install", "again"):
        print("  %-8s median %7.3f s   (min %.3f, max %.3f)" %
              (k, m[k], min(res[k]), max(res[k])))
    print("ratio install/unzip: %.2f   re-install/unzip: %.2f" %
          (m["install"] / m["unzip"], m["again"] / m["unzip"]))
    print("peak RSS: unzip %d KiB, cudnn-deploy install %d KiB" %
          (rss["unzip"], rss["install"]))
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
