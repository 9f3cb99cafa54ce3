#!/usr/bin/env bash
# The one test command: installs what is missing, builds, and runs every test suite.
# Exits non-zero on any failure. Stages:
#   1. Release build (build/): every ctest suite (C API, core, DataParallel, dp-train,
#      bindings, CUDA where a GPU exists)
#   1b. DistributedDataParallel under Slurm's srun on a one-node cluster started for it
#      (scripts/slurm-check.sh, as root; Open MPI with --mpi=pmix, MPICH with --mpi=pmi2)
#   2. valgrind --leak-check=full over the cmocka suites of that build
#   3. AddressSanitizer + UndefinedBehaviorSanitizer build (build-asan/, fault injection
#      on): the C and C++ suites and dp-train's
#   3b. the exported ABI against abi/libdataparallel.abi (scripts/abi-check.sh, reading the
#      library of build-asan/, which has the debug information abidw needs)
#   4. ThreadSanitizer build (build-tsan/): the parallel suites (workers, autograd engine,
#      DataParallel, concurrent wrappers), a short dp-train run and the DDP suite on 2 ranks
#   5. every libFuzzer target for FUZZ_SECONDS (default 30) seconds (scripts/fuzz.sh)
# DP_TEST_QUICK=1 runs stage 1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}
FUZZ_SECONDS=${FUZZ_SECONDS:-30}
failures=()

scripts/install-deps.sh

# Builds quietly, showing warnings and errors only; fails the script if the build fails.
build() {
  local dir=$1
  shift
  if ! cmake --build "$dir" -j "$JOBS" "$@" >"$dir/build.log" 2>&1; then
    grep -E "error|Error" "$dir/build.log" | head -n 40
    echo "build in $dir failed (log: $dir/build.log)"
    exit 1
  fi
  grep -E "warning" "$dir/build.log" | head -n 20 || true
}

echo "== 1. Release build and every suite ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
build "$BUILD_DIR"
if ! ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" >"$BUILD_DIR/ctest.log" 2>&1; then
  failures+=("release suites")
fi
grep -vE "^ *(Start|[0-9]+/[0-9]+ Test)" "$BUILD_DIR/ctest.log" | sed '/^$/d' | tail -n 40
main_summary=$(grep -E "tests passed|tests failed" "$BUILD_DIR/ctest.log" | tail -n 1)
echo "-- cmocka suites:"
grep -hE "^\[==========\] .*test\(s\) run|^\[  (PASSED|FAILED)  \] [0-9]+ test\(s\)" \
  "$BUILD_DIR/Testing/Temporary/LastTest.log" | sed 's/^/   /' || true

if [ "${DP_TEST_QUICK:-0}" != 1 ]; then
  if [ -e "$BUILD_DIR/lib/libdataparallel_mpi.so" ]; then  # MPI installed: the plugin built
    echo "== 1b. DistributedDataParallel under Slurm's srun (scripts/slurm-check.sh)"
    if [ "$(id -u)" -ne 0 ]; then
      echo "   skipped: the check starts slurmd, which needs root"
    elif ! BUILD_DIR=$BUILD_DIR scripts/slurm-check.sh; then
      failures+=("slurm")
    fi
  fi

  echo "== 2. valgrind over the cmocka suites"
  for t in "$BUILD_DIR"/bin/test_capi_*; do
    [ "$(basename "$t")" = test_capi_dlopen ] && continue  # dlopen'ed library: reported by the others
    if valgrind --leak-check=full --errors-for-leak-kinds=definite,indirect --error-exitcode=1 -q \
        --suppressions=scripts/valgrind.supp \
        "$t" >"$t.valgrind.log" 2>&1; then
      echo "   $(basename "$t"): no leaks, no errors"
    else
      echo "   $(basename "$t"): FAILED (log: $t.valgrind.log)"
      tail -n 30 "$t.valgrind.log"
      failures+=("valgrind $(basename "$t")")
    fi
  done

  echo "== 3. AddressSanitizer + UndefinedBehaviorSanitizer (build-asan)"
  cmake --preset asan >/dev/null
  build build-asan
  # allocator_may_return_null: a request too large for any memory returns NULL, as the C
  # library's allocator does (tests check that the library reports it as out of memory).
  if ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 \
      UBSAN_OPTIONS=print_stacktrace=1 \
      ctest --test-dir build-asan --output-on-failure -j "$JOBS" >build-asan/ctest.log 2>&1; then
    echo "   $(grep -E 'tests passed' build-asan/ctest.log | tail -n 1)"
  else
    grep -vE "^ *(Start|[0-9]+/[0-9]+ Test)" build-asan/ctest.log | tail -n 60
    failures+=("asan suites")
  fi

  # The sanitizers change no public type or exported function: the ABI read from this
  # build is the Release build's, without a third build for its debug information.
  echo "== 3b. the exported ABI against abi/libdataparallel.abi (build-asan's library)"
  if ! scripts/abi-check.sh --library build-asan/lib/libdataparallel.so; then
    failures+=("abi")
  fi

  echo "== 4. ThreadSanitizer (build-tsan): the parallel suites and dp-train"
  cmake --preset tsan >/dev/null
  tsan_targets=(test_core test_parallel test_capi_data_parallel dp-train)
  if command -v mpirun >/dev/null; then  # MPI installed: the MPI plugin and its suite build
    tsan_targets+=(test_distributed_ddp dataparallel_mpi)
  fi
  build build-tsan --target "${tsan_targets[@]}"
  # oneDNN's global primitive cache shares descriptors between threads through
  # synchronisation TSan cannot see (uninstrumented library); every device builds its own.
  export DNNL_PRIMITIVE_CACHE_CAPACITY=0
  for t in test_core test_parallel test_capi_data_parallel; do
    if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
        build-tsan/bin/$t \
        >build-tsan/$t.log 2>&1; then
      echo "   $t: no data races"
    else
      grep -A30 "WARNING: ThreadSanitizer" build-tsan/$t.log | head -n 60 || tail -n 30 build-tsan/$t.log
      failures+=("tsan $t")
    fi
  done
  # dp-train: its batch loader thread creates tensors while the devices train.
  if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
      build-tsan/bin/dp-train --model mlp --epochs 2 --limit 4096 --quiet \
      >build-tsan/dp-train.log 2>&1; then
    echo "   dp-train (MLP, 2 epochs, 4096 samples, all CPU devices): no data races"
  else
    grep -A30 "WARNING: ThreadSanitizer" build-tsan/dp-train.log | head -n 60 ||
      tail -n 30 build-tsan/dp-train.log
    failures+=("tsan dp-train")
  fi
  # DistributedDataParallel: 2 ranks x 2 CPU devices, so that the reducer's hooks (on the
  # device workers), the communication thread and the caller all run at once.
  if [ -x build-tsan/bin/test_distributed_ddp ]; then
    mpi_flags=()
    if mpirun --version 2>&1 | grep -qE "Open MPI|OpenRTE"; then
      mpi_flags=(--allow-run-as-root --oversubscribe)
    fi
    if TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 suppressions=$PWD/scripts/tsan.supp" \
        DP_TEST_LOCAL_DEVICES=2 DP_DISTRIBUTED_TIMEOUT=120 DP_SPIN_US=0 \
        timeout 600 mpirun "${mpi_flags[@]}" -np 2 build-tsan/bin/test_distributed_ddp \
        >build-tsan/distributed.log 2>&1; then
      echo "   distributed (2 ranks x 2 devices, the DDP suite): no data races"
    else
      grep -A30 "WARNING: ThreadSanitizer" build-tsan/distributed.log | head -n 60 ||
        tail -n 30 build-tsan/distributed.log
      failures+=("tsan distributed")
    fi
  fi
  unset DNNL_PRIMITIVE_CACHE_CAPACITY

  echo "== 5. fuzzing, ${FUZZ_SECONDS}s per target"
  if ! scripts/fuzz.sh "$FUZZ_SECONDS"; then
    failures+=("fuzzing")
  fi
fi

echo
if [ ${#failures[@]} -gt 0 ]; then
  echo "FAILED: ${failures[*]}"
  echo "$main_summary"
  exit 1
fi
echo "$main_summary"
