#!/usr/bin/env bash
# Installs what is missing, builds, and runs the main job: dp-train, the MLP on
# Fashion-MNIST for 5 epochs with DataParallel over every CPU device. Extra arguments go
# to dp-train (see build/bin/dp-train --help).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
scripts/install-deps.sh
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" >/dev/null
exec "$BUILD_DIR/bin/dp-train" --model mlp --epochs 5 "$@"
