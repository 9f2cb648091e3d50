"""Target trees: a CUDA toolkit tree as NVIDIA's installer leaves it
(make_cuda_tree()), a conda-like prefix (make_prefix()), and Workspace, a
tree with an "outside" folder beside it whose state must never change.
"""

import json
import os
import shutil

from layoutmodel import LINUX
from snapshots import IGNORE_LOCK, diff_snapshots, snapshot
from synth import synth_bytes


def put_file(root, rel, data=b"", mode=0o644):
    """Write root/rel (folders made as needed) with data (bytes or text) and
    mode."""
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    os.chmod(p, mode)


def make_cuda_tree(root, platform=LINUX, version="11.6.2", source="json",
                   targets_links=False):
    """A CUDA toolkit tree as the NVIDIA installer leaves it (the parts that
    matter here). source says where its version can be read:
      "json"   version.json (+ include/cuda.h), as CUDA >= 11.1
      "txt"    version.txt only ("CUDA Version 11.6.124"), as CUDA <= 11.0
      "header" only CUDA_VERSION in include/cuda.h
      "none"   nothing says which CUDA this is
    targets_links (Linux): lib64 and include are symlinks into
    targets/x86_64-linux/, as in real Linux installs."""
    major, minor = (int(x) for x in version.split(".")[:2])
    os.makedirs(root)
    inc, lib = "include", ("lib64" if platform == LINUX else "lib/x64")
    if targets_links and platform == LINUX:
        os.makedirs(os.path.join(root, "targets/x86_64-linux/lib"))
        os.makedirs(os.path.join(root, "targets/x86_64-linux/include"))
        os.symlink("targets/x86_64-linux/lib", os.path.join(root, "lib64"))
        os.symlink("targets/x86_64-linux/include", os.path.join(root, "include"))
    if source == "json":
        doc = {"cuda": {"name": "CUDA SDK", "version": version},
               # Component versions differ from the SDK's; only "cuda" counts.
               "cuda_cudart": {"name": "CUDA Runtime (cudart)",
                               "version": "%d.%d.55" % (major, minor)},
               "cuda_nvcc": {"name": "CUDA NVCC",
                             "version": "%d.%d.152" % (major, minor)}}
        put_file(root, "version.json", json.dumps(doc, indent=3) + "\n")
    elif source == "txt":
        put_file(root, "version.txt", "CUDA Version %d.%d.124\n" % (major, minor))
    if source in ("json", "header"):
        put_file(root, inc + "/cuda.h",
             "/* synthetic cuda.h */\n#ifndef __cuda_cuda_h__\n"
             "#define __cuda_cuda_h__\n#define CUDA_VERSION %d\n#endif\n"
             % (major * 1000 + minor * 10))
    else:
        put_file(root, inc + "/cuda_runtime_api.h", "/* no version here */\n")
    if platform == LINUX:
        so = "libcudart.so.%d.0" % major if major < 12 else "libcudart.so.%d" % major
        put_file(root, lib + "/" + so, synth_bytes("cudart" + version, 3000), 0o755)
        os.symlink(so, os.path.join(root, lib, "libcudart.so"))
        put_file(root, "bin/nvcc", "#!/bin/sh\necho 'fake nvcc'\n", 0o755)
    else:
        dll = "cudart64_%d.dll" % (major * 10) if major < 12 else "cudart64_%d.dll" % major
        put_file(root, "bin/" + dll, b"MZ" + synth_bytes("cudart" + version, 3000), 0o755)
        put_file(root, "bin/nvcc.exe", b"MZ" + synth_bytes("nvcc" + version, 500), 0o755)
        put_file(root, lib + "/cudart.lib", b"!<arch>\n" + synth_bytes("cudart.lib", 700))
    return root


def make_prefix(root, platform=LINUX):
    """A conda environment (or any prefix) before cuDNN goes in."""
    os.makedirs(root)
    put_file(root, "conda-meta/history", "==> 2022-08-01 00:00:00 <==\n# cmd: conda create\n")
    if platform == LINUX:
        put_file(root, "bin/python3", "#!/bin/sh\n", 0o755)
        put_file(root, "lib/libpython3.so", synth_bytes("libpython", 2000), 0o755)
    else:
        put_file(root, "python.exe", b"MZ" + synth_bytes("python.exe", 500), 0o755)
        put_file(root, "Library/bin/zlib.dll", b"MZ" + synth_bytes("zlib.dll", 500), 0o755)
    return root



SENTINEL_TEXT = b"outside the tree: cudnn-deploy must never touch this\n"


class Workspace(object):
    """A scratch folder holding a target tree and, beside it, an "outside"
    folder with sentinel files. Everything in the folder except the tree is
    snapshotted at creation; check_outside() asserts it never changed."""

    def __init__(self, folder, tree="cuda", platform=LINUX, **tree_kw):
        if os.path.lexists(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        self.dir = folder
        self.tree = os.path.join(folder, "tree")
        self.outside = os.path.join(folder, "outside")
        self.kind = "prefix" if tree == "prefix" else "cuda"
        self.platform = platform
        put_file(self.outside, "sentinel.txt", SENTINEL_TEXT)
        put_file(self.outside, "include/cudnn.h", SENTINEL_TEXT)
        put_file(self.outside, "lib64/libcudnn.so.8.5.0", SENTINEL_TEXT)
        if tree == "cuda":
            make_cuda_tree(self.tree, platform, **tree_kw)
        elif tree == "prefix":
            make_prefix(self.tree, platform)
        elif tree is not None:
            raise ValueError(tree)
        self._outside = self.outside_state()

    @property
    def target_args(self):
        return ["--prefix" if self.kind == "prefix" else "--cuda-root", self.tree]

    def outside_state(self):
        """Snapshot of the workspace minus the tree."""
        snap = snapshot(self.dir)
        return {p: v for p, v in snap.items()
                if p != "tree" and not p.startswith("tree/")}

    def outside_changes(self):
        return diff_snapshots(self._outside, self.outside_state())

    def snap(self, ignore=IGNORE_LOCK):
        return snapshot(self.tree, ignore)

    def path(self, rel):
        return os.path.join(self.tree, rel)
