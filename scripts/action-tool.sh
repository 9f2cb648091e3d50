#!/bin/sh
# action.yml, step "Install cudnn-deploy": put the tool in $TOOL/bin. From
# $TOOL_URL (a package: the CPack .tar.gz, or the Windows zip of
# scripts/windows.sh), else built from the action's source ($SRC; Linux).
set -eu
mkdir -p "$TOOL/bin"
if [ -n "${TOOL_URL:-}" ]; then
    pkg="$TOOL/package"
    curl -fsSL --retry 3 -o "$pkg" "$TOOL_URL"
    mkdir -p "$TOOL/unpacked"
    case "$TOOL_URL" in
        *.zip) unzip -q -o "$pkg" -d "$TOOL/unpacked" ;;
        *) tar -xzf "$pkg" -C "$TOOL/unpacked" ;;
    esac
    exe=$(find "$TOOL/unpacked" -type f \( -name cudnn-deploy -o -name cudnn-deploy.exe \) | head -n 1)
    [ -n "$exe" ] || { echo "no cudnn-deploy in $TOOL_URL" >&2; exit 1; }
    cp "$exe" "$TOOL/bin/"
else
    case "$(uname -s)" in
        Linux) ;;
        *) echo "building from source needs Linux; give tool-url (the Windows zip)" >&2; exit 1 ;;
    esac
    sh "$SRC/scripts/install-deps.sh"
    cmake -S "$SRC" -B "$TOOL/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCDD_BUILD_TESTS=OFF >/dev/null
    cmake --build "$TOOL/build" -j "$(nproc)" >/dev/null
    cp "$TOOL/build/cudnn-deploy" "$TOOL/bin/"
fi
echo "$TOOL/bin" >> "$GITHUB_PATH"
"$TOOL/bin/cudnn-deploy" --version
