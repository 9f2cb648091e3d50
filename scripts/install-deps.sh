#!/bin/sh
# Install the Debian/Ubuntu packages that building and testing cudnn-deploy
# needs. A no-op when they are all present. Works as root or through sudo.
# (unicode-data: CaseFolding.txt, for the test that the committed
# case-folding table is current.)
#
#   scripts/install-deps.sh            the Linux build (always)
#   scripts/install-deps.sh --windows  the Windows cross build and its Wine
#                                      test suite (optional, see docs/windows.md)
#   scripts/install-deps.sh --bench    the baselines `make bench` times us
#                                      against (unzip, bsdtar, tar, xz, time)
#   scripts/install-deps.sh --valgrind valgrind, for `make valgrind`
#   scripts/install-deps.sh --torture  what `make torture` needs beyond the
#                                      build (strace, mkfs.ext4, losetup)
#
# It waits (with a message) while another apt or dpkg holds the lock, up to
# CDD_APT_LOCK_TIMEOUT seconds (default 600), and tries a failed
# `apt-get update` once more. --windows also needs deb-src entries: see
# scripts/build-windows-deps.sh (it adds /etc/apt/sources.list.d/
# cudnn-deploy-src.list) and the README.
set -eu

PKGS="build-essential cmake pkg-config libarchive-dev libcjson-dev
libcurl4-openssl-dev libssl-dev libisal-dev zlib1g-dev python3 zip unzip xz-utils
openssl unicode-data"

# The fuzz targets (make test's test-fuzz, make fuzz; docs/fuzzing.md):
# Debian's clang, its libFuzzer and sanitizer runtimes (libclang-rt-dev), and
# llvm-symbolizer (llvm) for readable stack traces.
PKGS="$PKGS clang libclang-rt-dev llvm"
# Real shells for the shell tests (test_shell_eval, test_fleet.py): env's
# output and every fix are pasted into dash, zsh and fish as well as bash
# (PowerShell has no Debian package: its output stays string-checked).
PKGS="$PKGS dash zsh fish"
# images (docs/containers.md): python3-jsonschema, with which
# tests/e2e/test_sbom.py validates `sbom` output against the official SPDX
# and CycloneDX schemas kept in tests/schemas/.
PKGS="$PKGS python3-jsonschema"
# strace: the durability-order check and the fast subset of the fault
# campaign in `make test` (tests/torture/; skipped without it).
PKGS="$PKGS strace"

# The Windows cross build: the x86-64 mingw-w64 toolchain and its zlib, Wine
# (64-bit; /usr/bin/wine) to run the tests, libgnutls30 which Wine's Schannel
# needs, and what scripts/build-windows-deps.sh needs to fetch and build the
# Debian source packages of libarchive, cJSON and curl: dpkg-dev
# (`apt-get source`), cmake, make. The native build-dependencies of those
# sources (libssl-dev, libnghttp2-dev, ...) are not needed: the cross build
# turns every optional dependency off and uses Windows' own TLS and crypto.
WIN_PKGS="gcc-mingw-w64-x86-64 binutils-mingw-w64-x86-64
mingw-w64-x86-64-dev libz-mingw-w64-dev wine wine64 libgnutls30 dpkg-dev
cmake make zip unzip python3 ca-certificates"

# The benchmark's baselines (bench/README.md): bsdtar is libarchive-tools.
BENCH_PKGS="unzip libarchive-tools tar xz-utils time python3"

# The fault campaign (tests/torture/): strace, and for the full-disk trials
# mkfs.ext4 (e2fsprogs) and losetup/mount (util-linux, mount).
TORTURE_PKGS="strace e2fsprogs util-linux mount python3"

if [ "${1:-}" = "--windows" ]; then
    PKGS="$WIN_PKGS"
elif [ "${1:-}" = "--bench" ]; then
    PKGS="$BENCH_PKGS"
elif [ "${1:-}" = "--valgrind" ]; then
    PKGS="valgrind"
elif [ "${1:-}" = "--torture" ]; then
    PKGS="$TORTURE_PKGS"
fi

# fleet (docs/fleet.md): Debian's ansible-core, for the Ansible collection's
# test (tests/e2e/test_ansible.py). Best effort, in its own run: where it
# cannot be installed that test skips, saying why, and nothing else needs it.
if [ "${1:-}" = "--fleet" ]; then
    PKGS="ansible-core"
elif [ -z "${1:-}" ] && ! command -v ansible-playbook >/dev/null 2>&1; then
    sh "$0" --fleet ||
        echo "install-deps: ansible-core not installed; the Ansible test skips" >&2
fi

missing=""
for p in $PKGS; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed"; then
        missing="$missing $p"
    fi
done
[ -z "$missing" ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-deps: apt-get not found; install these yourself:$missing" >&2
    exit 1
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1; then SUDO="sudo"; else
        echo "install-deps: need root or sudo to install:$missing" >&2
        exit 1
    fi
fi
echo "install-deps: installing:$missing" >&2
export DEBIAN_FRONTEND=noninteractive

# Another apt or dpkg (unattended-upgrades, a desktop updater, a second
# terminal) holds the package manager's lock: wait for it, saying so, up to
# CDD_APT_LOCK_TIMEOUT seconds (default 600), instead of failing at once.
LOCK_TIMEOUT=${CDD_APT_LOCK_TIMEOUT:-600}
LOCK_POLL=${CDD_APT_LOCK_POLL:-5}
ERR=$(mktemp)
trap 'rm -f "$ERR"' EXIT
apt_get() {
    start=$(date +%s)
    said=0
    while :; do
        # shellcheck disable=SC2086
        if $SUDO apt-get -o DPkg::Lock::Timeout=0 "$@" 2>"$ERR"; then
            cat "$ERR" >&2
            return 0
        fi
        if ! grep -qiE "could not get lock|unable to acquire the dpkg frontend lock|unable to lock" "$ERR"; then
            cat "$ERR" >&2
            return 1
        fi
        waited=$(( $(date +%s) - start ))
        if [ "$waited" -ge "$LOCK_TIMEOUT" ]; then
            cat "$ERR" >&2
            echo "install-deps: another package manager still holds the lock after ${LOCK_TIMEOUT}s; let it finish (or set CDD_APT_LOCK_TIMEOUT) and run again" >&2
            return 1
        fi
        if [ "$said" = 0 ]; then
            echo "install-deps: another apt or dpkg is running (it holds the lock); waiting for it, up to ${LOCK_TIMEOUT}s" >&2
            said=1
        fi
        sleep "$LOCK_POLL"
    done
}

# A mirror that answers badly once (a sync in progress, a flaky proxy)
# should not fail the build: apt-get update is tried once more.
if ! apt_get update -qq; then
    echo "install-deps: apt-get update failed; trying once more in ${CDD_APT_RETRY_DELAY:-10}s" >&2
    sleep "${CDD_APT_RETRY_DELAY:-10}"
    apt_get update -qq
fi
# shellcheck disable=SC2086
apt_get install -y -qq --no-install-recommends $missing >/dev/null
