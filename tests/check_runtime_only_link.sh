#!/usr/bin/env bash
# Fails if a runtime-only binary or libanvil_runtime itself depends on the compiler, LLVM or
# protobuf (DESIGN.md §2: the runtime is deployable alone). Usage: check_runtime_only_link.sh BIN LIB
set -euo pipefail
status=0
for file in "$@"; do
  needed=$(readelf -d "$file" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  echo "$(basename "$file") needs: $(echo $needed)"
  if echo "$needed" | grep -Eiq 'llvm|protobuf|anvil_compiler'; then
    echo "error: $(basename "$file") links compiler-side libraries" >&2
    status=1
  fi
done
exit $status
