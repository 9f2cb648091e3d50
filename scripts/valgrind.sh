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
#
# In parallel (issue 18; docs/reliability.md "The long campaigns in
# parallel"):
#   VALGRIND_JOBS=N     run N tasks at a time (a unit test, an e2e script,
#                       or a part of one), each with its own CDD_TEST_TMP
#   VALGRIND_SPLIT=N    split each e2e script named into N parts by test id
#                       (`Class.test_method`, dealt round-robin; each part is
#                       `python3 tests/e2e/SCRIPT.py ID...`), so that one
#                       long script (test_tamper, test_parallel, test_kill)
#                       uses N processes: VALGRIND_SPLIT=16 VALGRIND_JOBS=16
#   VALGRIND_IDS=RE     with VALGRIND_SPLIT: only the test ids matching the
#                       extended regular expression RE (grep -E), e.g.
#                       'test_install_with_component' for the cases an
#                       earlier run did not reach
#   VALGRIND_SHARDS=S   with VALGRIND_SPLIT: each part runs S times, the
#                       j-th with CDD_STEP_SHARD=j/S (tests/e2e/steps.py:
#                       the by-step fault loops of test_kill and
#                       test_parallel then run every S-th step, so one long
#                       test spreads over S processes)
#   VALGRIND_DEADLINE=S start no task after S seconds; those not started
#                       are listed (and the run is not counted as complete)
# Elsewhere (the device host, which has no valgrind and cannot build):
#   VALGRIND_BIN=PATH   the valgrind to run, e.g. a copy unpacked from
#                       Debian's package (scripts/prepare-campaign.sh); a
#                       relocated valgrind also needs VALGRIND_LIB=DIR, the
#                       folder holding memcheck-amd64-linux, the
#                       vgpreload_*.so and default.supp (Debian:
#                       usr/libexec/valgrind)
#   VALGRIND_NOBUILD=1  use $VALGRIND_BUILD as it is (built elsewhere)
#   VALGRIND_LDSO=PATH  start the binary on that dynamic linker, with
#                       VALGRIND_CLIENT_LIBS=DIR its libraries (a host whose
#                       own ld.so is stripped: prepare-campaign.sh's client,
#                       the debug files beside the objects)
set -u
self=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")

# One task (the script runs itself per task, N at a time, through xargs):
# unit:NAME, e2e:SCRIPT, or e2e:SCRIPT:K:N (part K of the script's N parts:
# $VALGRIND_SPLIT, or its number of tests where that is fewer).
# A script whose tests were all skipped exits 77 (cddcase.py, ctest's
# SKIP_RETURN_CODE): not a failure. $? is the script's status.
skip_or_fail() {
    rc=$?
    if [ "$rc" -eq 77 ]; then : >"$VG_LOGS/$1.skipped"; else : >"$VG_LOGS/$1.failed"; fi
}
if [ "${1:-}" = --one ]; then
    task=$2
    name=$(echo "$task" | tr ':' '.')
    if [ -n "$VG_DEADLINE_AT" ] && [ "$(date +%s)" -ge "$VG_DEADLINE_AT" ]; then
        : >"$VG_LOGS/$name.notstarted"
        exit 0
    fi
    rm -rf "$VG_TMP/$name"
    case $task in
    unit:*)
        n=${task#unit:}
        # shellcheck disable=SC2086
        CDD_TEST_TMP="$VG_TMP/$name" nice -n 10 $VG_CMD "$VG_ROOT/tests/$n" \
            >"$VG_LOGS/$name.out" 2>&1 || : >"$VG_LOGS/$name.failed" ;;
    e2e:*:*:*)
        # e2e:SCRIPT:K:N, or e2e:SCRIPT:K:N:J:S (shard J of S)
        IFS=: read -r _ s k n j shards <<EOF_TASK
$task
EOF_TASK
        shard=
        [ -z "$shards" ] || shard=$j/$shards
        ids=$(awk -v k="$k" -v n="$n" '(NR - 1) % n == k' "$VG_LOGS/$s.ids")
        # No CDD_TEST_GROUP: a part holds several classes, whose tests'
        # folders then keep the class in their path.
        # shellcheck disable=SC2086
        CDD_BIN=$VG_WRAPPER CDD_EXE=$VG_ROOT/cudnn-deploy CDD_FAULT_BUILD=ON \
            CDD_TEST_TMP="$VG_TMP/$name" PYTHONDONTWRITEBYTECODE=1 \
            CDD_STEP_SHARD=$shard nice -n 10 python3 "tests/e2e/$s.py" $ids \
            >"$VG_LOGS/$name.out" 2>&1 || skip_or_fail "$name" ;;
    e2e:*)
        s=${task#e2e:}
        CDD_BIN=$VG_WRAPPER CDD_EXE=$VG_ROOT/cudnn-deploy CDD_FAULT_BUILD=ON \
            CDD_TEST_TMP="$VG_TMP/$name" CDD_TEST_GROUP=$s PYTHONDONTWRITEBYTECODE=1 \
            nice -n 10 python3 "tests/e2e/$s.py" \
            >"$VG_LOGS/$name.out" 2>&1 || skip_or_fail "$name" ;;
    esac
    : >"$VG_LOGS/$name.done"
    echo "valgrind: $name done"
    exit 0
fi

build=${VALGRIND_BUILD:-build-valgrind}
jobs=${JOBS:-$(nproc 2>/dev/null || echo 2)}
vgjobs=${VALGRIND_JOBS:-1}
split=${VALGRIND_SPLIT:-0}
valgrind=${VALGRIND_BIN:-valgrind}
command -v "$valgrind" >/dev/null 2>&1 || {
    echo "valgrind: $valgrind not found (scripts/install-deps.sh installs it;" \
         "VALGRIND_BIN names another)" >&2
    exit 1
}
if [ "${VALGRIND_NOBUILD:-0}" = 1 ]; then
    [ -x "$build/cudnn-deploy" ] || {
        echo "valgrind: VALGRIND_NOBUILD=1 but no $build/cudnn-deploy" >&2; exit 1; }
else
    cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCDD_FAULT_INJECTION=ON >/dev/null || exit 1
    cmake --build "$build" -j "$jobs" >/dev/null || exit 1
fi
root=$(cd "$build" && pwd)
logs=$root/valgrind
tmp=$root/valgrind-tmp
rm -rf "$logs" "$tmp"
mkdir -p "$logs" "$tmp"
valgrind=$(command -v "$valgrind")
# Debian's valgrind is a shell script that appends /usr/lib/debug to the
# client's LD_LIBRARY_PATH before it runs valgrind.bin: the tool would then
# see (and env, doctor and the fixes would render) a value the test never
# gave it (test_fleet's GITHUB_ENV cases failed on it). The binary itself
# leaves the environment alone.
[ -x "$valgrind.bin" ] && valgrind=$valgrind.bin
vg="$valgrind --tool=memcheck --error-exitcode=86
    --child-silent-after-fork=yes --num-callers=30 --log-file=$logs/vg.%p.log"
# Leaks are errors (definite ones), except in a run the fault hook kills
# (CUDNN_DEPLOY_TEST_FAULT=kill:N): under memcheck a process's SIGKILL of
# itself still ends with a leak summary, taken while its other threads are
# mid-operation with blocks held only in their registers, so it reports
# "definitely lost" blocks no exit path loses (test_kill's KillByStep did:
# cdd_dir_create's handle in a worker's sink_begin). Memory errors still
# count there.
leaks="--leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite"
wrapper=$root/vg-cudnn-deploy
# VALGRIND_LDSO (with VALGRIND_CLIENT_LIBS): start the binary on that
# dynamic linker, its libraries from that folder first (then the caller's
# LD_LIBRARY_PATH, which tests set for what the tool loads); memcheck finds
# their debug files beside them (prepare-campaign.sh's client).
client="\"$root/cudnn-deploy\""
if [ -n "${VALGRIND_LDSO:-}" ]; then
    client="\"$VALGRIND_LDSO\" --library-path \"$VALGRIND_CLIENT_LIBS\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}\" $client"
fi
cat >"$wrapper" <<WRAP
#!/bin/sh
${VALGRIND_LIB:+VALGRIND_LIB=$VALGRIND_LIB; export VALGRIND_LIB}
leaks="$leaks"
case \${CUDNN_DEPLOY_TEST_FAULT:-} in kill:*) leaks=--leak-check=no ;; esac
exec $(echo $vg) \$leaks $client "\$@"
WRAP
chmod +x "$wrapper"

start=$(date +%s)
deadline_at=
[ -z "${VALGRIND_DEADLINE:-}" ] || deadline_at=$((start + VALGRIND_DEADLINE))
tasks=$logs/tasks
: >"$tasks"
if [ "${VALGRIND_UNIT:-all}" != none ]; then
    for t in "$root"/tests/test_*; do
        [ -x "$t" ] || continue
        echo "unit:$(basename "$t")" >>"$tasks"
    done
fi
if [ "${VALGRIND_E2E:-all}" != none ]; then
    scripts=${VALGRIND_E2E:-all}
    if [ "$scripts" = all ]; then
        scripts=$(cd tests/e2e && ls test_*.py | sed 's/\.py$//')
    fi
    for s in $scripts; do
        case $s in test_windows_*) continue ;; esac
        if [ "$split" -gt 1 ]; then
            # The script's test ids, as unittest's loader finds them.
            CDD_BIN=$wrapper PYTHONDONTWRITEBYTECODE=1 python3 - "$s" \
                >"$logs/$s.ids" <<'PY' || { echo "valgrind: cannot list $s" >&2; exit 1; }
import sys, unittest
sys.path.insert(0, "tests/e2e")
mod = __import__(sys.argv[1])
def ids(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from ids(t)
        else:
            yield t.id().split(".", 1)[1]
for i in ids(unittest.defaultTestLoader.loadTestsFromModule(mod)):
    print(i)
PY
            if [ -n "${VALGRIND_IDS:-}" ]; then
                grep -E "$VALGRIND_IDS" "$logs/$s.ids" >"$logs/$s.ids.sel" || :
                mv "$logs/$s.ids.sel" "$logs/$s.ids"
                [ -s "$logs/$s.ids" ] || { echo "valgrind: no id of $s matches $VALGRIND_IDS" >&2; exit 1; }
            fi
            n=$(wc -l <"$logs/$s.ids")
            [ "$n" -le "$split" ] || n=$split
            echo "valgrind: e2e.$s: $(wc -l <"$logs/$s.ids") tests in $n parts"
            k=0
            shards=${VALGRIND_SHARDS:-1}
            while [ "$k" -lt "$n" ]; do
                if [ "$shards" -gt 1 ]; then
                    j=0
                    while [ "$j" -lt "$shards" ]; do
                        echo "e2e:$s:$k:$n:$j:$shards" >>"$tasks"; j=$((j + 1))
                    done
                else
                    echo "e2e:$s:$k:$n" >>"$tasks"
                fi
                k=$((k + 1))
            done
        else
            echo "e2e:$s" >>"$tasks"
        fi
    done
fi
VG_CMD=$(echo $vg $leaks) VG_ROOT=$root VG_LOGS=$logs VG_TMP=$tmp VG_WRAPPER=$wrapper \
VG_DEADLINE_AT=$deadline_at
export VG_CMD VG_ROOT VG_LOGS VG_TMP VG_WRAPPER VG_DEADLINE_AT
[ -z "${VALGRIND_LIB:-}" ] || export VALGRIND_LIB
xargs -r -P "$vgjobs" -n 1 sh "$self" --one <"$tasks"
end=$(date +%s)

names() { for f in "$logs"/*."$1"; do [ -e "$f" ] && basename "$f" ".$1"; done; }
failed=$(names failed | tr '\n' ' ')
notstarted=$(names notstarted | tr '\n' ' ')
procs=$(ls "$logs"/vg.*.log 2>/dev/null | wc -l)
# "ERROR SUMMARY: N errors": the processes with N > 0.
bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log 2>/dev/null | wc -l)
errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$logs"/vg.*.log 2>/dev/null |
    awk '{s += $1} END {print s + 0}')
echo "---- valgrind memcheck: $procs processes, $errs errors in $bad of them," \
     "$((end - start)) s, $(wc -l <"$tasks") tasks, $vgjobs at a time ----"
[ -z "$failed" ] || echo "tasks that failed under valgrind: $failed(outputs in $logs)"
[ -z "$notstarted" ] ||
    echo "CUT by VALGRIND_DEADLINE=$VALGRIND_DEADLINE s, not started: $notstarted"
if [ "$bad" -gt 0 ]; then
    grep -l 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log | head -5 | while read -r f; do
        echo "== $f"; sed -n '/Invalid\|uninitialised\|definitely lost/,+12p' "$f" | head -40
    done
    exit 1
fi
[ -z "$failed" ] || exit 1
