#!/usr/bin/env bash
# Sets up, builds, and runs the demo: a real model with trained weights (PP-OCRv4 text
# recognition, from the rapidocr-onnxruntime package that setup.sh installs) compiled by
# `anvil.compile` into one library, loaded back through the runtime, run on a rendered line of
# text; prints what it reads, the difference from ONNX Runtime and both latencies. Then the
# same through the `anvil` command: compile, inspect, run.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bash scripts/setup.sh
bash scripts/build.sh
# shellcheck source=/dev/null
source scripts/env.sh
out=${ANVIL_DEMO_DIR:-$(mktemp -d)}
python3 examples/onnx_demo.py --out "$out/ocr_rec.so" "$@"
echo
echo "---- the same library through the anvil command"
anvil inspect "$out/ocr_rec.so"
anvil run "$out/ocr_rec.so" --repeat 10
