#!/bin/bash
# Run ON THE ACCELERATOR MACHINE (H200, driver 580, CUDA 13.0 in
# /usr/local/cuda-13.0, real cuDNN 9.14 in /usr/lib/x86_64-linux-gnu), from
# the repository root, after tests/device/prepare.sh ran on the build machine
# and .device/ was carried over (the same set-up as tests/device/run.sh):
#   1. pack the machine's real cuDNN 9.14 in NVIDIA's 9.x tarball shape
#      (cudnn-linux-x86_64-9.14.0.<build>_cuda13-archive/ with include/ and
#      lib/ soname chains);
#   2. `releases` over the built-in catalog with the driver's own GPUs and
#      driver: the H200's choice (sm_90, driver 580);
#   3. a catalog folder = the built-in one (manifests/catalog/) plus a
#      redistrib_9.14.0.json naming our tarball (NVIDIA's 9.14 JSON is not
#      vendored: its digest is left as zeros) and 9.13's facts for 9.14;
#   4. install --cudnn 9.14 through the catalog path into a scratch copy of
#      the CUDA 13.0 tree, with --sha256 of our own tarball (the catalog
#      chooses; our digest pins; the manifest is made from the archive),
#      then verify --level bench, status --check, the receipt's selection.
# Outputs go to $OUT (or ./device-out).
set -u
. tests/device/common.sh
device_setup /root/cdd-device-catalog catalog.log
tool() { LD_LIBRARY_PATH="$CARRY/lib${EXTRA_LD:+:$EXTRA_LD}" "$CARRY/cudnn-deploy" "$@"; }

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
tool --version || exit 1

echo "== releases: what fits this machine (driver's GPUs and version)"
tool releases --cuda 13.0 9
tool --json releases --cuda 13.0 > "$OUT/releases-cuda13.json"; echo "releases exit $?"
tool releases --cuda 12.4 --gpu-cc 6.1 2>&1 | tail -3   # a Pascal box, for contrast

echo "== pack the real cuDNN in NVIDIA's 9.x shape"
LIBDIR=/usr/lib/x86_64-linux-gnu
MAIN_REAL=$(readlink -f $LIBDIR/libcudnn.so.9)
FULL=${MAIN_REAL##*libcudnn.so.}          # 9.14.0
PKG=$(dpkg-query -W -f='${Version}\n' 'libcudnn9-cuda-13' 2>/dev/null | head -1)
BUILD=$(echo "$PKG" | sed -n 's/^[0-9]*\.[0-9]*\.[0-9]*\.\([0-9]*\).*/\1/p')
VER=$FULL.${BUILD:-64}
LABEL=$FULL
TOP=cudnn-linux-x86_64-${VER}_cuda13-archive
A=$W/pkg/$TOP
mkdir -p "$A/lib" "$A/include"
for f in $LIBDIR/libcudnn*.so.$FULL; do
    base=$(basename "$f"); stem=${base%.so.$FULL}
    cp "$f" "$A/lib/"; ln -s "$base" "$A/lib/$stem.so.9"; ln -s "$stem.so.9" "$A/lib/$stem.so"
done
for h in $(ls /usr/include/x86_64-linux-gnu/cudnn*_v9.h /usr/include/cudnn*_v9.h 2>/dev/null); do
    b=$(basename "$h"); cp -L "$h" "$A/include/${b%_v9.h}.h"
done
[ -f "$A/include/cudnn_version.h" ] || cp -L /usr/include/cudnn_version.h "$A/include/" 2>/dev/null
LIC=$(ls /usr/share/doc/libcudnn9*cuda-13*/copyright 2>/dev/null | head -1)
if [ -n "$LIC" ]; then cp "$LIC" "$A/LICENSE"; else echo "NVIDIA cuDNN license" > "$A/LICENSE"; fi
ARCH=$W/$TOP.tar.xz
(cd "$W/pkg" && tar -cf - "$TOP" | xz -T0 -0 > "$ARCH")
SHA=$(sha256sum "$ARCH" | cut -d' ' -f1); SIZE=$(stat -c %s "$ARCH")
ls -l "$ARCH"; echo "sha256 $SHA"

echo "== a catalog folder: the built-in one plus 9.14 for our tarball"
CAT=$W/catalog
cp -r "$ROOT/manifests/catalog" "$CAT"
python3 - "$CAT" "$LABEL" "$VER" "$TOP.tar.xz" "$SIZE" <<'PY'
import json, sys
cat, label, ver, name, size = sys.argv[1:]
doc = {"release_label": label, "release_product": "cudnn",
       "cudnn": {"version": ver, "linux-x86_64": {"cuda13": {
           "relative_path": "cudnn/linux-x86_64/" + name,
           "sha256": "0" * 64, "size": size}}}}
json.dump(doc, open("%s/redistrib_%s.json" % (cat, label), "w"), indent=4)
facts = json.load(open(cat + "/facts.json"))
facts["releases"][label] = dict(facts["releases"]["9.13.0"],
                                inherited_from="9.13.0")
json.dump(facts, open(cat + "/facts.json", "w"), indent=2)
PY

echo "== copy of the CUDA 13.0 tree"
CUDA=$W/cuda-13.0
cp -al /usr/local/cuda-13.0 "$CUDA" 2>/dev/null || cp -a /usr/local/cuda-13.0 "$CUDA"

echo "== install --cudnn 9.14 through the catalog, --sha256 for our tarball"
t0=$(date +%s.%N)
tool --json install --cuda-root "$CUDA" --cudnn 9.14 --catalog "$CAT" \
    --archive "$ARCH" --sha256 "$SHA" > "$OUT/catalog-install.json"
rc=$?; echo "install exit $rc in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
python3 - "$OUT/catalog-install.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
print("selection:", d.get("selection"))
for c in d["checks"]:
    if c["name"] in ("catalog", "archive") or c["status"] != "pass":
        print("%-4s %s: %s" % (c["status"], c["name"], c["detail"]))
PY

echo "== verify --level bench"
EXTRA_LD=$CUDA/lib64 tool --json verify --cuda-root "$CUDA" --level bench > "$OUT/catalog-verify-bench.json"
echo "verify exit $?"
python3 -c "
import json,sys; d=json.load(open('$OUT/catalog-verify-bench.json'))
print('ok', d['ok']); [print(c['status'], c['name'], c['detail']) for c in d['checks'] if c['status']!='pass' or c['name'].startswith(('bench','gpu.'))]"
echo "== status --check and the receipt's selection"
tool status --cuda-root "$CUDA" --check; echo "status exit $?"
python3 -c "import json; print(json.load(open('$CUDA/.cudnn-deploy/receipt.json')).get('selection'))"
