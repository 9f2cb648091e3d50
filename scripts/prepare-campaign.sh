#!/bin/sh
# Run HERE (the build machine) before issue 18's long campaigns on the
# device host, which has python3 and a C runtime but neither valgrind,
# strace, libarchive nor cJSON, and cannot build: tests/device/prepare.sh
# (the release binary, .device/lib), then
#   .device/failmalloc.so                 the malloc shim (tests/shim/)
#   .device/build-valgrind/cudnn-deploy   the test build (fault hook on) the
#                                         e2e scripts run under memcheck
#   .device/valgrind/bin/valgrind{,.bin}  Debian's valgrind launcher, and of
#   .device/valgrind/libexec/             its tools only memcheck for amd64:
#       memcheck-amd64-linux, vgpreload_core-amd64-linux.so,
#       vgpreload_memcheck-amd64-linux.so, default.supp  (VALGRIND_LIB)
#   .device/valgrind/client.tar.xz        Debian's ld.so, the test build's
#                                         libraries with Debian's libc, and
#                                         the debug files of ld.so and libc
#                                         beside them
#   .device/py/                           Debian's python3-jsonschema with
#                                         attrs and pyrsistent (pure Python
#                                         there: pyrsistent falls back when its
#                                         C part is for another python), for
#                                         test_sbom's and test_layouts' schema
#                                         checks (CDD_TEST_PYLIB, cddenv.py)
# strace is not carried: neither the malloc sweep nor test_tamper,
# test_parallel, test_kill use it (torture.py's strace categories and
# test_identity do). Then, on the device: tests/device/campaign.sh.
set -eu
cd "$(dirname "$0")/.."
sh tests/device/prepare.sh >/dev/null
D=.device
cc -O2 -shared -fPIC -o "$D/failmalloc.so" tests/shim/failmalloc.c -ldl
cmake -S . -B build-valgrind -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCDD_FAULT_INJECTION=ON >/dev/null
cmake --build build-valgrind -j "$(nproc)" --target cudnn-deploy >/dev/null
mkdir -p "$D/build-valgrind"
cp build-valgrind/cudnn-deploy "$D/build-valgrind/"
V=$D/valgrind
rm -rf "$V" && mkdir -p "$V/bin" "$V/libexec" "$V/debs"
(cd "$V/debs" && apt-get download -q valgrind >/dev/null 2>&1)
dpkg -x "$V"/debs/valgrind_*.deb "$V/unpacked"
cp "$V/unpacked/usr/bin/valgrind" "$V/unpacked/usr/bin/valgrind.bin" "$V/bin/"
for f in memcheck-amd64-linux vgpreload_core-amd64-linux.so \
         vgpreload_memcheck-amd64-linux.so default.supp; do
    cp "$V/unpacked/usr/libexec/valgrind/$f" "$V/libexec/"
done
rm -rf "$V/debs" "$V/unpacked"
# The client's own C library. The device host's ld.so (Ubuntu 24.04) is
# stripped, and memcheck cannot start a program without the dynamic
# linker's symbols; Debian's are in libc6-dbg. So the test build runs there
# on Debian's dynamic linker, started explicitly (`ld-linux-x86-64.so.2
# --library-path LIBS cudnn-deploy`, scripts/valgrind.sh's VALGRIND_LDSO),
# with the whole closure of its libraries from here (Debian's libc must not
# meet Ubuntu's libraries) and the debug files of ld.so and libc, found by
# its .gnu_debuglink name beside each. About 20 MB as .tar.xz.
S=$(mktemp -d)
mkdir -p "$S/lib"
ldso=$(readlink -f /lib64/ld-linux-x86-64.so.2)
cp "$ldso" "$S/ld-linux-x86-64.so.2"
ldd "$D/build-valgrind/cudnn-deploy" | awk '/=>/ {print $3}' |
    while read -r f; do cp -L "$f" "$S/lib/"; done
# Each debug file beside its object under its .gnu_debuglink name (the
# build id's tail), where memcheck looks first.
for f in "$S/ld-linux-x86-64.so.2" "$S/lib/libc.so.6"; do
    id=$(readelf -n "$f" | sed -n 's/.*Build ID: //p')
    dbg=/usr/lib/debug/.build-id/$(echo "$id" | cut -c1-2)/$(echo "$id" | cut -c3-).debug
    [ -f "$dbg" ] || { echo "prepare-campaign: no $dbg (apt-get install libc6-dbg)" >&2; exit 1; }
    cp "$dbg" "$(dirname "$f")/"
done
tar -C "$S" -cJf "$V/client.tar.xz" .
rm -rf "$S"
P=$(mktemp -d)
(cd "$P" && apt-get download python3-jsonschema python3-attr python3-pyrsistent >/dev/null 2>&1) || {
    echo "prepare-campaign: apt-get download python3-jsonschema failed" >&2; exit 1; }
mkdir -p "$P/x"
for d in "$P"/*.deb; do dpkg -x "$d" "$P/x"; done
rm -rf "$D/py"
cp -a "$P/x/usr/lib/python3/dist-packages" "$D/py"
rm -rf "$P"
# The carried tree is limited to 64 MiB in all.
du -sh "$V" "$D"
kb=$(du -sk "$D" | cut -f1)
[ "$kb" -lt 60000 ] || { echo "prepare-campaign: .device is ${kb} KiB, over 60 MiB" >&2; exit 1; }
