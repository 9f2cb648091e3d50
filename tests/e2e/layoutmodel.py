"""The tests' own model of the layout rules (docs/manifest.md, Layouts):
platforms, the sub-libraries and headers of cuDNN 8, the roles of archive
files, and where each role lands per kind of target. It is written apart
from the tool's src/core/layout.c, so an install is checked against a second
reading of the contract, not against itself.
"""

from archives import FILE, SYMLINK

LINUX = "linux-x86_64"
WINDOWS = "windows-x86_64"
SBSA = "linux-sbsa"
AARCH64 = "linux-aarch64"
WINDOWS_ARM64 = "windows-arm64"
PLATFORMS = (WINDOWS, LINUX, SBSA, AARCH64, WINDOWS_ARM64)
# The machine of each platform's libraries: ELF e_machine / PE machine.
ELF_X86_64, ELF_AARCH64 = 62, 183
PE_AMD64, PE_ARM64 = 0x8664, 0xAA64
MACHINE = {LINUX: ELF_X86_64, SBSA: ELF_AARCH64, AARCH64: ELF_AARCH64,
           WINDOWS: PE_AMD64, WINDOWS_ARM64: PE_ARM64}


def is_windows(platform):
    return platform.startswith("windows-")


def family(platform):
    """LINUX or WINDOWS: the layout rules of the platform's archives."""
    return WINDOWS if is_windows(platform) else LINUX


# cuDNN 9's sub-libraries as its archives hold them (conda-forge/
# cudnn-feedstock recipe/meta.yaml for 9.0-9.15; engines_tensor_ir and ext
# in the newer releases) and their version-check symbols (None: none).
SUBLIBS9 = ("graph", "ops", "cnn", "adv", "engines_precompiled",
            "engines_runtime_compiled", "heuristic")
SUBLIBS9_NEW = SUBLIBS9 + ("engines_tensor_ir", "ext")
CHECK_SYMBOLS9 = {"graph": "cudnnGraphVersionCheck",
                  "ops": "cudnnOpsVersionCheck",
                  "cnn": "cudnnCnnVersionCheck",
                  "adv": "cudnnAdvVersionCheck"}
HEADERS9 = ("cudnn.h", "cudnn_adv.h", "cudnn_backend.h", "cudnn_cnn.h",
            "cudnn_graph.h", "cudnn_ops.h", "cudnn_version.h")
# Linux 9.x tarballs also carry each header's _v9.h twin.
HEADERS9_LINUX = HEADERS9 + tuple(h[:-2] + "_v9.h" for h in HEADERS9)
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
    # A CUDA 13 Windows tree keeps its DLLs in bin/x64: cuDNN's go beside.
    ("cuda-x64", WINDOWS): {"runtime": "bin/x64", "header": "include",
                            "import_lib": "lib/x64", "license": "doc/cudnn"},
}
LAYOUT_NAMES = {("cuda", LINUX): "cuda-linux", ("cuda", WINDOWS): "cuda-windows",
                ("prefix", LINUX): "prefix-linux",
                ("prefix", WINDOWS): "prefix-windows",
                ("cuda-x64", WINDOWS): "cuda-windows-x64"}


def role_of(platform, path, kind=FILE):
    """Role of an archive path (after the top folder), by the layout rules."""
    base = path.rsplit("/", 1)[-1]
    platform = family(platform)
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
        # bin/ up to 9.22, bin/x64/ from 9.23 on.
        if (path.count("/") == 1 or path.startswith("bin/x64/")) and \
                path.startswith("bin/") and base.lower().endswith(".dll"):
            return "runtime"
        if path.startswith("lib/x64/") and base.lower().endswith(".lib"):
            return "import_lib"
    raise ValueError("no role for %s" % path)


def dest_of(target_kind, platform, path, role):
    """target_kind: "cuda", "prefix", or "cuda-x64" (a Windows CUDA tree
    whose cudart lives in bin/x64)."""
    return (LAYOUTS[(target_kind, family(platform))][role] + "/"
            + path.rsplit("/", 1)[-1])
