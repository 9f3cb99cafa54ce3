#!/bin/sh
# The CUDA plugin exports exactly its entry point, loads with every symbol resolved, and
# does not need cuDNN to load.
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
# cuDNN is opened at run time (cuda/cudnn_library.h), so that the plugin loads without it.
if readelf -d "$plugin" | grep -E "NEEDED.*libcudnn"; then
  echo "FAIL: $plugin needs cuDNN at load time"
  exit 1
fi
"$loader" "$plugin"
