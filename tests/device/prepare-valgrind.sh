#!/bin/sh
# Run HERE (the build machine), after `sh bench/prepare-device.sh` and a test
# build in build-test/: adds to .device/ what tests/device/valgrind.sh needs
# on the accelerator machine, which has no valgrind:
#   .device/valgrind/bin/valgrind.bin   Debian's valgrind, relocated
#   .device/valgrind/lib/               memcheck for amd64, its preloads and
#                                       default.supp (VALGRIND_LIB points here)
#   .device/vg/cudnn-deploy             the test build's binary (fault hook on)
set -eu
cd "$(dirname "$0")/../.."
[ -x build-test/cudnn-deploy ] || { echo "no build-test/cudnn-deploy" >&2; exit 2; }
V=.device/valgrind
rm -rf "$V" .device/vg && mkdir -p "$V/bin" "$V/lib" "$V/debs" .device/vg
(cd "$V/debs" && apt-get download -q valgrind >/dev/null 2>&1)
dpkg -x "$V"/debs/valgrind_*.deb "$V/unpacked"
cp "$V/unpacked/usr/bin/valgrind.bin" "$V/bin/"
for f in memcheck-amd64-linux vgpreload_core-amd64-linux.so \
         vgpreload_memcheck-amd64-linux.so default.supp; do
    cp "$V/unpacked/usr/libexec/valgrind/$f" "$V/lib/"
done
rm -rf "$V/debs" "$V/unpacked"
cp build-test/cudnn-deploy .device/vg/
du -sh .device
