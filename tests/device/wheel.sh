#!/bin/bash
# Run ON THE ACCELERATOR MACHINE (H200, driver 580, CUDA 13.0 in
# /usr/local/cuda-13.0, real cuDNN 9.14 in /usr/lib/x86_64-linux-gnu, and a
# PyTorch wheel whose nvidia-cudnn-cu1x brings cuDNN 9.19 in the python3 on
# PATH), from the repository root, after tests/device/prepare.sh ran on the
# build machine and .device/ was carried over (as for tests/device/run.sh):
#   1. find the wheel's cuDNN (site-packages/nvidia/cudnn/lib) and version
#      (its dist-info), and the CUDA major it is built for;
#   2. pack its libraries in NVIDIA's 9.x tarball shape
#      (cudnn-linux-x86_64-<version>_cuda<major>-archive/: include/,
#      lib/libcudnn*.so.<x.y.z> with the .so.9 and .so links, LICENSE);
#   3. a catalog folder = the built-in one plus a redistrib_<label>.json
#      naming our tarball (digest zeros: we pin with --sha256) and the
#      facts of the nearest catalog release;
#   4. a CUDA tree of that major: a copy of /usr/local/cuda-13.0 for a cu13
#      wheel, else one made from the wheel's own CUDA runtime and cuBLAS
#      (site-packages/nvidia/{cuda_runtime,cublas}/lib) with a version.json;
#   5. install --cudnn <label> through the catalog path with --sha256,
#      verify --level bench (gpu.fit and load.barename included);
#   6. the bare-name check (item 2 of issue 19) in the wheel's Python
#      environment: doctor --json as is, then with LD_LIBRARY_PATH naming
#      the system's cuDNN 9.14 folder (pytorch/pytorch#188892's mix: the
#      wheel's bare-name loads then land on 9.14 copies and must warn).
# Outputs go to $OUT/wheel (or ./device-out/wheel).
set -u
ROOT=$(pwd)
CARRY=$ROOT/.device
OUT=${OUT:-$ROOT/device-out}/wheel
mkdir -p "$OUT"
W=${CDD_DEVICE_WORK:-/root/cdd-device-wheel}
rm -rf "$W" && mkdir -p "$W"
exec > >(tee "$OUT/wheel.log") 2>&1
tool() { LD_LIBRARY_PATH="$CARRY/lib${EXTRA_LD:+:$EXTRA_LD}" "$CARRY/cudnn-deploy" "$@"; }
PY=${PYTHON:-python3}

echo "== machine"
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader
tool --version || exit 1

echo "== the wheel's cuDNN"
eval "$($PY - <<'PYEOF'
import importlib.metadata as md, os, sys
import nvidia.cudnn as c
d = os.path.dirname(c.__file__) if getattr(c, "__file__", None) else list(c.__path__)[0]
dist = None
for name in ("nvidia-cudnn-cu13", "nvidia-cudnn-cu12", "nvidia-cudnn-cu11"):
    try:
        dist = (name, md.version(name)); break
    except md.PackageNotFoundError:
        pass
if not dist:
    sys.exit("no nvidia-cudnn-cu1x distribution")
print("WHEEL_DIR=%s" % d)
print("WHEEL_SITE=%s" % os.path.dirname(os.path.dirname(d)))
print("WHEEL_VER=%s" % dist[1])
print("WHEEL_CUDA=%s" % dist[0][-2:])
PYEOF
)" || exit 1
echo "dir $WHEEL_DIR version $WHEEL_VER cuda $WHEEL_CUDA"
ls -l "$WHEEL_DIR/lib"
readelf -d "$WHEEL_DIR/lib/libcudnn.so.9" | grep -E 'RPATH|RUNPATH|SONAME' || echo "(no RPATH/RUNPATH)"
FULL=$(echo "$WHEEL_VER" | cut -d. -f1-3)     # 9.19.0
LABEL=$FULL
VER=$WHEEL_VER

echo "== pack the wheel's libraries in NVIDIA's 9.x shape"
TOP=cudnn-linux-x86_64-${VER}_cuda${WHEEL_CUDA}-archive
A=$W/pkg/$TOP
mkdir -p "$A/lib" "$A/include"
for f in "$WHEEL_DIR"/lib/libcudnn*.so.9; do
    base=$(basename "$f"); stem=${base%.so.9}
    cp -L "$f" "$A/lib/$stem.so.$FULL"
    ln -s "$stem.so.$FULL" "$A/lib/$stem.so.9"; ln -s "$stem.so.9" "$A/lib/$stem.so"
done
cp -L "$WHEEL_DIR"/include/cudnn*.h "$A/include/" 2>/dev/null || echo "(no headers in the wheel)"
LIC=$(ls "$WHEEL_SITE"/nvidia_cudnn_cu*-"$WHEEL_VER".dist-info/License.txt 2>/dev/null | head -1)
if [ -n "$LIC" ]; then cp "$LIC" "$A/LICENSE"; else echo "NVIDIA cuDNN license" > "$A/LICENSE"; fi
ARCH=$W/$TOP.tar.xz
(cd "$W/pkg" && tar -cf - "$TOP" | xz -T0 -0 > "$ARCH")
SHA=$(sha256sum "$ARCH" | cut -d' ' -f1); SIZE=$(stat -c %s "$ARCH")
ls -l "$ARCH"; echo "sha256 $SHA"

echo "== a catalog folder: the built-in one plus $LABEL for our tarball"
CAT=$W/catalog
cp -r "$ROOT/manifests/catalog" "$CAT"
$PY - "$CAT" "$LABEL" "$VER" "$TOP.tar.xz" "$SIZE" "cuda$WHEEL_CUDA" <<'PYEOF'
import json, sys
cat, label, ver, name, size, variant = sys.argv[1:]
doc = {"release_label": label, "release_product": "cudnn",
       "cudnn": {"version": ver, "linux-x86_64": {variant: {
           "relative_path": "cudnn/linux-x86_64/" + name,
           "sha256": "0" * 64, "size": size}}}}
json.dump(doc, open("%s/redistrib_%s.json" % (cat, label), "w"), indent=4)
facts = json.load(open(cat + "/facts.json"))
if label not in facts["releases"]:
    key = lambda v: tuple(int(x) for x in v.split("."))
    near = min((r for r in facts["releases"] if r.startswith("9.")),
               key=lambda r: abs(key(r)[1] - key(label)[1]))
    facts["releases"][label] = dict(facts["releases"][near], inherited_from=near)
    print("facts for", label, "from", near)
json.dump(facts, open(cat + "/facts.json", "w"), indent=2)
PYEOF

echo "== a CUDA $WHEEL_CUDA tree"
CUDA=$W/cuda-$WHEEL_CUDA
if [ "$WHEEL_CUDA" = 13 ]; then
    cp -al /usr/local/cuda-13.0 "$CUDA" 2>/dev/null || cp -a /usr/local/cuda-13.0 "$CUDA"
else
    mkdir -p "$CUDA/lib64" "$CUDA/include" "$CUDA/bin"
    for p in cuda_runtime cublas cuda_nvrtc nvjitlink; do
        [ -d "$WHEEL_SITE/nvidia/$p/lib" ] && cp -a "$WHEEL_SITE/nvidia/$p/lib/." "$CUDA/lib64/"
    done
    CV=$($PY -c "import torch; print(torch.version.cuda)" 2>/dev/null || echo "$WHEEL_CUDA.0")
    printf '{"cuda": {"name": "CUDA SDK", "version": "%s.0"}}\n' "$CV" > "$CUDA/version.json"
    ls "$CUDA/lib64" | head -20
fi

echo "== install --cudnn $LABEL through the catalog, --sha256 for our tarball"
tool --json install --cuda-root "$CUDA" --cudnn "$LABEL" --catalog "$CAT" \
    --archive "$ARCH" --sha256 "$SHA" --no-verify > "$OUT/install.json"
echo "install exit $?"
$PY -c "import json; d=json.load(open('$OUT/install.json')); print('selection:', d.get('selection')); print(d.get('error'))"

echo "== verify --level bench"
EXTRA_LD=$CUDA/lib64 tool --json verify --cuda-root "$CUDA" --level bench --catalog "$CAT" > "$OUT/verify-bench.json"
echo "verify exit $?"
$PY -c "
import json; d=json.load(open('$OUT/verify-bench.json'))
print('ok', d['ok'], 'gpu_fit', d.get('gpu_fit'), d.get('gpu_fit_supports'))
[print(c['status'], c['name'], c['detail']) for c in d['checks'] if c['status']!='pass' or c['name'].startswith(('bench','gpu.','load.barename'))]"

echo "== bare names in the wheel's Python environment (doctor)"
tool --json doctor --catalog "$CAT" > "$OUT/doctor.json"; echo "doctor exit $?"
LD_LIBRARY_PATH_SYS=/usr/lib/x86_64-linux-gnu
LD_LIBRARY_PATH="$CARRY/lib:$LD_LIBRARY_PATH_SYS" "$CARRY/cudnn-deploy" --json doctor \
    --catalog "$CAT" > "$OUT/doctor-system-first.json"; echo "doctor (system cuDNN on LD_LIBRARY_PATH) exit $?"
for f in doctor doctor-system-first; do
    echo "-- $f"
    $PY -c "
import json; d=json.load(open('$OUT/$f.json'))
[print(c['status'], c['name'], c['detail']) for c in d['checks'] if c['name'].startswith(('python.barename', 'fit '))]"
done
