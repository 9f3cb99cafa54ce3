#!/bin/sh
# The CUDA plugin exports exactly its entry point and loads with every symbol resolved.
#   check_plugin_exports.sh <libdataparallel_cuda.so> <plugin_load program>
set -eu
plugin=$1
loader=$2
exports=$(nm -D --defined-only "$plugin" | awk '$2 ~ /^[TDBRVWiu]$/ {print $3}' | sort)
if [ "$exports" != "dp_cuda_plugin_entry" ]; then
  echo "FAIL: $plugin exports:"
  echo "$exports"
  echo "but only dp_cuda_plugin_entry may be exported"
  exit 1
fi
echo "exports: $exports"
# ldd -r lists every symbol the dynamic linker cannot resolve.
if ldd -r "$plugin" 2>&1 | grep -E "undefined symbol|not found"; then
  echo "FAIL: $plugin has unresolved symbols or libraries"
  exit 1
fi
"$loader" "$plugin"
