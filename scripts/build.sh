#!/usr/bin/env bash
# Configures and builds the main tree in build/ (Ninja, ccache). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ANVIL_BUILD_DIR:-$root/build}
if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S "$root" -B "$build" -G Ninja -DPython_EXECUTABLE="$(command -v "${PYTHON:-python3}")" "$@" >/dev/null
fi
ninja -C "$build"
