#!/usr/bin/env bash
# Fails if a runtime-only file (libanvil_runtime, the runtime-only example, anvil-rpc) loads
# anything of the compiler, LLVM or protobuf, directly or through another library (DESIGN.md §2:
# the runtime and the RPC server deploy alone). Of Anvil's own libraries only libanvil_runtime
# and libanvil_rpc may be loaded. Usage: check_runtime_only_link.sh FILE...
set -uo pipefail
if (($# == 0)); then
  echo "usage: $0 FILE..." >&2
  exit 2
fi
status=0
for file in "$@"; do
  name=$(basename "$file")
  if [ ! -f "$file" ]; then
    echo "error: $file does not exist" >&2
    status=1
    continue
  fi
  # ldd resolves the whole tree of NEEDED entries (through RPATH/RUNPATH), not only the direct ones.
  # LD_PRELOAD is the caller's (the sanitizer stage preloads the Vulkan driver), not the file's.
  if ! tree=$(env -u LD_PRELOAD ldd "$file" 2>&1); then
    echo "error: ldd $file failed: $tree" >&2
    status=1
    continue
  fi
  if grep -q "not found" <<<"$tree"; then
    echo "error: $name: libraries not found, cannot check them:" >&2
    grep "not found" <<<"$tree" >&2
    status=1
  fi
  libs=$(awk 'NF { print $1 }' <<<"$tree" | sed 's#.*/##' | sort -u)
  echo "$name loads: $(tr '\n' ' ' <<<"$libs")"
  bad=$( (grep -Ei 'llvm|protobuf|clang-cpp|xgboost|onnx' <<<"$libs"; grep '^libanvil' <<<"$libs" |
          grep -Ev '^libanvil_(runtime|rpc)\.so$') | sort -u | tr '\n' ' ')
  if [ -n "$bad" ]; then
    echo "error: $name loads compiler-side libraries: $bad" >&2
    status=1
  fi
done
exit $status
