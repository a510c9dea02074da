#!/usr/bin/env bash
# Configures and builds the main tree in build/ (Ninja, ccache). Extra arguments go to cmake.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${ANVIL_BUILD_DIR:-$root/build}
# ccache: paths relative to the checkout and no working directory in the hash, so a fresh clone
# (CI's) reuses what an earlier build of the same sources compiled.
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$root} CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-1}
if [ ! -f "$build/build.ninja" ] || [ $# -gt 0 ]; then
  cmake -S "$root" -B "$build" -G Ninja -DPython_EXECUTABLE="$(command -v "${PYTHON:-python3}")" "$@" >/dev/null
fi
ninja -C "$build"
