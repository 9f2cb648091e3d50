#!/bin/sh
# make demo: the main job end to end on generated data in a scratch tree:
# install -> status -> re-install (unchanged) -> verify (short, --verbose,
# --fix-shell powershell) -> a mistyped command -> tampered archive refused ->
# an archive the default manifest does not pin -> uninstall refused (a changed
# file) -> uninstall, each command shown before it runs, each with the exit
# code it must have. A step that exits otherwise stops the demo: the closing
# summary, then exit 1. Bold headers only on a terminal.
#
# Each command is shown as it runs: the binary as given, the variables set
# for it, the scratch folder as $DEMO (its path is printed first, so the
# commands can be pasted after `DEMO=...`).
#
# usage: [KEEP=1] demo.sh [BIN]
#   KEEP=1  keep the scratch folder (the tree, the archive, the deploy log)
#           instead of deleting it at the end; the demo says which it does.
set -eu
SHOWN_BIN=${1:-build/cudnn-deploy}
BIN=$(cd "$(dirname "$SHOWN_BIN")" && pwd)/$(basename "$SHOWN_BIN")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-deploy-demo.XXXXXX")
KEEP=${KEEP:-0}
if [ "$KEEP" = 1 ]; then
    trap 'echo "Kept the scratch folder: $SCRATCH (delete it with: rm -rf $SCRATCH)"' EXIT
else
    trap 'rm -rf "$SCRATCH"; echo "Deleted the scratch folder $SCRATCH (KEEP=1 keeps it)"' EXIT
fi
if [ -t 1 ]; then BOLD=$(printf '\033[1m'); PLAIN=$(printf '\033[0m'); else BOLD=; PLAIN=; fi
FAILED=
STEPS=0

fixtures=$(python3 "$(dirname "$0")/demo_fixtures.py" "$SCRATCH" "$BIN") || {
    echo "demo: FAILED: could not generate the demo's archive and tree" >&2
    exit 1
}
eval "$fixtures"
# The fake cuDNN's GPU checks run on the fake driver beside it, never on
# this machine's own (whose device pointers the fake would be handed).
if [ -n "$DRIVER" ]; then
    # One fake GPU cuDNN 8.5 supports (its default, 9.0, is newer).
    CUDNN_DEPLOY_DRIVER_LIB=$DRIVER FAKE_CUDA_CC=8.6
    export CUDNN_DEPLOY_DRIVER_LIB FAKE_CUDA_CC
fi

# step WANT [VAR=VALUE...] ARGS...: run cudnn-deploy ARGS with the
# variables set, which must exit WANT; shown exactly as it runs.
step() {
    want=$1
    shift
    vars=
    while [ $# -gt 0 ]; do
        case $1 in
            [A-Za-z_]*=*) vars="$vars $1"; shift ;;
            *) break ;;
        esac
    done
    STEPS=$((STEPS + 1))
    printf '\n%s$%s %s %s%s\n' "$BOLD" "$vars" "$SHOWN_BIN" "$*" "$PLAIN" |
        sed "s|$SCRATCH|\$DEMO|g"
    set +e
    # shellcheck disable=SC2086 # the assignments hold no spaces: $SCRATCH
    # comes from mktemp under TMPDIR
    env $vars "$BIN" "$@"
    rc=$?
    set -e
    if [ "$rc" -eq "$want" ]; then
        echo "(exit $rc)"
    else
        echo "(exit $rc, expected $want: FAILED)"
        FAILED="cudnn-deploy $1 exited $rc, not $want"
        summary # stops here: the later steps build on this one
    fi
}

# The tree's files and their hashes, to show that uninstall restores it.
snapshot() {
    (cd "$TREE" && find . -path ./.cudnn-deploy -prune -o \( -type f -o -type l \) -print |
        LC_ALL=C sort | while read -r f; do
            if [ -L "$f" ]; then echo "$f -> $(readlink "$f")"; else echo "$f $(sha256sum < "$f")"; fi
        done)
}

summary() {
    echo
    echo "${BOLD}Summary${PLAIN}"
    echo "  installed: cuDNN 8.5.0.96 (fake libraries) into \$DEMO/cuda-11.6, $NFILES files"
    echo "  verify:    $VERIFIED"
    echo "  tampered:  $TAMPER"
    echo "  uninstall: $RESTORED"
    if [ -n "$FAILED" ]; then
        echo "demo: FAILED: $FAILED"
        exit 1
    fi
    echo "demo: all $STEPS steps behaved as documented"
}
NFILES="?"; VERIFIED="not run"; TAMPER="not run"; RESTORED="not run"

echo "Scratch folder: DEMO=$SCRATCH ($( [ "$KEEP" = 1 ] && echo "kept at the end: KEEP=1" || echo "deleted at the end; KEEP=1 keeps it"))"
echo "A fake cuDNN 8.5.0.96 archive for Linux (real shared objects with cuDNN's"
echo "sonames and version functions), its manifest, and a CUDA 11.6 tree."
if [ -n "$DRIVER" ]; then
    echo "The GPU checks run on a fake NVIDIA driver with one fake GPU (sm_86), the"
    echo "same on any machine; every command below has them:"
    echo "  CUDNN_DEPLOY_DRIVER_LIB=$DRIVER FAKE_CUDA_CC=8.6" |
        sed "s|$SCRATCH|\$DEMO|g"
fi
BEFORE=$(snapshot)
echo "install checks the archive, commits it in one transaction, then verifies."
step 0 install --cuda-root "$TREE" --manifest "$MANIFEST" --archive "$ARCHIVE" $VERIFY
NFILES=$(snapshot | wc -l)
NFILES=$((NFILES - $(printf '%s\n' "$BEFORE" | wc -l)))
step 0 status --cuda-root "$TREE" --check
step 0 install --cuda-root "$TREE" --manifest "$MANIFEST" --archive "$ARCHIVE" --no-verify
echo "A re-install finds every file identical and changes nothing."
if [ -z "$VERIFY" ]; then
    echo "With the tree's lib64 on the library path, the search-order warning goes;"
    echo "--verbose shows every check:"
    step 0 LD_LIBRARY_PATH="$TREE/lib64" verify --cuda-root "$TREE" --verbose
    VERIFIED=$(LD_LIBRARY_PATH="$TREE/lib64" "$BIN" --json verify --cuda-root "$TREE" 2>/dev/null |
        python3 -c 'import json,sys
d = json.load(sys.stdin); n = {}
for c in d["checks"]: n[c["status"]] = n.get(c["status"], 0) + 1
print("exit %d: %s" % (d["exit_code"], ", ".join("%d %s" % (v, k) for k, v in sorted(n.items()))))') ||
        VERIFIED="verify --json failed"
else
    VERIFIED="skipped (no C compiler for the fake libraries)"
fi
echo "The same fixes, written for PowerShell (--fix-shell: sh, bash, zsh, fish, powershell, cmd, cmd-batch):"
step 0 verify --cuda-root "$TREE" --fix-shell powershell
echo "A mistyped command gets a suggestion (exit 2):"
step 2 verfy --cuda-root "$TREE"
step 3 install --cuda-root "$TREE" --manifest "$MANIFEST" --archive "$TAMPERED" $VERIFY
TAMPER="one flipped bit: refused with exit $rc, tree untouched"
echo "One flipped bit in the archive: refused with exit 3, tree untouched."
echo "Without --manifest, the default manifest pins NVIDIA's real archive; the"
echo "error says what to do instead (exit 3):"
step 3 install --cuda-root "$TREE" --archive "$ARCHIVE" $VERIFY
cp "$TREE/include/cudnn.h" "$SCRATCH/cudnn.h.saved"
echo "/* edited by hand */" >> "$TREE/include/cudnn.h"
echo "A file changed since install: uninstall refuses, names it and the way out (exit 1):"
step 1 uninstall --cuda-root "$TREE"
cp "$SCRATCH/cudnn.h.saved" "$TREE/include/cudnn.h"
echo "The file put back as installed:"
step 0 uninstall --cuda-root "$TREE"
if [ "$(snapshot)" = "$BEFORE" ]; then
    RESTORED="the tree is exactly as before the install"
else
    RESTORED="the tree differs from before the install: FAILED"
    FAILED="${FAILED}${FAILED:+; }uninstall did not restore the tree"
fi
echo
if [ -f "$TREE/.cudnn-deploy/log.jsonl" ]; then
    echo "Deploy log (\$DEMO/cuda-11.6/.cudnn-deploy/log.jsonl):"
    sed "s/^/  /; s|$SCRATCH|\$DEMO|g" "$TREE/.cudnn-deploy/log.jsonl"
fi
summary
