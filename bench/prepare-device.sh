#!/bin/sh
# Run HERE (the build machine) before benchmarking on the accelerator
# machine, which has python3 but neither unzip nor bsdtar (nor libarchive and
# cJSON, which tests/device/prepare.sh brings): this adds Debian's unzip,
# bsdtar and GNU time with the libraries they need to .device/bench/, which
# the device run carries along with .device/:
#   .device/bench/bin/{unzip,bsdtar,time}
#   .device/bench/lib/*.so*   (given to the timed programs only: --lib-path)
# Then, on the device (the command is in docs/performance.md):
#   python3 bench/bench.py .device/cudnn-deploy --lib-path .device/lib ...
set -eu
cd "$(dirname "$0")/.."
sh tests/device/prepare.sh >/dev/null
B=.device/bench
rm -rf "$B" && mkdir -p "$B/bin" "$B/lib" "$B/debs"
# bsdtar's libarchive (3.6) is the one .device/lib already has; these are
# what it and unzip link beyond what any Linux has (libc, zlib).
(cd "$B/debs" && apt-get download -q unzip libarchive-tools time \
    libacl1 libbz2-1.0 liblz4-1 liblzma5 libnettle8 libzstd1 libxml2 \
    libicu72 >/dev/null)
for d in "$B"/debs/*.deb; do dpkg -x "$d" "$B/unpacked"; done
cp "$B/unpacked/usr/bin/unzip" "$B/unpacked/usr/bin/bsdtar" \
   "$B/unpacked/usr/bin/time" "$B/bin/"
# Only the sonames the programs load (the carried tree is limited to 64 MiB).
for so in libnettle.so.8 libacl.so.1 liblzma.so.5 libzstd.so.1 liblz4.so.1 \
          libbz2.so.1.0 libxml2.so.2 libicuuc.so.72 libicudata.so.72; do
    cp -L "$(find "$B/unpacked" -name "$so" | head -1)" "$B/lib/"
done
cp .device/lib/* "$B/lib/"
rm -rf "$B/debs" "$B/unpacked"
du -sh .device
