#!/usr/bin/env bash
# Configures and builds the runtime-only tree (-DANVIL_RUNTIME_ONLY=ON: LLVM is not even looked
# for, no compiler target exists) with what deploys on a device — libanvil_runtime, anvil-rpc,
# the runtime-only example — and runs the layering and link checks there (DESIGN.md §2).
# Usage: scripts/check_runtime_only.sh [BUILD_DIR]   (default build-rt; run by scripts/test.sh)
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
dir=${1:-build-rt}
if [ ! -f "$dir/build.ninja" ]; then
  mkdir -p "$dir"
  cmake -S . -B "$dir" -G Ninja -DANVIL_RUNTIME_ONLY=ON -DANVIL_BUILD_PYTHON=OFF -DANVIL_BUILD_BENCH=OFF \
    >"$dir/configure.log" 2>&1 || { cat "$dir/configure.log"; echo "error: configuring $dir failed" >&2; exit 1; }
fi
if grep -q "anvil_compiler" "$dir/build.ninja"; then
  echo "error: $dir was configured with ANVIL_RUNTIME_ONLY=OFF (it has compiler targets); remove it" >&2
  exit 1
fi
# Cold, about 90 compile steps (minutes on 2 cores); the tree is kept, so later runs are incremental.
ninja -C "$dir" anvil_runtime anvil-rpc anvil_runtime_only_example anvil_test_kernels || exit 1
checks='^(layering_includes|runtime_only_example_runs|runtime_only_example_links_runtime_alone|anvil_rpc_links_runtime_alone)$'
# Exactly these four must exist and pass (a renamed test must not make this step pass vacuously).
count=$(ctest --test-dir "$dir" -N -R "$checks" | sed -n 's/^Total Tests: //p')
if [ "$count" != 4 ]; then
  echo "error: expected the 4 runtime-only checks in $dir, found ${count:-none}" >&2
  exit 1
fi
ctest --test-dir "$dir" --output-on-failure -R "$checks"
