#!/bin/sh
# Issue 23's proof for the two Wine tests that once failed on a first run:
# each runs as the FIRST program in a brand-new WINEPREFIX (so wineboot, the
# server start and the test all happen in that run), N times in a row, with
# the 120 s limit ctest gave it when it timed out. One line per trial:
#   trial 3 test_windows_fleet.WindowsFleet.test_env_cmd_output_runs_in_cmd pass 41 s
# and a closing count. Needs the Windows test build (build it once:
# `sh scripts/windows.sh test`, or its configure and build steps).
#   sh scripts/wine-first-run.sh [N]        (default 10; BUILD_WIN_TEST, LIMIT)
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
B=${BUILD_WIN_TEST:-$ROOT/build-win-test}
N=${1:-10}
LIMIT=${LIMIT:-600}
WORK=${CDD_TRIALS_DIR:-${TMPDIR:-/tmp}/cdd-wine-first-run}
[ -x "$B/wine/cdd-wine.sh" ] && [ -f "$B/cudnn-deploy.exe" ] || {
    echo "wine-first-run: no Windows test build in $B" >&2; exit 2; }
TESTS="test_windows_fleet WindowsFleet.test_env_cmd_output_runs_in_cmd
test_windows_layout WindowsLayoutCase.test_install_reinstall_status_uninstall"
rm -rf "$WORK"
mkdir -p "$WORK"
pass=0 fail=0 i=1
while [ "$i" -le "$N" ]; do
    echo "$TESTS" | while read -r script test; do
        prefix=$WORK/prefix-$i-$script
        log=$WORK/trial-$i-$script.log
        t0=$(date +%s)
        CDD_BIN=$B/wine/cdd-wine.sh CDD_EXE=$B/cudnn-deploy.exe \
        CDD_WINE_RUN=$B/wine/wine-run.sh CDD_WINEPREFIX=$prefix CDD_WINDOWS=1 \
        CDD_HOLDFILE_EXE=$B/tests/cdd_holdfile.exe CDD_FAULT_BUILD=ON \
        CDD_TEST_TMP=$WORK/tmp-$i PYTHONDONTWRITEBYTECODE=1 WINEDEBUG=-all \
            timeout -k 5 "$LIMIT" python3 "$ROOT/tests/e2e/$script.py" -v "$test" \
            >"$log" 2>&1
        rc=$?
        t=$(( $(date +%s) - t0 ))
        WINEPREFIX=$prefix wineserver -k 2>/dev/null || true
        if [ $rc = 0 ]; then r=pass; else r="FAIL (rc $rc, $log)"; fi
        echo "trial $i $script.$test $r ${t} s"
    done
    i=$((i + 1))
done | tee "$WORK/results.txt"
pass=$(grep -c ' pass ' "$WORK/results.txt")
total=$(grep -c '^trial ' "$WORK/results.txt")
echo "wine-first-run: $pass of $total first runs passed (limit ${LIMIT} s each)"
[ "$pass" = "$total" ]
