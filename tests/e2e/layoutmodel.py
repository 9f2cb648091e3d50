"""The tests' own model of the layout rules (docs/manifest.md, Layouts):
platforms, the sub-libraries and headers of cuDNN 8, the roles of archive
files, and where each role lands per kind of target. It is written apart
from the tool's src/core/layout.c, so an install is checked against a second
reading of the contract, not against itself.
"""

from archives import FILE, SYMLINK

LINUX = "linux-x86_64"
WINDOWS = "windows-x86_64"
SUBLIBS = ("ops_infer", "ops_train", "cnn_infer", "cnn_train", "adv_infer",
           "adv_train")
CHECK_SYMBOLS = {
    "ops_infer": "cudnnOpsInferVersionCheck",
    "ops_train": "cudnnOpsTrainVersionCheck",
    "cnn_infer": "cudnnCnnInferVersionCheck",
    "cnn_train": "cudnnCnnTrainVersionCheck",
    "adv_infer": "cudnnAdvInferVersionCheck",
    "adv_train": "cudnnAdvTrainVersionCheck",
}
HEADERS = (("cudnn.h",) + tuple("cudnn_%s.h" % s for s in SUBLIBS)
           + ("cudnn_backend.h", "cudnn_version.h"))
ROLES = ("runtime", "header", "import_lib", "static_lib", "license", "symlink")

# Where each role lands, per (target kind, platform): the layout contract.
LAYOUTS = {
    ("cuda", LINUX): {"runtime": "lib64", "symlink": "lib64",
                      "static_lib": "lib64", "header": "include",
                      "license": "share/doc/cudnn"},
    ("cuda", WINDOWS): {"runtime": "bin", "header": "include",
                        "import_lib": "lib/x64", "license": "doc/cudnn"},
    ("prefix", LINUX): {"runtime": "lib", "symlink": "lib",
                        "static_lib": "lib", "header": "include",
                        "license": "share/doc/cudnn"},
    ("prefix", WINDOWS): {"runtime": "Library/bin", "header": "Library/include",
                          "import_lib": "Library/lib",
                          "license": "Library/share/doc/cudnn"},
}


def role_of(platform, path, kind=FILE):
    """Role of an archive path (after the top folder), by the layout rules."""
    base = path.rsplit("/", 1)[-1]
    if path == "LICENSE":
        return "license"
    if path.startswith("include/") and base.endswith(".h"):
        return "header"
    if platform == LINUX and path.startswith("lib/"):
        if base.endswith(".a"):
            return "static_lib"
        if ".so" in base:
            return "symlink" if kind == SYMLINK else "runtime"
    if platform == WINDOWS:
        if path.startswith("bin/") and base.lower().endswith(".dll"):
            return "runtime"
        if path.startswith("lib/x64/") and base.lower().endswith(".lib"):
            return "import_lib"
    raise ValueError("no role for %s" % path)


def dest_of(target_kind, platform, path, role):
    return LAYOUTS[(target_kind, platform)][role] + "/" + path.rsplit("/", 1)[-1]
