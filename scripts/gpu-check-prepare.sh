#!/usr/bin/env bash
# Run HERE (a Debian machine with its package mirror), before scripts/gpu-check.sh runs on
# the GPU machine, which has the CUDA toolkit, cmake, a compiler and PyTorch but no
# Debian packages and no network. Downloads the .deb files the build needs into the
# git-ignored folder .gpu-debs/ (carry it to the GPU machine); gpu-check.sh unpacks them
# into a private prefix with dpkg -x. Copies Fashion-MNIST into .gpu-data/ (carry it too)
# for the check's dp-train runs.
#   scripts/gpu-check-prepare.sh
set -euo pipefail
cd "$(dirname "$0")/.."

PACKAGES=(
  libdnnl2 libdnnl-dev          # oneDNN: the CPU kernels of the core
  ocl-icd-libopencl1 ocl-icd-opencl-dev opencl-c-headers  # Debian's oneDNN needs OpenCL
  nlohmann-json3-dev            # safetensors
  libdlpack-dev                 # DLPack
  zlib1g zlib1g-dev             # gzip'd IDX files
  libcmocka0 libcmocka-dev      # the C API suites (configured with the tests)
  libgtest-dev                  # the C++ suites, test_cuda among them
  # Open MPI and what it loads: the MPI plugin and the process group's CUDA tests
  openmpi-bin libopenmpi3 libopenmpi-dev openmpi-common libpmix2 libhwloc15
  libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libibverbs1 librdmacm1
  libnl-3-200 libnl-route-3-200 libpsm-infinipath1 libpsm2-2 libucx0 libnuma1 libmunge2
)
# Everything travels with the working tree, whose limit is 64 MiB (the sources take ~4).
LIMIT_KB=$((56 * 1024))

mkdir -p .gpu-debs
rm -f .gpu-debs/*.deb
(cd .gpu-debs && apt-get download "${PACKAGES[@]}" 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
for p in "${PACKAGES[@]}"; do
  if ! ls .gpu-debs/"${p}"_*.deb >/dev/null 2>&1; then
    echo "gpu-check-prepare: $p was not downloaded (apt-get update may be needed)" >&2
    exit 1
  fi
  # Plain names (no epoch's %3a, no ~ or +) travel safely: <package>.deb.
  mv .gpu-debs/"${p}"_*.deb .gpu-debs/"${p}".deb
done
# Fashion-MNIST for the check's dp-train runs (scripts/install-deps.sh installs it here).
FMNIST=/usr/share/datasets/fashion-mnist
mkdir -p .gpu-data
if ls "$FMNIST"/*-ubyte.gz >/dev/null 2>&1; then
  cp "$FMNIST"/*-ubyte.gz .gpu-data/
else
  echo "gpu-check-prepare: no Fashion-MNIST in $FMNIST (run scripts/install-deps.sh):" \
       "the check will skip dp-train" >&2
fi
data_kb=$(du -sk .gpu-data | cut -f1)
size_kb=$(du -sk .gpu-debs | cut -f1)
ls -la .gpu-debs
echo "gpu-check-prepare: ${#PACKAGES[@]} packages, ${size_kb} KiB in .gpu-debs/"
if [ $((size_kb + data_kb)) -gt "$LIMIT_KB" ]; then
  echo "gpu-check-prepare: more than $LIMIT_KB KiB: too much to carry" >&2
  exit 1
fi
echo "gpu-check-prepare: ${data_kb} KiB of Fashion-MNIST in .gpu-data/"
echo "gpu-check-prepare: carry .gpu-debs and .gpu-data and run: bash scripts/gpu-check.sh"
