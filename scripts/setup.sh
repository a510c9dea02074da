#!/usr/bin/env bash
# Installs every dependency Anvil's build, tests and demo use — the one list of them.
# Idempotent: when everything is present it only checks, in about a second.
# `scripts/setup.sh --bench` (or ANVIL_SETUP_BENCH=1) also installs the benchmarks' optional peers
# (BENCH_PIP_PACKAGES below); the tests never need them.
set -euo pipefail

BENCH=${ANVIL_SETUP_BENCH:-0}
for arg in "$@"; do
  case "$arg" in
    --bench) BENCH=1 ;;
    -h|--help) echo "usage: scripts/setup.sh [--bench]   (--bench: also the benchmarks' optional peers)"; exit 0 ;;
    *) echo "setup: unknown argument '$arg' (usage: scripts/setup.sh [--bench])" >&2; exit 2 ;;
  esac
done

# Debian packages (see docs/design.md §3 for why each is here).
APT_PACKAGES=(
  cmake ninja-build ccache g++ clang      # build (GCC 12 default; clang builds the sanitizer/fuzz tree)
  libclang-rt-14-dev                      # libFuzzer + sanitizer runtimes for clang
  libgtest-dev                            # C++ unit tests
  libdlpack-dev                           # DLPack header (tensor exchange)
  libasio-dev                             # standalone Asio (RPC tracker and proxy event loops)
  nlohmann-json3-dev                      # JSON (tracker messages, reports)
  libcli11-dev                            # command-line parsing (anvil, anvil-rpc)
  llvm-16-dev                             # CPU code generation: shared libLLVM-16, ORC JIT, object emission
  libdnnl-dev                             # oneDNN: GEMM/conv peer in bench/ (dnnl_sgemm)
  libopenblas-dev                         # OpenBLAS: GEMM peer in bench/ (cblas_sgemm)
  python3 python3-dev python3-venv        # the Python package
  zlib1g-dev                              # anvil run: .npz inputs/outputs (deflate, CRC-32)
  libprotobuf-dev protobuf-compiler       # ONNX importer (onnx.proto compiled by protoc; links only into frontend/onnx)
  libonnx-dev                             # its onnx.proto (/usr/include/onnx/onnx.proto), which frontend/onnx compiles
  libvulkan-dev spirv-headers             # Vulkan back end: headers (the loader is opened at run time), SPIR-V enums
  spirv-tools                             # SPIR-V validator and disassembler (codegen/spirv, its tests)
  mesa-vulkan-drivers                     # lavapipe: the software Vulkan device the Vulkan tests run on
  vulkan-validationlayers                 # VK_LAYER_KHRONOS_validation (ANVIL_VULKAN_ENABLE_VALIDATION_LAYERS)
)
# Python packages: bindings, build backend, tests; apache-tvm is the RPC interoperability peer
# (tornado: TVM's own proxy and tracker need it, for the interop tests and bench/rpc).
# Entries are pip-name[:import-name].
# onnx, onnxruntime: the importer's tests, the conformance runner and the model references.
PIP_PACKAGES=(numpy nanobind pytest scikit-build-core apache-tvm:tvm tornado onnx onnxruntime rapidocr-onnxruntime:rapidocr_onnxruntime)
# Opt-in (--bench): openvino, the second peer column of bench/models/bench_models.py;
# iree-base-compiler/-runtime (import iree.compiler / iree.runtime): bench/vulkan/matmul_bench.py's peer.
BENCH_PIP_PACKAGES=(openvino iree-base-compiler:iree.compiler iree-base-runtime:iree.runtime)
if [ "$BENCH" = 1 ]; then PIP_PACKAGES+=("${BENCH_PIP_PACKAGES[@]}"); fi

missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

PYTHON=${PYTHON:-python3}
missing=()
for entry in "${PIP_PACKAGES[@]}"; do
  pkg=${entry%%:*}
  module=${entry#*:}
  [ "$module" = "$entry" ] && module=${pkg//-/_}
  "$PYTHON" -c "import $module" 2>/dev/null || missing+=("$pkg")
done
if ((${#missing[@]})); then
  echo "setup: installing Python packages: ${missing[*]}"
  # Debian's own python3 refuses pip installs outside a venv (PEP 668); allow them there.
  "$PYTHON" -m pip install -q --disable-pip-version-check "${missing[@]}" 2>/tmp/anvil-pip.err ||
    { grep -q externally-managed /tmp/anvil-pip.err &&
      "$PYTHON" -m pip install -q --disable-pip-version-check --break-system-packages "${missing[@]}"; } ||
    { cat /tmp/anvil-pip.err >&2; exit 1; }
fi
echo "setup: all dependencies present"
