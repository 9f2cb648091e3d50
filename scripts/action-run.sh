#!/bin/sh
# action.yml, step "Install and verify cuDNN": install (the archive cached by
# its pin in $CACHE), verify, and export the environment to the next steps
# (cudnn-deploy env --github); the JSON reports go to $REPORTS.
set -eu
tool="$TOOL/bin/cudnn-deploy"
[ -x "$tool" ] || tool="$TOOL/bin/cudnn-deploy.exe"
if [ -n "${IN_CUDA:-}" ]; then topt=--cuda tval=$IN_CUDA
elif [ -n "${IN_CUDA_ROOT:-}" ]; then topt=--cuda-root tval=$IN_CUDA_ROOT
elif [ -n "${IN_PREFIX:-}" ]; then topt=--prefix tval=$IN_PREFIX
else echo "cudnn-deploy action: give cuda, cuda-root or prefix" >&2; exit 2
fi
[ -n "${CUDNN_DEPLOY_MIRROR:-}" ] || unset CUDNN_DEPLOY_MIRROR
set -- "$topt" "$tval"
[ -z "${IN_MANIFEST:-}" ] || set -- "$@" --manifest "$IN_MANIFEST"
[ -z "${IN_ARCHIVE:-}" ] || set -- "$@" --archive "$IN_ARCHIVE"
for c in ${IN_WITH:-}; do set -- "$@" --with "$c"; done
"$tool" --json install "$@" --cache-dir "$CACHE" --no-verify \
    > "$REPORTS/install.json"
set -- "$topt" "$tval"
[ -z "${IN_MANIFEST:-}" ] || set -- "$@" --manifest "$IN_MANIFEST"
[ -z "${IN_LEVEL:-}" ] || set -- "$@" --level "$IN_LEVEL"
"$tool" --json verify "$@" > "$REPORTS/verify.json"
"$tool" env "$topt" "$tval" --github
