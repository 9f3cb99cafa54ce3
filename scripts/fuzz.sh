#!/usr/bin/env bash
# Builds the libFuzzer targets of tests/fuzz (clang, AddressSanitizer and
# UndefinedBehaviorSanitizer, in their own build tree) and runs each for SECONDS seconds
# on a scratch copy of its committed corpus and regression inputs. Prints, per target, the
# executions and whether it found a crash, a leak, a hang or an out-of-memory; those
# inputs are left in the run directory it names. Exits non-zero if any target failed.
#   scripts/fuzz.sh 30                    # every target, 30 s each
#   scripts/fuzz.sh 300 capi_sequence     # one target
# Environment: FUZZ_BUILD_DIR (default build-fuzz), FUZZ_RUN_DIR (default
# $FUZZ_BUILD_DIR/runs/<date>), CC / CXX (default clang-14 / clang++-14), DP_FUZZ_SKIP
# (checks of already reported bugs to step past, see tests/fuzz/fuzz_input.h).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ] || ! [[ "$1" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh SECONDS [TARGET...]" >&2
  exit 2
fi
SECONDS_EACH=$1
shift
ALL_TARGETS=(safetensors idx dlpack tensor_create capi_sequence)
if [ $# -gt 0 ]; then TARGETS=("$@"); else TARGETS=("${ALL_TARGETS[@]}"); fi
BUILD_DIR=${FUZZ_BUILD_DIR:-build-fuzz}
RUN_DIR=${FUZZ_RUN_DIR:-$BUILD_DIR/runs/$(date +%Y%m%d-%H%M%S)}
JOBS=${JOBS:-$(nproc)}
start=$(date +%s)

pick_compiler() {  # the versioned name first: that is what libclang-rt-14-dev matches
  for c in "$@"; do
    if command -v "$c" >/dev/null 2>&1; then echo "$c"; return; fi
  done
  echo "fuzz.sh: none of $* found (scripts/install-deps.sh installs clang)" >&2
  exit 2
}
export CC=${CC:-$(pick_compiler clang-14 clang)}
export CXX=${CXX:-$(pick_compiler clang++-14 clang++)}

mkdir -p "$BUILD_DIR"
if ! grep -qs "^DP_BUILD_FUZZERS:BOOL=ON" "$BUILD_DIR/CMakeCache.txt"; then
  echo "== configure $BUILD_DIR ($CXX)"
  if ! cmake -S . -B "$BUILD_DIR" -DDP_BUILD_FUZZERS=ON -DDP_BUILD_BINDINGS=OFF \
      -DDP_BUILD_EXAMPLES=OFF -DDP_WITH_CUDA=OFF -DPython3_EXECUTABLE=/usr/bin/python3 \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g" \
      -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g" >"$BUILD_DIR/fuzz-configure.log" 2>&1; then
    tail -n 30 "$BUILD_DIR/fuzz-configure.log"
    exit 2
  fi
fi
echo "== build (${TARGETS[*]})"
if ! cmake --build "$BUILD_DIR" --target $(printf "fuzz_%s " "${TARGETS[@]}") -j "$JOBS" \
    >"$BUILD_DIR/fuzz-build.log" 2>&1; then
  grep -E "error|Error" "$BUILD_DIR/fuzz-build.log" | head -n 30
  exit 2
fi
built=$(date +%s)
echo "   built in $((built - start)) s"

echo "== fuzz ${SECONDS_EACH} s per target; inputs and logs in $RUN_DIR"
mkdir -p "$RUN_DIR"
RUN_DIR=$(cd "$RUN_DIR" && pwd)
BIN=$(cd "$BUILD_DIR/bin" && pwd)
failed=0
printf "   %-15s %12s %9s %7s  %s\n" target executions exec/s corpus result
for t in "${TARGETS[@]}"; do
  dir=$RUN_DIR/$t
  mkdir -p "$dir/corpus" "$dir/findings"
  cp -R tests/fuzz/corpus/"$t"/. "$dir/corpus/" 2>/dev/null || true
  if [ -d tests/fuzz/regressions/"$t" ]; then cp -R tests/fuzz/regressions/"$t"/. "$dir/corpus/"; fi
  dict=()
  if [ -f tests/fuzz/"$t".dict ]; then dict=(-dict="$PWD/tests/fuzz/$t.dict"); fi
  rc=0
  (cd "$dir" && TMPDIR="$dir" "$BIN/fuzz_$t" corpus -max_total_time="$SECONDS_EACH" -timeout=10 \
     -rss_limit_mb=2048 -artifact_prefix="$dir/findings/" -print_final_stats=1 "${dict[@]}" \
     >"$dir/log" 2>&1) || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$dir/log" | tail -n 1)
  speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$dir/log" | tail -n 1)
  size=$(find "$dir/corpus" -type f | wc -l)
  findings=$(find "$dir/findings" -type f | sort)
  if [ "$rc" -eq 0 ] && [ -z "$findings" ]; then
    result="ok"
  else
    failed=1
    kind=$(grep -m1 -oE "ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer): [a-z -]+|runtime error|fuzz check failed" "$dir/log" || true)
    result="FAILED (exit $rc${kind:+; $kind})"
  fi
  printf "   %-15s %12s %9s %7s  %s\n" "$t" "${execs:-?}" "${speed:-?}" "$size" "$result"
  for f in $findings; do echo "      input: $f"; done
  if [ "$result" != ok ]; then echo "      log:   $dir/log"; fi
done
echo "   total $(($(date +%s) - start)) s (build $((built - start)) s)"
exit $failed
