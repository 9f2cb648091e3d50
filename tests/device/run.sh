#!/bin/bash
# Run ON THE ACCELERATOR MACHINE (H200, driver 580, CUDA 13.0 in
# /usr/local/cuda-13.0, real cuDNN 9.14 in /usr/lib/x86_64-linux-gnu), from
# the repository root, after tests/device/prepare.sh ran on the build machine
# and .device/ was carried over:
#   1. make a cuDNN 9 Linux archive in NVIDIA's layout from the machine's real
#      cuDNN files (lib/ with real .so.9.x.y files and symlink chains,
#      include/, LICENSE),
#   2. write its manifest with `manifest create` (verify section for cuDNN 9),
#   3. install it into a copy of the CUDA 13.0 tree (install verifies at the
#      end, level gpu), then `verify --level bench` (FP32, TF32 and FP16
#      convolutions, the 5x rule, gpu.arch), the gpu.arch report
#      cross-checked with `cuobjdump --list-elf --list-ptx` of every
#      installed library, `doctor`, `status --check`, `uninstall`.
# Outputs go to $OUT (or ./device-out): the logs and JSON reports.
set -u
. tests/device/common.sh
device_setup /root/cdd-device-work run.log

tool() { LD_LIBRARY_PATH="$CARRY/lib${EXTRA_LD:+:$EXTRA_LD}" "$CARRY/cudnn-deploy" "$@"; }

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
uname -a
echo "== tool dependencies"
LD_LIBRARY_PATH=$CARRY/lib ldd "$CARRY/cudnn-deploy" | grep -E "not found|archive|cjson|curl|crypto" || true
tool --version || exit 1

echo "== the machine's cuDNN"
LIBDIR=/usr/lib/x86_64-linux-gnu
ls -l $LIBDIR/libcudnn*.so* | head -40
CUDNN_PKG_VER=$(dpkg-query -W -f='${Version}\n' 'libcudnn9-cuda-13' 2>/dev/null | head -1)
echo "package version: ${CUDNN_PKG_VER:-unknown}"
MAIN_REAL=$(readlink -f $LIBDIR/libcudnn.so.9)
FULL=${MAIN_REAL##*libcudnn.so.}          # 9.14.0
BUILD=$(echo "$CUDNN_PKG_VER" | sed -n 's/^[0-9]*\.[0-9]*\.[0-9]*\.\([0-9]*\).*/\1/p')
VER=$FULL${BUILD:+.$BUILD}
TOP=cudnn-linux-x86_64-${VER}_cuda13-archive
echo "building $TOP"
A=$W/pkg/$TOP
mkdir -p "$A/lib" "$A/include"
for f in $LIBDIR/libcudnn*.so.$FULL; do
    base=$(basename "$f")               # libcudnn_ops.so.9.14.0
    stem=${base%.so.$FULL}              # libcudnn_ops
    cp "$f" "$A/lib/"
    ln -s "$base" "$A/lib/$stem.so.9"
    ln -s "$stem.so.9" "$A/lib/$stem.so"
done
# Headers: the packages install them as cudnn*_v9.h behind alternatives.
for h in $(ls /usr/include/x86_64-linux-gnu/cudnn*_v9.h /usr/include/cudnn*_v9.h 2>/dev/null); do
    b=$(basename "$h"); cp -L "$h" "$A/include/${b%_v9.h}.h"
done
[ -f "$A/include/cudnn_version.h" ] || cp -L /usr/include/cudnn_version.h "$A/include/" 2>/dev/null
ls "$A/include"
LIC=$(ls /usr/share/doc/libcudnn9*cuda-13*/copyright 2>/dev/null | head -1)
if [ -n "$LIC" ]; then cp "$LIC" "$A/LICENSE"; else echo "NVIDIA cuDNN license" > "$A/LICENSE"; fi
ARCH=$W/$TOP.tar.xz
t0=$(date +%s.%N)
(cd "$W/pkg" && tar -cf - "$TOP" | xz -T0 -0 > "$ARCH")
t1=$(date +%s.%N)
ls -l "$ARCH"; echo "archive built in $(awk "BEGIN{print $t1 - $t0}") s"

echo "== manifest create"
tool manifest create "$ARCH" -o "$W/manifest.json" || exit 1
cp "$W/manifest.json" "$OUT/manifest-cudnn9.json"
grep -A40 '"verify"' "$W/manifest.json"

echo "== copy of the CUDA 13.0 tree"
CUDA=$W/cuda-13.0
cp -al /usr/local/cuda-13.0 "$CUDA" 2>/dev/null || cp -a /usr/local/cuda-13.0 "$CUDA"
ls -l "$CUDA" | head; cat "$CUDA/version.json" | head -5

echo "== install (verifies at the end, default level)"
t0=$(date +%s.%N)
tool --json install --cuda-root "$CUDA" --manifest "$W/manifest.json" --archive "$ARCH" > "$OUT/install.json"
rc=$?; echo "install exit $rc in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"

echo "== verify --level bench, tree's lib64 first on LD_LIBRARY_PATH"
EXTRA_LD=$CUDA/lib64 tool verify --cuda-root "$CUDA" --level bench
echo "verify exit $?"
EXTRA_LD=$CUDA/lib64 tool --json verify --cuda-root "$CUDA" --level bench > "$OUT/verify-bench.json" 2>/dev/null
echo "verify --json exit $?"

echo "== the bench's three precisions and the GPU code check (from verify-bench.json)"
python3 - "$OUT/verify-bench.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc["checks"]:
    if c["name"] in ("gpu.device", "gpu.arch", "bench", "bench.tf32",
                     "bench.fp16") or c["name"].startswith(("load.delay",
                                                            "load.resource")):
        print("%-4s %s: %s" % (c["status"], c["name"], c["detail"]))
PY

echo "== gpu.arch cross-checked with cuobjdump --list-elf --list-ptx"
# cuobjdump names each cubin ...sm_NN[a].cubin and each PTX ...sm_NN.ptx;
# the tool reads each fatbinary entry header's architecture and its
# arch-/family-specific flags. cuobjdump 13.0 names a family-specific cubin
# (flag 0x200000, the tool's sm_NNNf) by its base architecture, sm_NNN
# (seen on the H200 machine: libcudnn_engines_precompiled's sm_100f and
# sm_120f cubins are listed as sm_100 and sm_120), so the tool's "f" is
# folded into the base before the sets are compared; "a" must match.
# The listings go into one tarball ($OUT holds few files).
CUOBJDUMP=${CUOBJDUMP:-/usr/local/cuda-13.0/bin/cuobjdump}
LISTINGS=$(mktemp -d)
for f in "$CUDA"/lib64/libcudnn*.so.9; do
    echo "--- $(basename "$f")"
    "$CUOBJDUMP" --list-elf --list-ptx "$f" 2>&1 | tee "$LISTINGS/cuobjdump-$(basename "$f").txt" | wc -l
done
tar -C "$LISTINGS" -czf "$OUT/cuobjdump-listings.tar.gz" .
python3 - "$LISTINGS" "$OUT/verify-bench.json" <<'PY'
import glob, json, os, re, sys
out, report = sys.argv[1], sys.argv[2]
sass, ptx, entries = set(), set(), 0
for path in sorted(glob.glob(os.path.join(out, "cuobjdump-*.txt"))):
    for line in open(path, errors="replace"):
        m = re.search(r"(ELF|PTX) file\s+\d+:.*\.sm_(\d+)([a-z]?)\.(cubin|ptx)", line)
        if not m:
            continue
        entries += 1
        if m.group(1) == "ELF":
            sass.add((int(m.group(2)), m.group(3)))
        else:
            ptx.add(int(m.group(2)))
fmt = lambda s: ", ".join("sm_%d%s" % a for a in sorted(s))
print("cuobjdump: %d entries; SASS %s; PTX %s"
      % (entries, fmt(sass), ", ".join("compute_%d" % a for a in sorted(ptx))))
doc = json.load(open(report))
arch = [c for c in doc["checks"] if c["name"] == "gpu.arch"]
detail = arch[0]["detail"] if arch else ""
# The union the check lists: "SASS sm_70, sm_75, ...; PTX compute_90 (ISA 8.8)"
lists = re.findall(r"SASS (sm_\d+[af]?(?:, sm_\d+[af]?)*)", detail)
ours_sass = {(int(a), v) for a, v in re.findall(r"sm_(\d+)([af]?)", max(lists, key=len))} if lists else set()
ours_ptx = {int(a) for a in re.findall(r"compute_(\d+) \(ISA", detail)}
print("cudnn-deploy gpu.arch: SASS %s; PTX %s"
      % (fmt(ours_sass),
         ", ".join("compute_%d" % a for a in sorted(ours_ptx))))
folded = {(a, "" if v == "f" else v) for a, v in ours_sass}
same = folded == sass and ours_ptx == ptx
print("cross-check: %s" % ("AGREE" if same else "DIFFER"))
sys.exit(0 if same else 1)
PY
echo "cross-check exit $?"

echo "== verify without the tree on the path (the system cuDNN shadows ours)"
tool verify --cuda-root "$CUDA" --level load 2>&1 | grep -E "search|Verify"

echo "== doctor, with the tree as target (what else on this machine holds cuDNN)"
tool doctor --cuda-root "$CUDA"
echo "doctor exit $?"
tool --json doctor --cuda-root "$CUDA" > "$OUT/doctor.json" 2>/dev/null

echo "== status --check, uninstall"
tool status --cuda-root "$CUDA" --check | tail -3; echo "status exit $?"
tool uninstall --cuda-root "$CUDA" | tail -2; echo "uninstall exit $?"
ls "$CUDA/lib64/" | grep -c cudnn || true
echo "== done"
