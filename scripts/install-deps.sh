#!/bin/sh
# Install the Debian/Ubuntu packages that building and testing cudnn-deploy
# needs. A no-op when they are all present. Works as root or through sudo.
set -eu

PKGS="build-essential cmake pkg-config libarchive-dev libcjson-dev
libcurl4-openssl-dev libssl-dev python3 zip unzip xz-utils"

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
$SUDO apt-get update -qq
# shellcheck disable=SC2086
$SUDO apt-get install -y -qq --no-install-recommends $missing >/dev/null
