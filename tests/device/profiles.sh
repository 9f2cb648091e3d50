#!/bin/bash
# Run ON THE ACCELERATOR MACHINE right after tests/device/run.sh, in the same
# command (it reuses the cuDNN 9.14 archive and manifest run.sh made from the
# machine's real files in $CDD_DEVICE_WORK):
#   bash tests/device/run.sh && bash tests/device/profiles.sh
# For docs/containers.md, What it saves: each install profile into a fresh
# prefix, its size and its tar layer's; two runtime installs with one --mtime
# compared byte for byte; an SBOM of each. The archive run.sh builds holds the
# shared libraries, headers and LICENSE only, so the static archives the
# machine has (libcudnn*_static*.a, if a -static package is installed) are
# listed by size beside it: what `full` adds on a real NVIDIA tarball.
set -u
ROOT=$(pwd)
CARRY=$ROOT/.device
OUT=${OUT:-$ROOT/device-out}
W=${CDD_DEVICE_WORK:-/root/cdd-device-work}
mkdir -p "$OUT"
exec > >(tee "$OUT/profiles.log") 2>&1
tool() { LD_LIBRARY_PATH="$CARRY/lib" "$CARRY/cudnn-deploy" "$@"; }
ARCH=$(ls "$W"/cudnn-linux-x86_64-*_cuda13-archive.tar.xz 2>/dev/null | head -1)
M=$W/manifest.json
[ -n "$ARCH" ] && [ -f "$M" ] || { echo "run tests/device/run.sh first"; exit 1; }
echo "archive: $ARCH ($(stat -c %s "$ARCH") bytes)"
EPOCH=1700000000
for p in full dev runtime runtime2; do
    prof=${p%2}
    T=$W/prof-$p
    rm -rf "$T" "$T.tar" && mkdir -p "$T" && touch -d @$((EPOCH - 5)) "$T"
    tool install --prefix "$T" --manifest "$M" --archive "$ARCH" \
        --profile "$prof" --mtime $EPOCH --no-verify -q || { echo "install $p failed"; exit 1; }
    tar --sort=name --owner=0 --group=0 --numeric-owner --exclude=./.cudnn-deploy \
        -cf "$T.tar" -C "$T" .
    echo "$p: tree $(du -sb --exclude=.cudnn-deploy "$T" | cut -f1) bytes," \
         "layer $(stat -c %s "$T.tar") bytes, sha256 $(sha256sum < "$T.tar" | cut -c1-16)"
    tool sbom --prefix "$T" -o "$OUT/sbom-$p.cdx.json" -q
    tool sbom --prefix "$T" --format spdx -o "$OUT/sbom-$p.spdx.json" -q
done
cmp -s "$W/prof-runtime.tar" "$W/prof-runtime2.tar" && echo "runtime layers: IDENTICAL" \
    || echo "runtime layers: DIFFER"
cmp -s "$OUT/sbom-runtime.cdx.json" "$OUT/sbom-runtime2.cdx.json" && echo "runtime SBOMs: IDENTICAL" \
    || echo "runtime SBOMs: DIFFER"
echo "== static archives on this machine (what full adds on a real tarball)"
ls -l /usr/lib/x86_64-linux-gnu/libcudnn*_static*.a 2>/dev/null || echo "none installed"
du -cb /usr/lib/x86_64-linux-gnu/libcudnn*_static*.a 2>/dev/null | tail -1
echo "== shared libraries"
du -cb /usr/lib/x86_64-linux-gnu/libcudnn*.so.9.* | tail -1
