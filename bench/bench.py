#!/usr/bin/env python3
"""Benchmark: cudnn-deploy against unzip, bsdtar, Python's zipfile and tar,
on look-alikes of the real archives, in one run (never a timed unit test).

The Windows look-alike has the 31 real names of
cudnn-windows-x86_64-8.5.0.96_cuda11-archive.zip (BRIEF §3): at --scale 1
about 1.1 GB inside, the largest DLL about half of it, every DLL
compressing about 1.5:1 under deflate (bytes of a skewed alphabet, like
machine code: neither incompressible nor trivially compressible). The Linux
look-alike (.tar.xz) has the real 8.5 layout (headers, .so.8.5.0 files and
their symlink chains, static archives), sized by --xz-scale.

A second Linux look-alike holds the same tar compressed by the xz tool into
many blocks (xz -1 -T0 --block-size, --xz-block-size), the shape the
multi-threaded decoder needs: it runs at --jobs 16 and 2 against tar -xJf
(GNU tar runs xz -d, one thread) and tar -I "xz -T0" (xz's own threaded
decoder) on the same file.

Rounds are interleaved (A B C ... A B C ...), each tool once per round, and
every figure is the median with min-max over the rounds, measured in the
same run on the same, warm (page-cached) archive. Each round also writes the
bytes the archive holds durably (dd conv=fdatasync, beside the tree): the
floor no unpacker goes under. Every row has the child's CPU seconds
(user+sys) and peak RSS. Only python3 and the binaries are needed: give
baselines that are not on PATH with --unzip / --bsdtar / --tar.

Last, where the bench can make a cgroup with a CPU quota (root, a writable
cgroup v2 with the cpu controller, or v1's cpu hierarchy), the default
--jobs inside it: the most threads a zip install runs with the quota and
without (else skipped, with the reason).

usage: bench.py BIN [--scale 1] [--scale 0.5 ...] [--rounds 5] [--jobs N]
                    [--xz-scale 0.25] [--xz-block-size 8MiB] [--work DIR]
                    [--md FILE]

Importable: bench_stream.py takes the generators (make_zip, make_txz).
"""
import argparse
import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
import zipfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "e2e"))

VERSION = "8.5.0.96"
MB = 1000 * 1000
# Fractions of the DLL bytes (the real 8.5 zip: cnn_infer is about half).
DLL_SHARE = {
    "cudnn64_8.dll": 0.0004,
    "cudnn_cnn_infer64_8.dll": 0.50,
    "cudnn_cnn_train64_8.dll": 0.11,
    "cudnn_adv_infer64_8.dll": 0.11,
    "cudnn_adv_train64_8.dll": 0.08,
    "cudnn_ops_infer64_8.dll": 0.12,
    "cudnn_ops_train64_8.dll": 0.0796,
}
SUBLIBS = ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer",
           "adv_train")
HEADERS = (["cudnn.h"] + ["cudnn_%s.h" % s for s in SUBLIBS]
           + ["cudnn_backend.h", "cudnn_version.h"])
CHUNK = 8 * 1024 * 1024
# 40 of 256 byte values, unevenly: deflate's Huffman stage gets about 1.5:1.
ALPHABET = bytes((i * 37 + 11) % 256 for i in range(40))
SKEW = bytes(ALPHABET[i % 40] for i in range(256))


def gpu_like(rng, n):
    """Yield n bytes in chunks: compress ~1.5:1, every chunk different."""
    left = n
    while left > 0:
        k = min(CHUNK, left)
        yield rng.randbytes(k).translate(SKEW)
        left -= k


def small_bytes(name, n):
    rng = random.Random(name)
    return b"".join(gpu_like(rng, n))


def header_text(name, n):
    line = ("/* %s: synthetic header for the benchmark */\n" % name).encode()
    return (line * (n // len(line) + 1))[:n]


def windows_files(scale):
    """[(path in zip, size, kind)] of the 31 files, DLL bytes at scale."""
    top = "cudnn-windows-x86_64-%s_cuda11-archive" % VERSION
    total = int(1100 * MB * scale)
    out = []
    for dll, share in DLL_SHARE.items():
        out.append((top + "/bin/" + dll, max(4096, int(total * share)), "dll"))
    for h in HEADERS:
        out.append((top + "/include/" + h, 20000 + 9000 * len(h), "h"))
    libs = ["cudnn.lib", "cudnn64_8.lib"]
    for s in SUBLIBS:
        libs += ["cudnn_%s.lib" % s, "cudnn_%s64_8.lib" % s]
    for lib in libs:
        out.append((top + "/lib/x64/" + lib, 30000 + 1000 * len(lib), "lib"))
    out.append((top + "/LICENSE", 28000, "license"))
    assert len(out) == 31
    return top, out


def file_chunks(path, size, kind):
    if kind == "h":
        yield header_text(path, size)
    else:
        yield from gpu_like(random.Random(path), size)


def role_of(platform, rel, kind):
    if kind == "symlink":
        return "symlink"
    if rel.startswith("include/"):
        return "header"
    if rel == "LICENSE":
        return "license"
    if platform == "windows":
        return "runtime" if rel.endswith(".dll") else "import_lib"
    return "static_lib" if rel.endswith(".a") else "runtime"


def manifest_doc(platform, filename, files, archive_path, strip_top):
    h = hashlib.sha256()
    with open(archive_path, "rb") as f:
        for b in iter(lambda: f.read(1 << 20), b""):
            h.update(b)
    import cddtest  # verify section only
    return {
        "schema_version": 1, "product": "cudnn", "version": VERSION,
        "cuda_major": 11,
        "platform": cddtest.LINUX if platform == "linux" else cddtest.WINDOWS,
        "archive": {"filename": filename, "sha256": h.hexdigest(),
                    "size": os.path.getsize(archive_path),
                    "url": ["https://developer.download.nvidia.com/compute/"
                            "cudnn/redist/cudnn/x/" + filename],
                    "strip_components": 1},
        "files_exact": True,
        "files": files,
        "verify": cddtest.verify_section(
            cddtest.LINUX if platform == "linux" else cddtest.WINDOWS,
            VERSION, cddtest.SUBLIBS),
    }


def make_zip(work, scale):
    """The Windows look-alike at scale (cached in work)."""
    name = "cudnn-windows-x86_64-%s_cuda11-archive.zip" % VERSION
    d = os.path.join(work, "zip-x%g" % scale)
    path, mpath = os.path.join(d, name), os.path.join(d, "manifest.json")
    if os.path.exists(mpath):
        return path, mpath
    os.makedirs(d, exist_ok=True)
    top, files = windows_files(scale)
    mfiles = []
    t0 = time.time()
    with zipfile.ZipFile(path + ".part", "w", zipfile.ZIP_DEFLATED,
                         compresslevel=6) as z:
        for dirname in ("", "/bin", "/include", "/lib", "/lib/x64"):
            z.writestr(zipfile.ZipInfo(top + dirname + "/"), b"")
        for p, size, kind in files:
            h = hashlib.sha256()
            zi = zipfile.ZipInfo(p, date_time=(2022, 8, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            with z.open(zi, "w", force_zip64=size > 2**31) as w:
                for b in file_chunks(p, size, kind):
                    h.update(b)
                    w.write(b)
            rel = p[len(top) + 1:]
            mfiles.append({"path": rel, "role": role_of("windows", rel, kind),
                           "sha256": h.hexdigest(), "size": size})
    os.rename(path + ".part", path)
    with open(mpath, "w") as f:
        json.dump(manifest_doc("windows", name, mfiles, path, 1), f, indent=1)
    print("generated %s (%.1f MB, %.0f s)" % (path, os.path.getsize(path) / MB,
                                             time.time() - t0), flush=True)
    return path, mpath


def make_txz(work, scale, block_size=None, xz="xz"):
    """The Linux look-alike .tar.xz at scale (cached in work): one xz block
    (Python's lzma, preset 1), or with block_size ("8MiB") the same tar
    compressed by the xz tool into blocks of that size (-1 -T0)."""
    name = "cudnn-linux-x86_64-%s_cuda11-archive.tar.xz" % VERSION
    d = os.path.join(work, "txz-x%g" % scale + (
        "-blocks-" + block_size if block_size else ""))
    path, mpath = os.path.join(d, name), os.path.join(d, "manifest.json")
    if os.path.exists(mpath):
        return path, mpath
    os.makedirs(d, exist_ok=True)
    top = "cudnn-linux-x86_64-%s_cuda11-archive" % VERSION
    total = int(1100 * MB * scale)
    libs = [("libcudnn", 0.0005)] + [("libcudnn_" + s, 0.0)
                                     for s in SUBLIBS]
    shares = {"libcudnn_cnn_infer": 0.5, "libcudnn_cnn_train": 0.11,
              "libcudnn_adv_infer": 0.11, "libcudnn_adv_train": 0.08,
              "libcudnn_ops_infer": 0.12, "libcudnn_ops_train": 0.0795}
    entries = [(h, "include/" + h, 20000 + 9000 * len(h), "h")
               for h in HEADERS]
    for lib, share in libs:
        share = shares.get(lib, share)
        real = lib + ".so.8.5.0"
        entries.append((real, "lib/" + real, max(4096, int(total * share * 0.6)),
                        "so"))
        entries.append((lib + ".so.8", "lib/" + lib + ".so.8", real,
                        "symlink"))
        entries.append((lib + ".so", "lib/" + lib + ".so", lib + ".so.8",
                        "symlink"))
        if lib != "libcudnn":
            entries.append((lib + "_static.a", "lib/" + lib + "_static.a",
                            max(4096, int(total * share * 0.4)), "a"))
    entries.append(("LICENSE", "LICENSE", 28000, "license"))
    import lzma

    class Hashing(object):
        def __init__(self, chunks):
            self.it, self.buf, self.h = iter(chunks), b"", hashlib.sha256()

        def read(self, n=-1):
            while n < 0 or len(self.buf) < n:
                try:
                    b = next(self.it)
                except StopIteration:
                    break
                self.h.update(b)
                self.buf += b
            if n < 0:
                n = len(self.buf)
            out, self.buf = self.buf[:n], self.buf[n:]
            return out

    mfiles = []
    t0 = time.time()
    if block_size:
        out = open(path + ".tar", "wb")
    else:
        out = lzma.open(path + ".part", "wb", preset=1)
    with out as xzf, \
            tarfile.open(fileobj=xzf, mode="w|", format=tarfile.PAX_FORMAT) as t:
        for dirname in ("", "/include", "/lib"):
            ti = tarfile.TarInfo(top + dirname)
            ti.type, ti.mode = tarfile.DIRTYPE, 0o755
            t.addfile(ti)
        for base, rel, size, kind in entries:
            ti = tarfile.TarInfo(top + "/" + rel)
            ti.mtime = 1659312000
            if kind == "symlink":
                ti.type, ti.linkname, ti.mode = tarfile.SYMTYPE, size, 0o777
                t.addfile(ti)
                mfiles.append({"path": rel, "role": "symlink",
                               "target": size})
                continue
            ti.size, ti.mode = size, 0o755 if kind == "so" else 0o644
            src = Hashing([header_text(rel, size)] if kind == "h"
                          else gpu_like(random.Random(rel), size))
            t.addfile(ti, src)
            mfiles.append({"path": rel, "role": role_of("linux", rel, kind),
                           "sha256": src.h.hexdigest(), "size": size})
    if block_size:
        with open(path + ".part", "wb") as f:
            subprocess.run([xz, "-1", "-T0", "--block-size=" + block_size,
                            "-c", path + ".tar"], stdout=f, check=True)
        os.unlink(path + ".tar")
    os.rename(path + ".part", path)
    with open(mpath, "w") as f:
        json.dump(manifest_doc("linux", name, mfiles, path, 1), f, indent=1)
    print("generated %s (%.1f MB, %.0f s)" % (path, os.path.getsize(path) / MB,
                                             time.time() - t0), flush=True)
    return path, mpath


def unpacked_bytes(mpath):
    with open(mpath) as f:
        return sum(x.get("size", 0) for x in json.load(f)["files"])


TIME = None  # GNU time, for each child's own peak RSS
CHILD_ENV = None  # the children's environment (--lib-path)


def timed(cmd, plain=False):
    """(seconds, peak RSS KiB) of one child. The RSS comes from GNU time
    (--time): a child forked from this Python process would inherit its
    high-water mark across exec, so wait4's figure only bounds it."""
    rss_file = None
    if TIME:
        rss_file = os.path.join(os.environ["CDD_TEST_TMP"], "rss.txt")
        cmd = [TIME, "-q", "-f", "%M %U %S", "-o", rss_file] + cmd
    # Flush what the previous command left dirty first: an fsync on ext4
    # (data=ordered) commits the journal with every file's pending data, so
    # an installer that flushes would otherwise pay for the unflushed MB an
    # unzip or tar before it left behind.
    os.sync()
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE,
                         env=None if plain else CHILD_ENV)
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    dt = time.perf_counter() - t0
    rc = os.waitstatus_to_exitcode(status)
    if rc != 0:
        sys.exit("failed (%d): %s\n%s" % (rc, " ".join(cmd),
                                          err.decode(errors="replace")))
    rss, cpu = ru.ru_maxrss, ru.ru_utime + ru.ru_stime
    if rss_file:
        with open(rss_file) as f:
            kib, user, sys_ = f.read().split()[-3:]
        rss, cpu = int(kib), float(user) + float(sys_)
    return dt, rss, cpu


def dd_floor(a, inside):
    """The durable write of `inside` bytes beside the tree: dd from
    /dev/zero in 1 MiB blocks, conv=fdatasync (the data reaches the disk
    before dd exits), the file removed after."""
    out = os.path.join(a.work, "dd-floor.bin")
    n = max(1, (inside + (1 << 20) - 1) >> 20)
    r = timed([a.dd, "if=/dev/zero", "of=" + out, "bs=1M", "count=%d" % n,
               "conv=fdatasync", "status=none"], plain=True)
    os.unlink(out)
    return r


DD_ROW = "dd conv=fdatasync (floor: the bytes inside, written durably)"


def cuda_tree(path, platform):
    import cddtest
    shutil.rmtree(path, ignore_errors=True)
    cddtest.make_cuda_tree(path, platform=platform)
    return path


class Series(object):
    def __init__(self):
        self.t, self.rss, self.cpu = {}, {}, {}

    def add(self, name, dt, rss, cpu):
        self.t.setdefault(name, []).append(dt)
        self.cpu.setdefault(name, []).append(cpu)
        self.rss[name] = max(self.rss.get(name, 0), rss)

    def med(self, name):
        return statistics.median(self.t[name])


def bench_zip(a, scale, res):
    import cddtest
    path, mpath = make_zip(a.work, scale)
    size, inside = os.path.getsize(path), unpacked_bytes(mpath)
    s = Series()
    out = os.path.join(a.work, "out")
    tree = os.path.join(a.work, "tree")
    pyx = ("import sys, zipfile; "
           "zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])")

    def inst(jobs, extra=()):
        return [a.bin, "--quiet", "install", "--cuda-root", tree,
                "--manifest", mpath, "--archive", path, "--no-verify",
                "--jobs", str(jobs)] + list(extra)

    for _ in range(a.rounds):
        for name, cmd in (("unzip -o", [a.unzip, "-o", "-q", path, "-d", out]),
                          ("bsdtar -xf", [a.bsdtar, "-xf", path, "-C", out]),
                          ("python zipfile", [sys.executable, "-c", pyx, path,
                                              out])):
            if not cmd[0]:
                continue
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            s.add(name, *timed(cmd, plain=cmd[0] == sys.executable))
        shutil.rmtree(out, ignore_errors=True)
        cuda_tree(tree, cddtest.WINDOWS)
        s.add("install --jobs 1", *timed(inst(1)))
        cuda_tree(tree, cddtest.WINDOWS)
        s.add("install --jobs %d" % a.jobs, *timed(inst(a.jobs)))
        # The identity records settle (docs/design.md: a record taken within
        # 2 s of a file's last change is racy): the first re-install after
        # that hashes and records, the next ones read nothing.
        time.sleep(2.1)
        s.add("first re-install (hashes, records identities)",
              *timed(inst(a.jobs)))
        s.add("unchanged re-install", *timed(inst(a.jobs)))
        s.add("status --check", *timed([a.bin, "--quiet", "status",
                                        "--cuda-root", tree, "--check",
                                        "--jobs", str(a.jobs)]))
        s.add("install --check-tree (unchanged)",
              *timed(inst(a.jobs, ["--check-tree"])))
        if a.dd:
            s.add(DD_ROW, *dd_floor(a, inside))
    # Memory at the most workers the tool runs (16), whatever the cores.
    cuda_tree(tree, cddtest.WINDOWS)
    s.add("install --jobs 16 (once: peak RSS)", *timed(inst(16)))
    shutil.rmtree(tree, ignore_errors=True)
    res.append(("zip", scale, size, inside, s))


def bench_txz(a, scale, res):
    import cddtest
    path, mpath = make_txz(a.work, scale)
    multi = mmpath = None
    if a.xz_block_size and a.xz:
        multi, mmpath = make_txz(a.work, scale, a.xz_block_size, a.xz)
    size, inside = os.path.getsize(path), unpacked_bytes(mpath)
    s = Series()
    out = os.path.join(a.work, "out")
    tree = os.path.join(a.work, "tree")

    def inst(archive, manifest, jobs):
        return [a.bin, "--quiet", "install", "--cuda-root", tree,
                "--manifest", manifest, "--archive", archive, "--no-verify",
                "--jobs", str(jobs)]

    def untar(name, cmd):
        shutil.rmtree(out, ignore_errors=True)
        os.makedirs(out)
        s.add(name, *timed(cmd))

    for _ in range(a.rounds):
        untar("tar -xJf", [a.tar, "-xJf", path, "-C", out])
        for jobs in (1, a.jobs):
            cuda_tree(tree, cddtest.LINUX)
            s.add("install --jobs %d" % jobs, *timed(inst(path, mpath, jobs)))
        if multi:
            untar(MB_TAR, [a.tar, "-xJf", multi, "-C", out])
            untar(MB_TAR_T0, [a.tar, "-I", a.xz + " -T0", "-xf", multi,
                              "-C", out])
            for jobs in MB_JOBS:
                cuda_tree(tree, cddtest.LINUX)
                s.add("multi-block: install --jobs %d" % jobs,
                      *timed(inst(multi, mmpath, jobs)))
        shutil.rmtree(out, ignore_errors=True)
        if a.dd:
            s.add(DD_ROW, *dd_floor(a, inside))
    shutil.rmtree(tree, ignore_errors=True)
    kind = "tar.xz"
    if multi:
        kind += " (single-block %.1f MB; multi-block %.1f MB, %s blocks of %s)" % (
            size / MB, os.path.getsize(multi) / MB, xz_blocks(a.xz, multi),
            a.xz_block_size)
    res.append((kind, scale, size, inside, s))


MB_TAR = "multi-block: tar -xJf"
MB_TAR_T0 = "multi-block: tar -I 'xz -T0' -xf"
MB_JOBS = (16, 2)


def xz_blocks(xz, path):
    """The number of blocks xz --list counts in path ("?" if it cannot)."""
    try:
        out = subprocess.run([xz, "--robot", "--list", path], check=True,
                             stdout=subprocess.PIPE, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return "?"
    for line in out.splitlines():
        f = line.split("\t")
        if f[0] == "totals":
            return f[2]
    return "?"


# ---- the default --jobs under a cgroup CPU quota -----------------------------

def make_cgroup(cpus):
    """A new cgroup limited to `cpus` CPUs by quota: (its procs file, the
    folder to remove), or (None, why not)."""
    name = "cdd-bench-%d" % os.getpid()
    root = "/sys/fs/cgroup"
    try:
        if os.path.exists(os.path.join(root, "cgroup.controllers")):
            # v2: the cpu controller must be enabled for the children of
            # the cgroup the new one goes in (this process's own).
            with open("/proc/self/cgroup") as f:
                rel = [l.split(":", 2)[2].strip() for l in f
                       if l.startswith("0::")][0]
            parent = os.path.join(root, rel.lstrip("/"))
            with open(os.path.join(parent, "cgroup.subtree_control")) as f:
                if "cpu" not in f.read().split():
                    with open(os.path.join(parent, "cgroup.subtree_control"),
                              "w") as w:
                        w.write("+cpu")
            d = os.path.join(parent, name)
            os.mkdir(d)
            with open(os.path.join(d, "cpu.max"), "w") as f:
                f.write("%d 100000" % (cpus * 100000))
            return os.path.join(d, "cgroup.procs"), d
        for v1 in ("cpu", "cpu,cpuacct"):
            base = os.path.join(root, v1)
            if os.path.isdir(base):
                d = os.path.join(base, name)
                os.mkdir(d)
                with open(os.path.join(d, "cpu.cfs_period_us"), "w") as f:
                    f.write("100000")
                with open(os.path.join(d, "cpu.cfs_quota_us"), "w") as f:
                    f.write("%d" % (cpus * 100000))
                return os.path.join(d, "cgroup.procs"), d
        return None, "no cgroup file system at %s" % root
    except (OSError, IndexError) as e:
        return None, "cannot make a cgroup with a CPU quota: %s" % e


def most_threads(cmd, procs=None):
    """Run cmd (in the cgroup whose procs file is given) and return the
    most threads it ran at once, polled in /proc."""
    def enter():
        with open(procs, "w") as f:
            f.write(str(os.getpid()))
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, env=CHILD_ENV,
                         preexec_fn=enter if procs else None)
    most, task = 0, "/proc/%d/task" % p.pid
    while p.poll() is None:
        try:
            most = max(most, len(os.listdir(task)))
        except OSError:
            pass
        time.sleep(0.001)
    err = p.stderr.read()
    if p.returncode != 0:
        sys.exit("failed (%d): %s\n%s" % (p.returncode, " ".join(cmd),
                                          err.decode(errors="replace")))
    return most


def bench_cgroup(a):
    """[lines]: the zip install's most threads with its default --jobs,
    without and with a quota of half the cores (at least 1)."""
    import cddtest
    cores = os.cpu_count() or 1
    quota = max(1, cores // 2)
    if not os.path.isdir("/proc/self/task"):
        return ["cgroup quota: skipped (no /proc to count threads)"]
    procs, d = make_cgroup(quota)
    if not procs:
        return ["cgroup quota: skipped (%s)" % d]
    scales = [sc for sc in a.scale if sc > 0]
    if not scales:
        return ["cgroup quota: skipped (no zip scale: --scale 0)"]
    path, mpath = make_zip(a.work, min(scales))
    tree = os.path.join(a.work, "tree")
    cmd = [a.bin, "--quiet", "install", "--cuda-root", tree, "--manifest",
           mpath, "--archive", path, "--no-verify"]
    try:
        cuda_tree(tree, cddtest.WINDOWS)
        free = most_threads(cmd)
        cuda_tree(tree, cddtest.WINDOWS)
        limited = most_threads(cmd, procs)
    finally:
        shutil.rmtree(tree, ignore_errors=True)
        try:
            os.rmdir(d)
        except OSError:
            pass
    return ["cgroup quota of %d CPU(s) on %d cores, zip install with the "
            "default --jobs: at most %d threads without the quota, %d "
            "inside it" % (quota, cores, free, limited)]


def report(a, res):
    lines = []
    w = lines.append
    w("machine: %s, %d cores (os.cpu_count), rounds: %d interleaved, "
      "--jobs %d, load average before: %s, peak RSS by %s" % (
          os.uname().nodename, os.cpu_count(), a.rounds, a.jobs, a.load,
          "GNU time" if TIME else "wait4 (upper bound)"))
    for kind, scale, size, inside, s in res:
        w("")
        w("### %s x%g: archive %.1f MB, %.1f MB inside" % (
            kind, scale, size / MB, inside / MB))
        w("")
        w("| command | median s | min-max s | s per GB inside | CPU s (user+sys, median) | peak RSS MiB |")
        w("|---|---|---|---|---|---|")
        for name in s.t:
            v = s.t[name]
            w("| %s | %.3f | %.3f-%.3f | %.2f | %.2f | %.1f |" % (
                name, s.med(name), min(v), max(v),
                s.med(name) / (inside / 1e9),
                statistics.median(s.cpu[name]), s.rss[name] / 1024))
        w("")
        jn = "install --jobs %d" % a.jobs
        ratios = []
        base = [b for b in ("unzip -o", "bsdtar -xf", "python zipfile",
                            "tar -xJf") if b in s.t]
        for b in base:
            ratios.append("%s / %s = %.2f" % (jn, b, s.med(jn) / s.med(b)))
        ratios.append("--jobs %d / --jobs 1 = %.2f" % (
            a.jobs, s.med(jn) / s.med("install --jobs 1")))
        if "unchanged re-install" in s.t and "unzip -o" in s.t:
            ratios.append("unchanged re-install / unzip -o = %.3f "
                          "(target <= 0.01)" % (
                              s.med("unchanged re-install") /
                              s.med("unzip -o")))
        if "tar -xJf" in s.t:
            ratios.append("single-block %s / tar -xJf = %.2f (target <= 1.0)"
                          % (jn, s.med(jn) / s.med("tar -xJf")))
        for jobs in MB_JOBS:
            mj = "multi-block: install --jobs %d" % jobs
            if mj in s.t:
                ratios.append("%s / %s = %.2f%s" % (
                    mj, MB_TAR, s.med(mj) / s.med(MB_TAR),
                    " (target <= 0.30)" if jobs == 16 else ""))
                ratios.append("%s / %s = %.2f" % (
                    mj, MB_TAR_T0, s.med(mj) / s.med(MB_TAR_T0)))
        if DD_ROW in s.t:
            ratios.append("%s / dd floor = %.2f" % (jn, s.med(jn) /
                                                    s.med(DD_ROW)))
        w("ratios (medians): " + "; ".join(ratios))
    if a.cgroup_lines:
        w("")
        lines.extend(a.cgroup_lines)
    text = "\n".join(lines)
    print(text)
    if a.md:
        with open(a.md, "w") as f:
            f.write(text + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("bin")
    ap.add_argument("--scale", type=float, action="append",
                    help="zip size: 1 = the real ~1.1 GB inside (repeat; "
                         "0: skip)")
    ap.add_argument("--xz-scale", type=float, action="append",
                    help="tar.xz size, same unit (repeat; 0: skip)")
    ap.add_argument("--xz-block-size", default="8MiB",
                    help="block size of the multi-block tar.xz (xz "
                         "--block-size; empty: skip it)")
    ap.add_argument("--no-cgroup", action="store_true",
                    help="skip the cgroup quota case")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--unzip", default=shutil.which("unzip"))
    ap.add_argument("--bsdtar", default=shutil.which("bsdtar"))
    ap.add_argument("--tar", default=shutil.which("tar"))
    ap.add_argument("--xz", default=shutil.which("xz"))
    ap.add_argument("--dd", default=shutil.which("dd"))
    ap.add_argument("--time", default=shutil.which("time") or
                    ("/usr/bin/time" if os.path.exists("/usr/bin/time")
                     else None),
                    help="GNU time, for peak RSS (else wait4's, an upper "
                         "bound)")
    ap.add_argument("--work", default=None,
                    help="folder for the archives (kept and reused) and "
                         "the trees (default: a temporary one)")
    ap.add_argument("--lib-path",
                    help="LD_LIBRARY_PATH for the timed programs only (carried "
                         "libraries on a machine without them)")
    ap.add_argument("--md", help="also write the tables here")
    a = ap.parse_args()
    a.bin = os.path.abspath(a.bin)
    global TIME, CHILD_ENV
    TIME = a.time
    if a.lib_path:
        CHILD_ENV = dict(os.environ)
        CHILD_ENV["LD_LIBRARY_PATH"] = os.path.abspath(a.lib_path) + (
            ":" + os.environ["LD_LIBRARY_PATH"]
            if os.environ.get("LD_LIBRARY_PATH") else "")
    a.scale = a.scale or [1.0]
    a.xz_scale = a.xz_scale if a.xz_scale is not None else [0.25]
    own_work = a.work is None
    if own_work:
        import tempfile
        a.work = tempfile.mkdtemp(prefix="cdd-bench.")
    os.makedirs(a.work, exist_ok=True)
    os.environ.setdefault("CDD_TEST_TMP", a.work)
    for b in ("unzip", "bsdtar", "xz", "dd"):
        if not getattr(a, b):
            print("note: no %s (give --%s PATH): not measured" % (b, b))
    a.load = "%.2f %.2f %.2f" % os.getloadavg()
    res = []
    try:
        for sc in a.scale:
            if sc > 0:
                bench_zip(a, sc, res)
        for sc in a.xz_scale:
            if sc > 0:
                bench_txz(a, sc, res)
        a.cgroup_lines = [] if a.no_cgroup else bench_cgroup(a)
    finally:
        shutil.rmtree(os.path.join(a.work, "tree"), ignore_errors=True)
        shutil.rmtree(os.path.join(a.work, "out"), ignore_errors=True)
        if own_work:
            shutil.rmtree(a.work, ignore_errors=True)
    report(a, res)


if __name__ == "__main__":
    main()
