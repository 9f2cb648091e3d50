#!/bin/sh
# The Windows build of cudnn-deploy, cross-compiled on Debian/Ubuntu with
# mingw-w64 and tested under Wine (docs/windows.md). Used by the Makefile:
#
#   scripts/windows.sh build       make windows: build-win/cudnn-deploy.exe and
#                                  the zip a user downloads
#   scripts/windows.sh test        make test-windows: the test build
#                                  (build-win-test, -DCDD_FAULT_INJECTION=ON),
#                                  then the Windows test suite (ctest) under Wine
#   scripts/windows.sh auto-test   make test: `test` when mingw-w64 and Wine
#                                  are installed or installable, else a line
#                                  saying the Windows part is skipped
#
# The zip is built from build-win, configured without the test-only fault
# hook; the tests run in their own folder, with it.
# Environment: BUILD_WIN (default build-win), BUILD_WIN_TEST (default
# build-win-test), JOBS, CDD_WIN_DEPS_CACHE (see
# scripts/build-windows-deps.sh), CDD_SKIP_WINDOWS=1 (auto-test skips).
set -eu

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
BUILD=${BUILD_WIN:-build-win}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
TEST_BUILD=${BUILD_WIN_TEST:-build-win-test}
case $TEST_BUILD in /*) ;; *) TEST_BUILD=$ROOT/$TEST_BUILD ;; esac
JOBS=${JOBS:-$(nproc 2>/dev/null || echo 2)}

say() { echo "windows: $*" >&2; }
die() { say "error: $*"; exit 1; }
now() { date +%s; }

# DLLs an .exe may import and still be "one file": they ship with every
# Windows (msvcrt.dll is the C runtime MinGW builds against).
SYSTEM_DLLS="kernel32.dll advapi32.dll bcrypt.dll crypt32.dll secur32.dll
ws2_32.dll iphlpapi.dll msvcrt.dll user32.dll shell32.dll ole32.dll
normaliz.dll wldap32.dll"

deps() {
    sh scripts/install-deps.sh --windows
    PREFIX=$(sh scripts/build-windows-deps.sh | tail -n 1)
    [ -d "$PREFIX" ] || die "dependency build gave no prefix"
}

configure() {
    # $1: the build folder; $2: ON for the test build's fault hook.
    # CMake caches the libraries it found by path: after the dependencies'
    # key changes, the old prefix may still exist and would stay linked. So
    # a build folder configured for another prefix (or before this stamp
    # existed) is configured afresh.
    stamp=$1/.cdd-deps-prefix
    if [ -f "$1/CMakeCache.txt" ] && [ "$(cat "$stamp" 2>/dev/null)" != "$PREFIX" ]; then
        say "new dependency prefix: configuring $1 afresh"
        rm -f "$1/CMakeCache.txt"
    fi
    cmake -S . -B "$1" -DCMAKE_TOOLCHAIN_FILE="$ROOT/scripts/mingw-toolchain.cmake" \
        -DCDD_WIN_DEPS_PREFIX="$PREFIX" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCDD_FAULT_INJECTION="$2" >/dev/null
    echo "$PREFIX" >"$stamp"
}

check_imports() {
    exe=$1
    bad=""
    for dll in $(x86_64-w64-mingw32-objdump -p "$exe" | sed -n 's/^[[:space:]]*DLL Name: //p' |
                 tr 'A-Z' 'a-z' | sort -u); do
        case " $(echo $SYSTEM_DLLS) " in
            *" $dll "*) ;;
            *) bad="$bad $dll" ;;
        esac
    done
    [ -z "$bad" ] || die "$exe imports non-system DLLs:$bad (a dependency was linked dynamically)"
}

package() {
    version=$(sed -n 's/^project(cudnn-deploy VERSION \([0-9.]*\).*/\1/p' CMakeLists.txt)
    name=cudnn-deploy-$version-windows-x86_64
    stage=$BUILD/package/$name
    rm -rf "$BUILD/package"
    mkdir -p "$stage/manifests" "$stage/docs"
    cp "$BUILD/cudnn-deploy.exe" "$stage/"
    cp manifests/*.json "$stage/manifests/"
    cp README.md LICENSE "$stage/"
    cp docs/windows.md docs/manifest.md "$stage/docs/"
    x86_64-w64-mingw32-strip "$stage/cudnn-deploy.exe"
    rm -f "$BUILD/$name.zip"
    # -X and fixed times (zip cannot go before 1980): the same input gives
    # the same zip.
    (cd "$BUILD/package" && find "$name" -exec touch -d "@${SOURCE_DATE_EPOCH:-315705600}" {} + &&
        zip -q -r -X "$BUILD/$name.zip" "$name")
    say "package: $BUILD/$name.zip"
}

build() {
    t0=$(now)
    deps
    t1=$(now)
    configure "$BUILD" OFF
    cmake --build "$BUILD" -j "$JOBS" >/dev/null
    check_imports "$BUILD/cudnn-deploy.exe"
    package
    say "built $BUILD/cudnn-deploy.exe (dependencies $((t1 - t0))s, build $(( $(now) - t1 ))s)"
}

run_tests() {
    t0=$(now)
    deps
    configure "$TEST_BUILD" ON
    cmake --build "$TEST_BUILD" -j "$JOBS" >/dev/null
    check_imports "$TEST_BUILD/cudnn-deploy.exe"
    BUILD=$TEST_BUILD
    say "built the test build $BUILD/cudnn-deploy.exe in $(( $(now) - t0 ))s"
    t0=$(now)
    # One Wine server for the whole run, started with its stdio (and that of
    # Wine's services) on /dev/null: if a test's wine started it, the server
    # would inherit that test's output pipe and ctest would wait for it.
    WINEPREFIX=$BUILD/wineprefix WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
    export WINEPREFIX WINEDEBUG WINEDLLOVERRIDES
    # A server left from an earlier run may hold a test's pipe or leave at
    # its next pause: stop it, then start one that stays until the end
    # (`-p`: no linger limit). wine-run.sh leaves a running server as it is.
    mkdir -p "$WINEPREFIX"
    wineserver -k 2>/dev/null || true
    wineserver -w 2>/dev/null || true
    wineserver -p </dev/null >/dev/null 2>&1 ||
        die "cannot start the Wine server (see docs/windows.md)"
    "$BUILD/wine/wine-run.sh" cmd /c exit </dev/null >/dev/null 2>&1 ||
        die "Wine cannot start (see docs/windows.md)"
    rc=0
    # Each entry runs once: a failure, flaky or not, fails the suite and
    # shows in make test's closing line (no silent re-run; issue 23).
    (cd "$BUILD" && ctest --output-on-failure -j "$JOBS" \
        --output-junit ctest-junit.xml) || rc=$?
    wineserver -k 2>/dev/null || true
    say "Windows test suite under Wine: $( [ $rc = 0 ] && echo passed || echo FAILED ) in $(( $(now) - t0 ))s"
    return $rc
}

installable() {
    # Installed already, or known to apt (after the Linux deps' apt-get update).
    for p in gcc-mingw-w64-x86-64 wine64 libz-mingw-w64-dev; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" && continue
        command -v apt-cache >/dev/null 2>&1 || return 1
        apt-cache show "$p" >/dev/null 2>&1 || return 1
    done
    return 0
}

case ${1:-build} in
    build) build ;;
    test) run_tests ;;
    auto-test)
        if [ "${CDD_SKIP_WINDOWS:-0}" = 1 ]; then
            echo "== Windows test suite: SKIPPED (CDD_SKIP_WINDOWS=1)"
        elif ! installable; then
            echo "== Windows test suite: SKIPPED (mingw-w64 and Wine are not installable here)"
        else
            echo "== Windows test suite: cross-built with mingw-w64, running under Wine"
            run_tests
        fi
        ;;
    *) die "usage: scripts/windows.sh build|test|auto-test" ;;
esac
