#!/bin/sh
# The three fsync mutants that survived the suite's mutation test (issue 14),
# and a fourth of the same kind, each planted in a copy of the tree, built
# (release configuration) and traced by durability.py, which must FAIL on
# each; the unmutated copy must pass (the control). Exit 0 when the control
# passes and every mutant is caught.
#
#   sh tests/torture/mutants.sh [WORK]      (default WORK: /tmp/cdd-mutants-$USER)
#
# The mutations are exact text replacements: when the code they anchor on
# changes, this script stops with "anchor not found" instead of testing
# nothing.
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${1:-${TMPDIR:-/tmp}/cdd-mutants-$(id -un)}
COPY=$WORK/src
BUILD=$WORK/build
JOBS=${JOBS:-2}

command -v strace >/dev/null 2>&1 || { echo "mutants: skipped: strace is not installed"; exit 77; }

echo "mutants: copying the tree to $COPY"
rm -rf "$COPY"
mkdir -p "$COPY"
(cd "$SRC" && git ls-files -z --cached --others --exclude-standard |
    xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$COPY"

echo "mutants: configuring and building the release binary (once; each mutant rebuilds one file)"
cmake -S "$COPY" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCDD_FAULT_INJECTION=OFF >/dev/null
build() { cmake --build "$BUILD" --target cudnn-deploy -j "$JOBS" >"$WORK/build.log" 2>&1 ||
    { tail -20 "$WORK/build.log"; echo "mutants: build failed"; exit 2; }; }
build

check() { # $1: label; prints durability's verdict, returns its status
    python3 "$SRC/tests/torture/durability.py" --bin "$BUILD/cudnn-deploy" \
        --work "$WORK/trace-$1" >"$WORK/$1.out" 2>&1 && rc=0 || rc=$?
    sed 's/^/    /' "$WORK/$1.out"
    return $rc
}

# mutate FILE LABEL: replace the text in $WORK/old with $WORK/new, exactly once.
mutate() {
    python3 - "$COPY/$1" "$WORK/old" "$WORK/new" <<'PY'
import sys
path, old, new = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()
text = open(path).read()
n = text.count(old)
if n != 1:
    sys.exit("mutants: anchor found %d times in %s (expected once):\n%s" % (n, path, old))
open(path, "w").write(text.replace(old, new))
PY
}

status=0
echo "mutants: control (no mutation): the check must pass"
if check control; then echo "  control: passes, as it must"; else
    echo "  control: FAILS: the check or the tree is wrong"; status=1; fi

caught=0; total=0
run_mutant() { # $1 label, $2 file, $3 what
    total=$((total + 1))
    cp "$COPY/$2" "$WORK/orig"
    mutate "$2"
    build
    echo "mutant $1 ($3, in $2): the check must fail"
    if check "$1"; then
        echo "  mutant $1: NOT CAUGHT"; status=1
    else
        echo "  mutant $1: caught"; caught=$((caught + 1))
    fi
    cp "$WORK/orig" "$COPY/$2"
}

cat >"$WORK/old" <<'T'
         * all before the commit. */
        r = cdd_file_sync(f);
T
cat >"$WORK/new" <<'T'
         * all before the commit. */
        r = 0; /* mutant: the staged file is not flushed */
T
run_mutant staged-fsync src/core/tree/install.c "no fsync of a staged file before its rename"

cat >"$WORK/old" <<'T'
    if (!r)
        r = sync_dirs(p, &syncs);
    if (!r && cdd_cancelled())
T
cat >"$WORK/new" <<'T'
    /* mutant: the folders the commit changed are not flushed */
    if (!r && cdd_cancelled())
T
run_mutant folder-syncs src/core/tree/txn.c "no folder syncs before the commit record"

cat >"$WORK/old" <<'T'
    r = cdd_file_write(f, buf, len);
    if (!r)
        r = cdd_file_sync(f);
T
cat >"$WORK/new" <<'T'
    r = cdd_file_write(f, buf, len);
    /* mutant: the atomic write does not flush its .tmp */
T
run_mutant atomic-fsync src/core/tree/tree.c "no fsync in the atomic write (the journal)"

cat >"$WORK/old" <<'T'
        r = cdd_file_write(f, text, strlen(text));
    if (!r)
        r = cdd_file_sync(f);
T
cat >"$WORK/new" <<'T'
        r = cdd_file_write(f, text, strlen(text));
    /* mutant: the staged receipt and manifest copy are not flushed */
T
run_mutant receipt-fsync src/core/tree/install.c "no fsync of the staged receipt and manifest copy"

echo "mutants: $caught of $total caught; control $( [ $status -eq 0 ] && echo passed || echo see above)"
exit $status
