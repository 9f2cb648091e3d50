#!/bin/sh
# Run one libFuzzer target of tests/fuzz/ (docs/fuzzing.md).
#
#   run_fuzz.sh replay BIN SEEDS WORK          every input in SEEDS once
#   run_fuzz.sh run    BIN SEEDS WORK SECONDS  fuzz SECONDS from a copy of
#                                              SEEDS (WORK/corpus), -seed=1
#   run_fuzz.sh long   BIN SEEDS WORK SECONDS  the same on a corpus kept in
#                                              WORK/corpus between runs (the
#                                              seeds added), random -seed
#
# The targets that read files use a scratch folder on tmpfs when /dev/shm is
# writable (the extraction target stages and fsyncs a tree per input),
# removed afterwards. A crash, leak, sanitizer report or broken property
# leaves its input in WORK/ (crash-*, leak-*, timeout-*, oom-*) and fails.
# The last line of a run is the figures: executions, coverage, findings.
set -eu
mode=$1 bin=$2 seeds=$3 work=$4 secs=${5:-12}
name=$(basename "$bin")
mkdir -p "$work"
if [ -n "${CDD_FUZZ_TMP:-}" ]; then
    scratch=$(mktemp -d "$CDD_FUZZ_TMP/cdd-fuzz.XXXXXX")
elif [ -d /dev/shm ] && [ -w /dev/shm ]; then
    scratch=$(mktemp -d /dev/shm/cdd-fuzz.XXXXXX)
else
    scratch=$(mktemp -d "$work/tmp.XXXXXX")
fi
trap 'rm -rf "$scratch"' EXIT INT TERM
export CDD_FUZZ_TMP="$scratch"
[ -d "$seeds" ] || { echo "$name: no seeds in $seeds" >&2; exit 1; }
common="-rss_limit_mb=2048 -timeout=25 -malloc_limit_mb=1024 -artifact_prefix=$work/"
log=$work/$mode.log
case $mode in
replay)
    # shellcheck disable=SC2086
    if ! "$bin" $common -runs=0 "$seeds" >"$log" 2>&1; then
        tail -40 "$log" >&2
        echo "$name: replay FAILED (log: $log)" >&2
        exit 1
    fi
    n=$(find "$seeds" -type f | wc -l)
    cov=$(grep -E '^#[0-9]+' "$log" | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/cov \1, ft \2/p' | tail -1)
    echo "$name: replayed $n inputs, ${cov:-no coverage line}, 0 failures"
    ;;
run|long)
    rm -rf "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*
    seed=
    if [ "$mode" = run ]; then
        rm -rf "$work/corpus"
        seed=-seed=1
    fi
    mkdir -p "$work/corpus"
    cp "$seeds"/* "$work/corpus/" 2>/dev/null || true
    start=$(date +%s)
    rc=0
    # shellcheck disable=SC2086
    "$bin" $common $seed -max_total_time="$secs" -print_final_stats=1 \
        "$work/corpus" >"$log" 2>&1 || rc=$?
    end=$(date +%s)
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -E '^#[0-9]+' "$log" | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\) corp: \([0-9]*\).*/cov \1, ft \2, corpus \3/p' | tail -1)
    found=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' \
        -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
    secs_run=$((end - start))
    echo "$name: ${execs:-?} executions in $secs_run s ($(( ${execs:-0} / (secs_run > 0 ? secs_run : 1) ))/s), ${cov:-no coverage line}, $found findings"
    if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
        tail -60 "$log" >&2
        echo "$name: FAILED (exit $rc; inputs in $work; log: $log)" >&2
        exit 1
    fi
    ;;
*)
    echo "usage: run_fuzz.sh replay|run|long BIN SEEDS WORK [SECONDS]" >&2
    exit 2
    ;;
esac
