#!/usr/bin/env bash
# Fetches the ONNX backend node tests (a model.onnx plus test_data_set_*/{input,output}_*.pb per
# test) that tests/conformance/run_node_tests.py runs. onnx 1.23 and later build the cases in
# memory only, so the data comes from the newest wheel that still has it on disk, onnx==1.22.0:
# `pip download` of that wheel for this Python's platform, unzipping only the test data.
# Nothing is installed. Idempotent: when the data is there it only checks, in well under a second.
#
#   tests/conformance/fetch_node_tests.sh        # prints the data directory on its last line
#   ANVIL_CACHE=/some/dir tests/conformance/fetch_node_tests.sh
#
# The wheel also holds onnx/backend/test/data/light/ (the nine opset-9 model graphs, weights
# stripped: their inputs and outputs are protobufs next to each model); both are extracted.
set -euo pipefail

ONNX_VERSION=1.22.0
PYTHON=${PYTHON:-python3}
CACHE=${ANVIL_CACHE:-$HOME/.cache/anvil}
DEST="$CACHE/onnx-$ONNX_VERSION-node"
STAMP="$DEST/.complete"

if [ -f "$STAMP" ]; then
  echo "$DEST"
  exit 0
fi

mkdir -p "$CACHE"
WORK=$(mktemp -d "$CACHE/.fetch.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

echo "fetch_node_tests: downloading onnx==$ONNX_VERSION (wheel for this Python, no dependencies)" >&2
"$PYTHON" -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
  -d "$WORK" "onnx==$ONNX_VERSION" >&2
WHEEL=$(ls "$WORK"/onnx-"$ONNX_VERSION"-*.whl 2>/dev/null | head -n 1)
[ -n "$WHEEL" ] || { echo "fetch_node_tests: no onnx $ONNX_VERSION wheel was downloaded into $WORK" >&2; exit 1; }

# A wheel is a zip; Python's zipfile extracts it without needing `unzip` on the machine.
"$PYTHON" - "$WHEEL" "$WORK/out" <<'PY'
import sys, zipfile
wheel, out = sys.argv[1], sys.argv[2]
prefixes = ("onnx/backend/test/data/node/", "onnx/backend/test/data/light/")
with zipfile.ZipFile(wheel) as z:
    names = [n for n in z.namelist() if n.startswith(prefixes)]
    if not any(n.startswith(prefixes[0]) for n in names):
        sys.exit(f"fetch_node_tests: {wheel} holds no {prefixes[0]}")
    z.extractall(out, names)
PY

SRC="$WORK/out/onnx/backend/test/data"
rm -rf "$DEST"
mkdir -p "$DEST"
mv "$SRC/node" "$DEST/node"
[ -d "$SRC/light" ] && mv "$SRC/light" "$DEST/light"
count=$(find "$DEST/node" -mindepth 1 -maxdepth 1 -type d | wc -l)
echo "onnx $ONNX_VERSION: $count node tests" > "$STAMP"
echo "fetch_node_tests: $count node tests in $DEST/node" >&2
echo "$DEST"
