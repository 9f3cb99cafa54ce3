#!/usr/bin/env bash
# The one test command: installs what is missing, configures, builds and runs every test
# suite (ctest). Exits non-zero on any failure.
#   scripts/test.sh            # build in build/
#   BUILD_DIR=out scripts/test.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
JOBS=${JOBS:-$(nproc)}

scripts/install-deps.sh

echo "== configure and build ($BUILD_DIR)"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$BUILD_DIR" -j "$JOBS" 2>&1 | grep -E "error|warning|Error" || true
cmake --build "$BUILD_DIR" -j "$JOBS" >/dev/null   # fails the script if the build failed

echo "== tests"
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS" | tee "$BUILD_DIR/ctest-summary.txt" \
  | grep -vE "^ *(Start|[0-9]+/[0-9]+ Test)" || true
ctest_line=$(grep -E "tests passed|tests failed" "$BUILD_DIR/ctest-summary.txt" | tail -n 1)
if ! grep -q "100% tests passed" "$BUILD_DIR/ctest-summary.txt"; then status=1; fi

echo "== cmocka suites"
grep -hE "^\[==========\] [a-z_]+: [0-9]+ test\(s\) run|^\[  (PASSED|FAILED)  \] [0-9]+ test\(s\)" \
  "$BUILD_DIR/Testing/Temporary/LastTest.log" | sed 's/^/  /' || true

echo "$ctest_line"
exit $status
