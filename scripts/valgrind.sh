#!/bin/sh
# `make valgrind` (by hand, never in CI): the Linux test suite under
# valgrind's memcheck. A plain test build (no sanitizer, the fault hook on)
# in $VALGRIND_BUILD (build-valgrind/); every unit test executable runs under
# memcheck, and the e2e scripts run with CDD_BIN set to a wrapper that runs
# the real binary under memcheck (CDD_EXE names the binary itself, for the
# fault-hook check). Each memcheck process logs to
# $VALGRIND_BUILD/valgrind/vg.<pid>.log; the result is the number of
# processes, of memcheck errors (invalid reads/writes, uninitialised values,
# definite leaks) and of test scripts that failed, the slow ones included.
#
#   scripts/valgrind.sh                 all unit tests and e2e scripts
#   VALGRIND_E2E="test_install test_hostile" scripts/valgrind.sh
#   VALGRIND_UNIT=none / VALGRIND_E2E=none   skip a half
set -u
build=${VALGRIND_BUILD:-build-valgrind}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
command -v valgrind >/dev/null 2>&1 || {
    echo "valgrind: not installed (scripts/install-deps.sh installs it)" >&2
    exit 1
}
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCDD_FAULT_INJECTION=ON >/dev/null || exit 1
cmake --build "$build" -j "$jobs" >/dev/null || exit 1
root=$(cd "$build" && pwd)
logs=$root/valgrind
tmp=$root/valgrind-tmp
rm -rf "$logs" "$tmp"
mkdir -p "$logs" "$tmp"
vg="valgrind --tool=memcheck --error-exitcode=86 --leak-check=full
    --show-leak-kinds=definite --errors-for-leak-kinds=definite
    --child-silent-after-fork=yes --num-callers=30 --log-file=$logs/vg.%p.log"
wrapper=$root/vg-cudnn-deploy
cat >"$wrapper" <<WRAP
#!/bin/sh
exec $(echo $vg) "$root/cudnn-deploy" "\$@"
WRAP
chmod +x "$wrapper"

failed=""
start=$(date +%s)
if [ "${VALGRIND_UNIT:-all}" != none ]; then
    for t in "$root"/tests/test_*; do
        [ -x "$t" ] || continue
        n=$(basename "$t")
        # shellcheck disable=SC2086
        if ! CDD_TEST_TMP="$tmp/unit" nice -n 10 $vg "$t" >"$logs/$n.out" 2>&1; then
            failed="$failed unit.$n"
        fi
        echo "valgrind: unit.$n done"
    done
fi
if [ "${VALGRIND_E2E:-all}" != none ]; then
    scripts=${VALGRIND_E2E:-all}
    if [ "$scripts" = all ]; then
        scripts=$(cd tests/e2e && ls test_*.py | sed 's/\.py$//')
    fi
    for s in $scripts; do
        case $s in test_windows_*) continue ;; esac
        if ! CDD_BIN=$wrapper CDD_EXE=$root/cudnn-deploy CDD_FAULT_BUILD=ON \
            CDD_TEST_TMP="$tmp/e2e" CDD_TEST_GROUP=$s PYTHONDONTWRITEBYTECODE=1 \
            nice -n 10 python3 "tests/e2e/$s.py" >"$logs/$s.out" 2>&1; then
            failed="$failed e2e.$s"
        fi
        echo "valgrind: e2e.$s done"
    done
fi
end=$(date +%s)
procs=$(ls "$logs"/vg.*.log 2>/dev/null | wc -l)
# "ERROR SUMMARY: N errors": the processes with N > 0.
bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log 2>/dev/null | wc -l)
errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$logs"/vg.*.log 2>/dev/null |
    awk '{s += $1} END {print s + 0}')
echo "---- valgrind memcheck: $procs processes, $errs errors in $bad of them," \
     "$((end - start)) s ----"
[ -z "$failed" ] || echo "scripts that failed under valgrind:$failed (outputs in $logs)"
if [ "$bad" -gt 0 ]; then
    grep -l 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log | head -5 | while read -r f; do
        echo "== $f"; sed -n '/Invalid\|uninitialised\|definitely lost/,+12p' "$f" | head -40
    done
    exit 1
fi
[ -z "$failed" ] || exit 1
