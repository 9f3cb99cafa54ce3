#!/usr/bin/env bash
# Compares the ABI of libdataparallel.so (the functions and the types of the public
# header, include/dataparallel/) with the baseline checked in at abi/libdataparallel.abi.
#   scripts/abi-check.sh            exits non-zero, with abidiff's report, when the ABI
#                                   changed: incompatibly (a function removed or changed,
#                                   a public struct's layout changed) or compatibly (a
#                                   function added), which the baseline must record too;
#                                   abidiff flags only removals as incompatible by itself
#   scripts/abi-check.sh --update   rewrites the baseline from the library as it is now
#   --library FILE                  reads FILE, a libdataparallel.so built with debug
#                                   information, instead of building one (scripts/test.sh
#                                   passes the sanitizer build's, which it builds anyway)
# abidw reads the types from DWARF, which the Release build has none of: without
# --library the library is built again in build-abi/ (RelWithDebInfo, the dataparallel
# target only; ccache, when installed, makes a rebuild cheap). The baseline holds no paths or line numbers of the
# machine that wrote it. docs/building.md says when the SONAME changes.
set -euo pipefail
caller_dir=$PWD
cd "$(dirname "$0")/.."
ABI_BUILD_DIR=${ABI_BUILD_DIR:-build-abi}
JOBS=${JOBS:-$(nproc)}
BASELINE=abi/libdataparallel.abi

update=0
library=""
while [ $# -gt 0 ]; do
  case "$1" in
    --update) update=1 ;;
    --library)
      library=${2:?"--library needs a file"}
      case "$library" in /*) ;; *) library="$caller_dir/$library" ;; esac
      shift
      ;;
    *)
      echo "usage: $0 [--update] [--library FILE]" >&2
      exit 2
      ;;
  esac
  shift
done

if [ -z "$library" ]; then
  launcher=()
  if command -v ccache >/dev/null; then
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  fi
  cmake -S . -B "$ABI_BUILD_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDP_BUILD_TESTS=OFF -DDP_BUILD_BINDINGS=OFF -DDP_BUILD_EXAMPLES=OFF "${launcher[@]}" >/dev/null
  if ! cmake --build "$ABI_BUILD_DIR" -j "$JOBS" --target dataparallel >"$ABI_BUILD_DIR/build.log" 2>&1; then
    grep -E "error|Error" "$ABI_BUILD_DIR/build.log" | head -n 40
    echo "abi-check: the build in $ABI_BUILD_DIR failed (log: $ABI_BUILD_DIR/build.log)"
    exit 1
  fi
  library="$ABI_BUILD_DIR/lib/libdataparallel.so"
  work="$ABI_BUILD_DIR"
else
  if [ ! -f "$library" ]; then
    echo "abi-check: --library $library: no such file" >&2
    exit 2
  fi
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi

# The exported functions and the types of the public header only (the handles' C++
# definitions stay opaque); no line numbers (they move with every edit of the header
# without changing the ABI) and no paths: each translation unit is named from the
# repository's root, whatever the compiler was given (ccache's relative paths or absolute).
current="$work/libdataparallel.abi"
abidw --exported-interfaces-only --headers-dir include/dataparallel --drop-private-types \
  --no-corpus-path --no-comp-dir-path --no-show-locs "$library" |
  sed -E "s#(<abi-instr [^>]* path=')[^']*/(capi/[^']*')#\1\2#" >"$current"

if [ "$update" = 1 ]; then
  cp "$current" "$BASELINE"
  echo "abi-check: $BASELINE rewritten; commit it with the change that made it"
  exit 0
fi

# abidiff's exit status is a bit mask: 1 error, 2 usage error, 4 the ABI changed,
# 8 the change is incompatible.
status=0
abidiff "$BASELINE" "$current" >"$work/abidiff.txt" 2>&1 || status=$?
if [ "$status" = 0 ]; then
  echo "abi-check: the ABI matches $BASELINE"
  exit 0
fi
cat "$work/abidiff.txt"
if ((status & 3)); then
  echo "abi-check: abidiff failed (status $status)"
elif ((status & 8)); then
  echo "abi-check: INCOMPATIBLE change (a function removed): undo it, or raise the SONAME's"
  echo "  major version and record the ABI with scripts/abi-check.sh --update (docs/building.md)"
else
  echo "abi-check: the ABI changed (report above). Additions (a function, a member appended to"
  echo "  an option struct) keep the SONAME; any other change raises its major version. Either"
  echo "  way, record the ABI with scripts/abi-check.sh --update in the same commit (docs/building.md)"
fi
exit 1
