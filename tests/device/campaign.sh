#!/bin/bash
# Run ON THE DEVICE HOST from the repository root, after
# scripts/prepare-campaign.sh ran on the build machine and .device/ was
# carried over: one slice of issue 18's long campaigns, all cores, within
# one command's 10 minutes. A summary goes to $OUT (or ./device-out).
#
#   tests/device/campaign.sh malloc STRIDE OFFSET DEADLINE [WORKERS]
#       torture.py --only malloc --malloc-stride STRIDE --malloc-offset
#       OFFSET --deadline DEADLINE --workers WORKERS (default: nproc) on the
#       release binary; STRIDE runs with OFFSET 0..STRIDE-1 together try
#       every N. Writes $OUT/malloc-S-O.{log,json}.
#   tests/device/campaign.sh valgrind SCRIPT DEADLINE [JOBS]
#       scripts/valgrind.sh on e2e scripts (test_tamper, or a quoted list:
#       "test_cli test_ux", named test_cli-and-1) split by test id into 4 x JOBS parts
#       (VALGRIND_SPLIT overrides), JOBS (default: nproc) at a time, no part
#       started after DEADLINE s, and everything stopped at DEADLINE + 60 s
#       (CAMPAIGN_HARD overrides). Writes $OUT/valgrind-SCRIPT.log, the
#       outputs of the parts that failed and $OUT/valgrind-SCRIPT.errors
#       (each process with errors: its test, command and errors' frames).
#       Two scripts at once need two builds: CAMPAIGN_BUILD=DIR (a copy
#       of .device/build-valgrind) for the second.
# Both print "cut" when the deadline left trials or parts out, and exit
# non-zero only for a real failure (or a part killed at the hard limit).
set -u
ROOT=$(pwd)
CARRY=$ROOT/.device
OUT=${OUT:-$ROOT/device-out}
mkdir -p "$OUT"
export LD_LIBRARY_PATH=$CARRY/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export CDD_TEST_TMP=${CDD_TEST_TMP:-/root/cdd-campaign}
# The tests' jsonschema (prepare-campaign.sh), which the host lacks.
[ -d "$CARRY/py" ] && export CDD_TEST_PYLIB=$CARRY/py
usage() { sed -n '7,23p' "$0" >&2; exit 2; }
kind=${1:-}; [ $# -gt 0 ] && shift
case $kind in
malloc)
    [ $# -ge 3 ] || usage
    stride=$1 offset=$2 deadline=$3 workers=${4:-$(nproc)}
    base=$OUT/malloc-$stride-$offset
    echo "== malloc sweep: stride $stride, offset $offset, deadline $deadline s," \
         "$workers workers on $(nproc) cores" | tee "$base.log"
    start=$(date +%s)
    python3 tests/torture/torture.py --bin "$CARRY/cudnn-deploy" \
        --shim "$CARRY/failmalloc.so" --only malloc --workers "$workers" \
        --malloc-stride "$stride" --malloc-offset "$offset" \
        --deadline "$deadline" --json "$base.json" \
        --work "$CDD_TEST_TMP/torture-$stride-$offset" >>"$base.log" 2>&1
    rc=$?
    echo "== exit $rc after $(( $(date +%s) - start )) s" >>"$base.log"
    cat "$base.log"
    exit $rc ;;
valgrind)
    [ $# -ge 2 ] || usage
    script=$1 deadline=$2 jobs=${3:-$(nproc)}
    split=${VALGRIND_SPLIT:-$((4 * jobs))}
    hard=${CAMPAIGN_HARD:-$((deadline + 60))}
    build=${CAMPAIGN_BUILD:-$CARRY/build-valgrind}
    # SCRIPT may be a list ("test_install test_cli"): one campaign, its
    # outputs named after the first and the count of the others
    # (test_install-and-1): the device returns no file whose name holds a "+".
    set -- $script
    name=$1
    [ $# -eq 1 ] || name="$1-and-$(($# - 1))"
    log=$OUT/valgrind-$name.log
    echo "== valgrind over $script: $split parts, $jobs at a time, deadline" \
         "$deadline s, stopped at $hard s" | tee "$log"
    # The client's C library: Debian's ld.so, libc and their debug files
    # (prepare-campaign.sh), since this host's own ld.so is stripped.
    client=$CARRY/valgrind/client
    if [ -f "$CARRY/valgrind/client.tar.xz" ] && [ ! -d "$client" ]; then
        mkdir -p "$client" && tar -C "$client" -xJf "$CARRY/valgrind/client.tar.xz"
    fi
    if [ -d "$client" ]; then
        export VALGRIND_LDSO=$client/ld-linux-x86-64.so.2
        export VALGRIND_CLIENT_LIBS=$client/lib
        echo "client on Debian's dynamic linker ($client)" | tee -a "$log"
    fi
    start=$(date +%s)
    VALGRIND_BIN=$CARRY/valgrind/bin/valgrind VALGRIND_LIB=$CARRY/valgrind/libexec \
    VALGRIND_BUILD=$build VALGRIND_NOBUILD=1 VALGRIND_UNIT=none \
    VALGRIND_E2E=$script VALGRIND_SPLIT=$split VALGRIND_JOBS=$jobs \
    VALGRIND_DEADLINE=$deadline \
        timeout -s TERM -k 10 "$hard" sh scripts/valgrind.sh >>"$log" 2>&1
    rc=$?
    logs=$build/valgrind
    # The summary from the logs themselves (valgrind.sh's own is lost when
    # the hard limit stops it).
    total=$(wc -l <"$logs/tasks")
    done_=$(ls "$logs"/*.done 2>/dev/null | wc -l)
    cut=$(ls "$logs"/*.notstarted 2>/dev/null | wc -l)
    failed=$(ls "$logs"/*.failed 2>/dev/null | xargs -r -n1 basename | sed 's/\.failed$//' | tr '\n' ' ')
    killed=$((total - done_ - cut))
    procs=$(ls "$logs"/vg.*.log 2>/dev/null | wc -l)
    finished=$(grep -l 'ERROR SUMMARY:' "$logs"/vg.*.log 2>/dev/null | wc -l)
    bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log 2>/dev/null | wc -l)
    errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$logs"/vg.*.log 2>/dev/null |
        awk '{s += $1} END {print s + 0}')
    tests=0
    for s in $script; do
        n=$(wc -l <"$logs/$s.ids" 2>/dev/null) || { tests="?"; break; }
        tests=$((tests + n))
    done
    ran=$(cat "$logs"/*.out 2>/dev/null | sed -n 's/^Ran \([0-9]*\) tests\{0,1\} in.*/\1/p' |
        awk '{s += $1} END {print s + 0}')
    {
        echo "== valgrind.sh exit $rc after $(( $(date +%s) - start )) s"
        # Sharded (VALGRIND_SHARDS=S), each test runs once per shard.
        runs="$ran of $tests tests ran"
        [ "${VALGRIND_SHARDS:-1}" -gt 1 ] &&
            runs="$tests tests over ${VALGRIND_SHARDS} shards each: $ran of $((tests * VALGRIND_SHARDS)) shard runs ran"
        echo "summary: $script: $runs in $done_ of $total parts" \
             "($cut not started: deadline; $killed stopped at the hard limit);" \
             "$procs memcheck processes ($finished finished), $errs errors in $bad"
        [ -z "$failed" ] || echo "parts that failed: $failed"
        [ "$cut" -eq 0 ] || echo "CUT: the deadline left $cut parts out"
    } | tee -a "$log"
    # Every process with errors in one file (only a few files come back
    # from the device): the test its tree belongs to, the command, and each
    # error's kind with its first frames.
    for f in $(grep -l 'ERROR SUMMARY: [1-9]' "$logs"/vg.*.log 2>/dev/null); do
        echo "== $(basename "$f"): $(sed -n 's|.*/cdd-e2e-[^/]*/\([^/]*/[^/]*\)/.*|\1|p' "$f" | head -1)"
        sed -n 's/^==[0-9]*== Command: .*\/cudnn-deploy \([a-z-]*\).*/command: \1/p' "$f" | head -1
        awk '/^==[0-9]+== [A-Z0-9(]/ && !/Memcheck|Copyright|Using Valgrind|Command:|Parent PID|HEAP SUMMARY|in use at exit|total heap usage|LEAK SUMMARY|lost:|reachable:|suppressed:|ERROR SUMMARY|For lists|Reachable blocks|To see them|rerun with/ {
                 sub(/^==[0-9]+== /, ""); print "  " $0; n = 6; next }
             n > 0 && /(at|by) 0x/ { sub(/^==[0-9]+== +/, ""); print "      " $0; n--; next }
             { n = 0 }' "$f"
    done >"$OUT/valgrind-$name.errors"
    [ -s "$OUT/valgrind-$name.errors" ] &&
        echo "errors by process: $OUT/valgrind-$name.errors" | tee -a "$log"
    mkdir -p "$OUT/valgrind-$name"
    for f in $failed; do cp "$logs/$f.out" "$OUT/valgrind-$name/"; done
    [ "$bad" -eq 0 ] && [ -z "$failed" ] && [ "$killed" -eq 0 ] ;;
*) usage ;;
esac
