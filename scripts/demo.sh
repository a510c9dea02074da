#!/usr/bin/env bash
# Sets up, builds, and runs the runtime demo: compile tensor-expression kernels with LLVM into a library with an embedded
# weights blob, load it through the runtime, run it on random inputs, check the results against
# numpy and print outputs and latency.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
bash scripts/build.sh
# shellcheck source=/dev/null
source scripts/env.sh
python3 examples/runtime_demo.py "$@"
