# Source me after a build: puts the build tree's commands on PATH and the Python package on
# PYTHONPATH (DESIGN.md convention 11). `source scripts/env.sh`
_anvil_root=$(cd "$(dirname "${BASH_SOURCE[0]:-$0}")/.." && pwd)
_anvil_build=${ANVIL_BUILD_DIR:-$_anvil_root/build}
export PATH="$_anvil_build/bin${PATH:+:$PATH}"
export PYTHONPATH="$_anvil_build/python${PYTHONPATH:+:$PYTHONPATH}"
export ANVIL_TEST_KERNELS="$_anvil_build/lib/libanvil_test_kernels.so"
unset _anvil_root _anvil_build
