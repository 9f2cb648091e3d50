#!/bin/sh
# Build the third-party libraries of the Windows cudnn-deploy.exe -- libarchive
# (with liblzma from xz-utils, for .tar.xz), cJSON and libcurl -- as static
# x86-64 mingw-w64 libraries, from the Debian *source* packages of this
# machine's release (`apt-get source`; a deb-src entry is added for that), so
# the Windows build uses only what Debian ships: zlib comes from
# libz-mingw-w64-dev, TLS from Windows' own Schannel, hashes from Windows CNG.
# No OpenSSL, no binaries from elsewhere.
#
# The result is cached OUTSIDE the clone, keyed by the source versions, the
# toolchain and this script, so CI rebuilds only when one of them changes:
#   ${CDD_WIN_DEPS_CACHE:-/var/cache/cudnn-deploy-win-deps}/<key>/
#       include/ lib/ (libarchive.a liblzma.a libcjson.a libcurl.a, CMake
#       configs)
# Prints that prefix on stdout (last line); progress goes to stderr.
#
# Usage: scripts/build-windows-deps.sh [--print-key]
# Needs: scripts/install-deps.sh --windows (mingw-w64, dpkg-dev, cmake).
set -eu

HERE=$(cd "$(dirname "$0")" && pwd)
TOOLCHAIN="$HERE/mingw-toolchain.cmake"
TRIPLE=x86_64-w64-mingw32
SYSROOT=/usr/$TRIPLE
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}
SRC_LIST=/etc/apt/sources.list.d/cudnn-deploy-src.list
# Part of the cache key: bump it when the build options below change (the
# source versions and the toolchain are in the key already).
RECIPE=2

say() { echo "build-windows-deps: $*" >&2; }
die() { say "error: $*"; exit 1; }

SUDO=""
if [ "$(id -u)" -ne 0 ] && command -v sudo >/dev/null 2>&1; then SUDO=sudo; fi

command -v $TRIPLE-gcc >/dev/null || die "$TRIPLE-gcc not found: run scripts/install-deps.sh --windows"
command -v dpkg-source >/dev/null || die "dpkg-source not found: run scripts/install-deps.sh --windows"
[ -f $SYSROOT/lib/libz.a ] || die "$SYSROOT/lib/libz.a not found: install libz-mingw-w64-dev"

# ---- deb-src: mirror this machine's own Debian/Ubuntu archive entries -------
# Only the distribution's archives: a third-party repository usually has no
# Sources index, and one missing index would fail `apt-get update`.
deb_src_lines() {
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        # deb822: one line per URI x suite, components appended.
        awk '
            function flush() {
                if (types ~ /(^| )deb( |$)/ && uris ~ /debian|ubuntu/) {
                    n = split(uris, u, " "); m = split(suites, s, " ")
                    for (i = 1; i <= n; i++) for (j = 1; j <= m; j++)
                        printf "deb-src %s%s %s %s\n", (sb ? "[signed-by=" sb "] " : ""), u[i], s[j], comps
                }
                types = uris = suites = comps = sb = ""
            }
            /^[ \t]*#/ { next }
            /^[ \t]*$/ { flush(); next }
            { key = $1; sub(/:$/, "", key); $1 = ""; sub(/^ +/, "")
              if (key == "Types") types = $0; else if (key == "URIs") uris = $0
              else if (key == "Suites") suites = $0; else if (key == "Components") comps = $0
              else if (key == "Signed-By") sb = $0 }
            END { flush() }' "$f"
    done
    for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
        [ -f "$f" ] && [ "$f" != "$SRC_LIST" ] || continue
        grep -E '^[[:space:]]*deb[[:space:]]' "$f" | grep -E 'debian|ubuntu' |
            sed -E 's/^[[:space:]]*deb[[:space:]]/deb-src /' || true
    done
}

ensure_deb_src() {
    want=$(deb_src_lines | sort -u)
    [ -n "$want" ] || die "no Debian/Ubuntu archive found in /etc/apt to take sources from"
    have=$(cat "$SRC_LIST" 2>/dev/null || true)
    if [ "$want" != "$have" ]; then
        say "adding deb-src entries ($SRC_LIST)"
        printf '# Added by cudnn-deploy scripts/build-windows-deps.sh (apt-get source).\n%s\n' "$want" |
            $SUDO tee "$SRC_LIST.tmp" >/dev/null
        $SUDO sh -c "grep -v '^#' '$SRC_LIST.tmp' > '$SRC_LIST' && rm -f '$SRC_LIST.tmp'"
        return 1
    fi
    return 0
}

# Source version apt would fetch, e.g. "3.6.2-1+deb12u5" (offline when the
# Sources indexes are present).
src_version() {
    apt-get source --print-uris -qq "$1" 2>/dev/null |
        sed -n "s|.*/$1_\([^_']*\)\.dsc'.*|\1|p" | head -n 1 |
        sed 's/%2[bB]/+/g; s/%7[eE]/~/g' 
}

updated=0
ensure_deb_src || { say "apt-get update (Sources indexes)"; $SUDO apt-get update -qq >&2; updated=1; }
src_versions() {
    V_ARCHIVE=$(src_version libarchive); V_XZ=$(src_version xz-utils)
    V_CJSON=$(src_version cjson); V_CURL=$(src_version curl)
    [ -n "$V_ARCHIVE" ] && [ -n "$V_XZ" ] && [ -n "$V_CJSON" ] && [ -n "$V_CURL" ]
}
if ! src_versions; then
    [ $updated = 1 ] || { say "apt-get update (Sources indexes missing)"; $SUDO apt-get update -qq >&2; }
    src_versions ||
        die "apt-get source cannot find libarchive, xz-utils, cjson and curl (deb-src entries in $SRC_LIST?)"
fi

# The key: everything that changes the output.
V_GCC=$($TRIPLE-gcc -dumpversion)
V_CRT=$(dpkg-query -W -f='${Version}' mingw-w64-x86-64-dev 2>/dev/null || echo unknown)
V_ZLIB=$(dpkg-query -W -f='${Version}' libz-mingw-w64-dev 2>/dev/null || echo unknown)
KEY="libarchive-$V_ARCHIVE.xz-$V_XZ.cjson-$V_CJSON.curl-$V_CURL.gcc-$V_GCC.crt-$V_CRT.zlib-$V_ZLIB.r$RECIPE"
KEY=$(printf '%s' "$KEY" | tr -c 'A-Za-z0-9.+_-' '_')
if [ "${1:-}" = "--print-key" ]; then echo "$KEY"; exit 0; fi

CACHE=${CDD_WIN_DEPS_CACHE:-/var/cache/cudnn-deploy-win-deps}
if ! mkdir -p "$CACHE" 2>/dev/null || [ ! -w "$CACHE" ]; then
    CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/cudnn-deploy-win-deps
    mkdir -p "$CACHE"
fi
PREFIX=$CACHE/$KEY
if [ -f "$PREFIX/.complete" ]; then
    say "cached: $PREFIX"
    echo "$PREFIX"
    exit 0
fi

say "building libarchive $V_ARCHIVE, liblzma $V_XZ, cJSON $V_CJSON, curl $V_CURL for $TRIPLE (cold; a few minutes)"
start=$(date +%s)
WORK=$(mktemp -d "$CACHE/.work-XXXXXX")
trap 'rm -rf "$WORK"' EXIT INT TERM
# Configured for the final prefix (cJSON's CMake config and the .pc files
# hold absolute paths), installed under a DESTDIR, moved into place at the end.
DEST=$WORK/dest
OUTP=$DEST$PREFIX
mkdir -p "$OUTP/include" "$OUTP/lib"

( cd "$WORK" && apt-get source -qq "libarchive=$V_ARCHIVE" "xz-utils=$V_XZ" "cjson=$V_CJSON" "curl=$V_CURL" >/dev/null 2>"$WORK/source.log" ) ||
    { cat "$WORK/source.log" >&2; die "apt-get source failed"; }
srcdir() { find "$WORK" -maxdepth 1 -type d -name "$1-*" | head -n 1; }

COMMON="-DCMAKE_TOOLCHAIN_FILE=$TOOLCHAIN -DCMAKE_BUILD_TYPE=Release
 -DCMAKE_INSTALL_PREFIX=$PREFIX -DBUILD_SHARED_LIBS=OFF -DBUILD_TESTING=OFF
 -DZLIB_INCLUDE_DIR=$SYSROOT/include -DZLIB_LIBRARY=$SYSROOT/lib/libz.a
 -Wno-dev"

run_logged() { # name, command...: quiet unless it fails
    name=$1; shift
    if ! "$@" >"$WORK/$name.log" 2>&1; then
        tail -n 40 "$WORK/$name.log" >&2
        die "$name failed (log above)"
    fi
}

# cJSON: its stack-protector flags do not link with mingw; hidden symbols keep
# the static library from exporting cJSON_* out of our .exe.
S=$(srcdir cjson)
# shellcheck disable=SC2086
run_logged cjson-configure cmake -S "$S" -B "$WORK/b-cjson" $COMMON \
    -DENABLE_CUSTOM_COMPILER_FLAGS=OFF -DENABLE_CJSON_TEST=OFF \
    -DENABLE_CJSON_UTILS=OFF -DBUILD_SHARED_AND_STATIC_LIBS=OFF \
    -DCJSON_OVERRIDE_BUILD_SHARED_LIBS=ON -DCJSON_BUILD_SHARED_LIBS=OFF \
    -DCMAKE_C_FLAGS=-DCJSON_HIDE_SYMBOLS
run_logged cjson-build cmake --build "$WORK/b-cjson" -j "$JOBS"
run_logged cjson-install env DESTDIR="$DEST" cmake --install "$WORK/b-cjson"

# liblzma (xz-utils), for libarchive's xz filter (.tar.xz, the Linux cuDNN
# tarballs): the static library and its headers only -- the xz and xzdec
# programs are neither built nor installed. Its threads are Windows' own (the
# toolchain's win32 thread model; no winpthread DLL).
S=$(srcdir xz-utils)
t_lzma=$(date +%s)
# shellcheck disable=SC2086
run_logged lzma-configure cmake -S "$S" -B "$WORK/b-lzma" $COMMON
run_logged lzma-build cmake --build "$WORK/b-lzma" -j "$JOBS" --target liblzma
run_logged lzma-install env DESTDIR="$DEST" cmake --install "$WORK/b-lzma" \
    --component liblzma_Development
[ -f "$OUTP/lib/liblzma.a" ] || die "liblzma build left no $OUTP/lib/liblzma.a"
say "liblzma built in $(( $(date +%s) - t_lzma ))s"

# libarchive: only the static library (the tools and the DLL would double the
# time); no optional codec but zlib (zip deflate, gzip) and liblzma (xz), CNG
# for its own crypto. lzma.h declares dllimport only for non-GNU compilers, so
# neither libarchive nor its users need LZMA_API_STATIC here (libarchive's own
# probe agrees). POSIX_REGEX_LIB=NONE avoids "libgcc not found". Its one try_run
# (is zlib built with ZLIB_WINAPI? Debian's is not) is answered here: Debian's
# CMake 3.25 crashes on a try_run while cross-compiling without an emulator.
S=$(srcdir libarchive)
# shellcheck disable=SC2086
run_logged libarchive-configure cmake -S "$S" -B "$WORK/b-archive" $COMMON \
    -DENABLE_TAR=OFF -DENABLE_CPIO=OFF -DENABLE_CAT=OFF -DENABLE_TEST=OFF \
    -DENABLE_OPENSSL=OFF -DENABLE_MBEDTLS=OFF -DENABLE_NETTLE=OFF \
    -DENABLE_LIBB2=OFF -DENABLE_LZ4=OFF -DENABLE_LZO=OFF -DENABLE_LZMA=ON \
    -DLIBLZMA_INCLUDE_DIR="$OUTP/include" -DLIBLZMA_LIBRARY="$OUTP/lib/liblzma.a" \
    -DENABLE_ZSTD=OFF -DENABLE_BZip2=OFF -DENABLE_LIBXML2=OFF \
    -DENABLE_EXPAT=OFF -DENABLE_PCREPOSIX=OFF -DENABLE_LibGCC=OFF \
    -DENABLE_ICONV=OFF -DENABLE_ACL=OFF -DENABLE_XATTR=OFF -DENABLE_CNG=ON \
    -DENABLE_ZLIB=ON -DPOSIX_REGEX_LIB=NONE -DENABLE_WERROR=OFF \
    -DZLIB_WINAPI_EXITCODE=1 -DZLIB_WINAPI_EXITCODE__TRYRUN_OUTPUT=
run_logged libarchive-build cmake --build "$WORK/b-archive" -j "$JOBS" --target archive_static
cp "$WORK/b-archive/libarchive/libarchive.a" "$OUTP/lib/libarchive.a" 2>/dev/null ||
    cp "$WORK/b-archive/libarchive/libarchive_static.a" "$OUTP/lib/libarchive.a"
cp "$S/libarchive/archive.h" "$S/libarchive/archive_entry.h" "$OUTP/include/"

# curl: HTTP(S) only, Schannel, no CA bundle (Schannel uses the Windows
# certificate store), every optional dependency off except zlib.
S=$(srcdir curl)
# shellcheck disable=SC2086
run_logged curl-configure cmake -S "$S" -B "$WORK/b-curl" $COMMON \
    -DBUILD_CURL_EXE=OFF -DCURL_USE_SCHANNEL=ON -DCURL_USE_OPENSSL=OFF \
    -DCURL_USE_MBEDTLS=OFF -DCURL_USE_WOLFSSL=OFF -DCURL_USE_BEARSSL=OFF \
    -DCURL_USE_NSS=OFF -DCURL_USE_LIBSSH2=OFF -DCURL_USE_LIBSSH=OFF \
    -DCURL_USE_GSSAPI=OFF -DUSE_NGHTTP2=OFF -DUSE_NGTCP2=OFF -DUSE_QUICHE=OFF \
    -DUSE_MSH3=OFF -DUSE_LIBIDN2=OFF -DUSE_WIN32_IDN=OFF -DCURL_BROTLI=OFF \
    -DCURL_ZSTD=OFF -DCURL_ZLIB=ON -DCURL_USE_LIBPSL=OFF -DHTTP_ONLY=ON \
    -DCURL_DISABLE_LDAP=ON -DENABLE_MANUAL=OFF -DCURL_CA_BUNDLE=none \
    -DCURL_CA_PATH=none -DCURL_CA_FALLBACK=OFF -DENABLE_UNICODE=ON \
    -DCURL_STATIC_CRT=OFF
run_logged curl-build cmake --build "$WORK/b-curl" -j "$JOBS"
run_logged curl-install env DESTDIR="$DEST" cmake --install "$WORK/b-curl"

# cJSON's CMake files name its prefix by absolute path: make them relative
# to themselves, so the prefix stays usable if the cache moves.
sed -i "s|\"$PREFIX|\"\${CMAKE_CURRENT_LIST_DIR}/../../..|g" \
    "$OUTP"/lib/cmake/cJSON/*.cmake
printf 'libarchive %s\nxz-utils %s\ncjson %s\ncurl %s\ngcc %s\nmingw-w64 %s\nzlib %s\n' \
    "$V_ARCHIVE" "$V_XZ" "$V_CJSON" "$V_CURL" "$V_GCC" "$V_CRT" "$V_ZLIB" >"$OUTP/VERSIONS"
touch "$OUTP/.complete"
# Publish atomically: a concurrent or killed run never leaves a half prefix
# that looks complete.
rm -rf "$PREFIX.old"
[ -d "$PREFIX" ] && mv "$PREFIX" "$PREFIX.old"
mv "$OUTP" "$PREFIX"
rm -rf "$PREFIX.old"
say "built in $(( $(date +%s) - start ))s: $PREFIX"
echo "$PREFIX"
