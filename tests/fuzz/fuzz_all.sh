#!/bin/sh
# `make fuzz`: every fuzz target for SECONDS each, one after the other,
# niced, on corpora kept in BUILD/fuzz-long/<target>/corpus between runs
# (so a second run goes on where the first stopped), then the figures:
# executions, coverage (edges "cov", features "ft"), corpus size, findings.
# A finding's input stays in BUILD/fuzz-long/<target>/ (crash-*, leak-*, ...).
#
#   tests/fuzz/fuzz_all.sh BUILD SECONDS [TARGET...]
set -u
build=$1 secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
targets=${*:-"pathsafe manifest redistrib receipt journal elf pe fatbin zipcd tarscan inflate extract"}
summary=$build/fuzz-long/summary.txt
mkdir -p "$build/fuzz-long"
: >"$summary"
failed=0
for t in $targets; do
    if ! nice -n 10 sh "$here/run_fuzz.sh" long "$build/tests/fuzz/fuzz_$t" \
        "$build/fuzz-seeds/$t" "$build/fuzz-long/$t" "$secs" >>"$summary"; then
        failed=$((failed + 1))
    fi
    tail -1 "$summary"
done
echo "---- fuzz: $secs s per target ($(date -u +%Y-%m-%dT%H:%MZ)) ----"
cat "$summary"
[ "$failed" -eq 0 ] || { echo "fuzz: $failed target(s) found something" >&2; exit 1; }
