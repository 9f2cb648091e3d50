#!/bin/sh
# make demo: the main job end to end on generated data in a scratch tree:
# install -> status -> re-install (unchanged) -> tampered archive refused ->
# uninstall, each command shown before it runs.
set -eu
BIN=${1:-build/cudnn-deploy}
BIN=$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/cudnn-deploy-demo.XXXXXX")
eval "$(python3 "$(dirname "$0")/demo_fixtures.py" "$SCRATCH" "$BIN")"

step() {
    printf '\n\033[1m$ cudnn-deploy %s\033[0m\n' "$*" | sed "s|$SCRATCH|\$DEMO|g"
    set +e
    "$BIN" "$@"
    rc=$?
    set -e
    echo "(exit $rc)"
    return 0
}

echo "Scratch folder (\$DEMO): $SCRATCH"
echo "A fake cuDNN 8.5.0.96 archive for Linux (real shared objects with cuDNN's"
echo "sonames and version functions), its manifest, and a CUDA 11.6 tree."
echo "install checks the archive, commits it in one transaction, then verifies."
step install --cuda-root "$TREE" --manifest "$MANIFEST" --archive "$ARCHIVE" $VERIFY
printf '\nThe tree now holds:\n'
(cd "$TREE" && find . -path ./.cudnn-deploy -prune -o \( -type f -o -type l \) -print | sort | sed 's|^\./|  |' | head -40)
step status --cuda-root "$TREE" --check
step install --cuda-root "$TREE" --manifest "$MANIFEST" --archive "$ARCHIVE" --no-verify
echo "A re-install finds every file identical and changes nothing."
if [ -z "$VERIFY" ]; then
    echo "With the tree's lib64 on the library path, the search-order warning goes:"
    LD_LIBRARY_PATH="$TREE/lib64" step verify --cuda-root "$TREE"
fi
step install --cuda-root "$TREE" --manifest "$MANIFEST" --archive "$TAMPERED" $VERIFY
echo "One flipped bit in the archive: refused with exit 3, tree untouched."
step uninstall --cuda-root "$TREE"
printf '\nAfter uninstall the tree holds:\n'
(cd "$TREE" && find . \( -type f -o -type l \) -print | sort | sed 's|^\./|  |')
echo
echo "Deploy log ($TREE/.cudnn-deploy/log.jsonl):"
sed 's/^/  /' "$TREE/.cudnn-deploy/log.jsonl"
rm -rf "$SCRATCH"
