#!/bin/bash
# Run ON THE ACCELERATOR MACHINE after tests/device/run.sh (which leaves its
# archive, manifest and CUDA tree copy in $CDD_DEVICE_WORK): the GPU layer
# run apart (isolate.h) with the real driver and cuDNN 9.14.
#   1. install again, then verify at the gpu level five times: the forked
#      child's checks pass, with the wall time of each run;
#   2. verify --gpu-timeout 0.05: a bound far under a real cuInit stops the
#      probe and the layer's child, as failing checks, and verify still ends;
#   3. the e2e GPU cases (test_verify Gpu and InstallAndLevels) on a host with
#      a real libcuda: the fakes must never meet it (NO_DRIVER), when a C
#      compiler is there to build the fakes.
# Outputs go to $OUT (or ./device-out).
set -u
. tests/device/common.sh
device_setup /root/cdd-device-work isolate.log keep
tool() { LD_LIBRARY_PATH="$CARRY/lib:$CUDA/lib64" "$CARRY/cudnn-deploy" "$@"; }

CUDA=$W/cuda-13.0
ARCH=$(ls "$W"/*.tar.xz | head -1)
[ -f "$ARCH" ] && [ -d "$CUDA" ] || { echo "run tests/device/run.sh first"; exit 1; }
echo "== install again ($ARCH)"
tool install --cuda-root "$CUDA" --manifest "$W/manifest.json" \
    --archive "$ARCH" --no-verify | tail -2
echo "== verify --level gpu, five runs"
for i in 1 2 3 4 5; do
    t0=$(date +%s.%N)
    tool --json verify --cuda-root "$CUDA" --level gpu >"$W/v$i.json" 2>/dev/null
    rc=$?
    echo "run $i: exit $rc in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
done
python3 - "$W/v1.json" <<'PY'
import json, sys
for c in json.load(open(sys.argv[1]))["checks"]:
    if c["name"].startswith("gpu"):
        print("%-4s %s: %s" % (c["status"], c["name"], c["detail"][:160]))
PY
echo "== verify --gpu-timeout 0.05 (far under a real cuInit)"
t0=$(date +%s.%N)
tool verify --cuda-root "$CUDA" --level gpu --gpu-timeout 0.05 2>&1 |
    grep -E "gpu|Verify" | cut -c1-300
echo "exit ${PIPESTATUS[0]} in $(awk "BEGIN{print $(date +%s.%N) - $t0}") s"
echo "== verify --gpu-timeout 30 (a bound that a working GPU keeps)"
tool verify --cuda-root "$CUDA" --level bench --gpu-timeout 30 2>&1 |
    grep -E "gpu|bench|Verify" | cut -c1-200
echo "exit ${PIPESTATUS[0]}"
tool uninstall --cuda-root "$CUDA" | tail -1

echo "== test_verify on a host with a real driver"
if command -v cc >/dev/null 2>&1 || command -v gcc >/dev/null 2>&1; then
    # The tests clear LD_LIBRARY_PATH (a knob of theirs): a wrapper gives
    # the binary its carried libraries.
    wrap=$W/cdd-wrapper.sh
    printf '#!/bin/sh\nLD_LIBRARY_PATH=%s/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec %s/cudnn-deploy "$@"\n' \
        "$CARRY" "$CARRY" >"$wrap"
    chmod +x "$wrap"
    CDD_BIN=$wrap CDD_EXE=$CARRY/cudnn-deploy CDD_TEST_TMP=/root/cdd-e2e \
        python3 tests/e2e/test_verify.py Gpu InstallAndLevels 2>&1 | tail -15
else
    echo "no C compiler here: the fakes cannot be built (not run)"
fi
echo "== done"
