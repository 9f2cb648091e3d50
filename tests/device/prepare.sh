#!/bin/sh
# Run HERE (the build machine): build the tool in Release and gather what the
# accelerator machine lacks (it has libcurl, OpenSSL, zlib and xz, but neither
# libarchive, cJSON nor ISA-L, and its liblzma may predate the threaded
# decoder of xz 5.4 the tool links) into .device/, which the device run carries:
#   .device/cudnn-deploy
#   .device/lib/libarchive.so.13, libcjson.so.1, libisal.so.2, liblzma.so.5
#   (Debian's)
# .device/ is listed in .git/info/exclude so it never lands in a commit.
set -eu
cd "$(dirname "$0")/../.."
# (--git-path: in a worktree .git is a file, not a folder)
EXCLUDE=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$EXCLUDE")"
grep -qx '/.device/' "$EXCLUDE" 2>/dev/null || echo '/.device/' >> "$EXCLUDE"
cmake -S . -B build-device -DCMAKE_BUILD_TYPE=Release -DCDD_BUILD_TESTS=OFF >/dev/null
cmake --build build-device -j "$(nproc)" >/dev/null
rm -rf .device && mkdir -p .device/lib .device/debs
cp build-device/cudnn-deploy .device/
(cd .device/debs && apt-get download -q libarchive13 libcjson1 libisal2 liblzma5 >/dev/null)
for d in .device/debs/*.deb; do dpkg -x "$d" .device/unpacked; done
cp -L .device/unpacked/usr/lib/x86_64-linux-gnu/libarchive.so.13 \
      .device/unpacked/usr/lib/x86_64-linux-gnu/libcjson.so.1 \
      .device/unpacked/usr/lib/x86_64-linux-gnu/libisal.so.2 \
      .device/unpacked/lib/x86_64-linux-gnu/liblzma.so.5 .device/lib/
rm -rf .device/debs .device/unpacked
cp tests/device/run.sh .device/
ls -la .device .device/lib
