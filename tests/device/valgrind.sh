#!/bin/bash
# Run ON THE ACCELERATOR MACHINE (16 cores, no valgrind of its own) from the
# repository root, with .device/ carried after `sh bench/prepare-device.sh`
# and `sh tests/device/prepare-valgrind.sh` here: e2e scripts under
# memcheck as scripts/valgrind.sh runs them, but split into their single
# tests (unittest ids), JOBS at a time, each with its own CDD_TEST_TMP, and
# stopped at a deadline (tests not started by then are listed as not run).
#   bash tests/device/valgrind.sh SECONDS SCRIPT...     (JOBS: default nproc)
# Writes $OUT/valgrind-summary.txt and $OUT/valgrind-errors.txt.
set -u
ROOT=$(pwd)
C=$ROOT/.device
OUT=${OUT:-$ROOT/device-out}
DEADLINE=$1
shift
JOBS=${JOBS:-$(nproc)}
W=${CDD_VG_WORK:-/root/cdd-vg}
[ -x "$C/valgrind/bin/valgrind.bin" ] && [ -x "$C/vg/cudnn-deploy" ] || {
    echo "no .device/valgrind or .device/vg (run tests/device/prepare-valgrind.sh here)"
    exit 2
}
export VALGRIND_LIB=$C/valgrind/lib LD_LIBRARY_PATH=$C/lib
rm -rf "$W" && mkdir -p "$W/logs" "$W/tmp" "$W/res" "$OUT"
wrapper=$W/vg-cudnn-deploy
cat >"$wrapper" <<WRAP
#!/bin/sh
exec $C/valgrind/bin/valgrind.bin --tool=memcheck --error-exitcode=86 \
    --leak-check=full --show-leak-kinds=definite \
    --errors-for-leak-kinds=definite --child-silent-after-fork=yes \
    --num-callers=30 --log-file=$W/logs/vg.%p.log $C/vg/cudnn-deploy "\$@"
WRAP
chmod +x "$wrapper"
"$wrapper" --version >/dev/null || { echo "memcheck does not start"; exit 2; }
rm -f "$W"/logs/*
python3 - "$@" >"$W/ids" <<'PY'
import sys, unittest
sys.path.insert(0, "tests/e2e")
def walk(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from walk(t)
        else:
            yield t.id()
for name in sys.argv[1:]:
    for i in walk(unittest.defaultTestLoader.loadTestsFromName(name)):
        print(i)
PY
end=$(($(date +%s) + DEADLINE))
export W wrapper end C
one() {
    [ "$(date +%s)" -lt "$end" ] || { echo "$1" >>"$W/notrun"; return 0; }
    local id=$1 t=$W/tmp/$1
    mkdir -p "$t"
    if (cd tests/e2e && CDD_BIN=$wrapper CDD_EXE=$C/vg/cudnn-deploy \
            CDD_FAULT_BUILD=ON CDD_TEST_TMP=$t PYTHONDONTWRITEBYTECODE=1 \
            timeout $((end - $(date +%s) + 5)) python3 -m unittest "$id" \
            >"$W/res/$id.out" 2>&1); then
        echo "$id" >>"$W/passed"
    elif [ "$(date +%s)" -ge "$end" ]; then
        echo "$id" >>"$W/cut" # still running at the deadline
    else
        echo "$id" >>"$W/failed"
    fi
    rm -rf "$t"
}
export -f one
t0=$(date +%s)
xargs -P "$JOBS" -I{} bash -c 'one {}' <"$W/ids"
procs=$(ls "$W"/logs/vg.*.log 2>/dev/null | wc -l)
bad=$(grep -l 'ERROR SUMMARY: [1-9]' "$W"/logs/vg.*.log 2>/dev/null | wc -l)
errs=$(sed -n 's/.*ERROR SUMMARY: \([0-9]*\) errors.*/\1/p' "$W"/logs/vg.*.log 2>/dev/null |
    awk '{s += $1} END {print s + 0}')
lost=$(grep -h 'definitely lost:' "$W"/logs/vg.*.log 2>/dev/null | grep -v ' 0 bytes' | wc -l)
count() { # script, list
    if [ -f "$W/$2" ]; then grep -c "^$1\." "$W/$2" || true; else echo 0; fi
}
{
    echo "valgrind memcheck on $(nproc) CPUs, $JOBS at a time, $(($(date +%s) - t0)) s: $*"
    for s in "$@"; do
        echo "$s: $(count "$s" ids) tests, $(count "$s" passed) passed, $(count "$s" failed) failed, $(count "$s" cut) cut at the deadline, $(count "$s" notrun) not started"
    done
    echo "$procs memcheck processes, $errs errors in $bad of them, $lost with definite leaks"
    [ -s "$W/failed" ] && { echo "failed:"; cat "$W/failed"; }
    [ -s "$W/cut" ] && { echo "cut at the deadline:"; cat "$W/cut"; }
    [ -s "$W/notrun" ] && { echo "not started:"; cat "$W/notrun"; }
} | tee "$OUT/valgrind-summary.txt"
{
    grep -l 'ERROR SUMMARY: [1-9]' "$W"/logs/vg.*.log 2>/dev/null | head -10 | while read -r f; do
        echo "== $f"; sed -n '/Invalid\|uninitialised\|definitely lost\|Syscall param/,+14p' "$f" | head -60
    done
    for id in $(cat "$W/failed" 2>/dev/null | head -10); do
        echo "== $id"; tail -40 "$W/res/$id.out"
    done
} >"$OUT/valgrind-errors.txt"
