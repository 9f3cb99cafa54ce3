#!/usr/bin/env bash
# Installs every package the build, the tests, the benchmarks and the demo need, from
# Debian's repositories, and what Debian lacks from PyPI, pinned, beside Debian's Python
# (which is externally managed): scikit-build-core (the Python wheel's build backend) and
# auditwheel (its repair) in a venv of its own (DP_WHEEL_VENV, default
# /opt/dataparallel/wheel-venv), ml_dtypes in a directory of its own (DP_ML_DTYPES_DIR,
# default /opt/dataparallel/ml-dtypes).
# Idempotent: when everything is present it prints nothing and touches nothing.
set -euo pipefail

PACKAGES=(
  # build
  cmake g++ make pkg-config
  libdnnl-dev            # oneDNN: the CPU kernels
  openmpi-bin libopenmpi-dev   # MPI: the process group's plugin and mpirun for its tests
  mpich libmpich-dev     # MPICH beside it: a second plugin and its tests under mpiexec.mpich
                         # (Debian's alternatives rank Open MPI first: mpirun, mpicxx and
                         # CMake's FindMPI stay Open MPI's)
  ocl-icd-opencl-dev     # OpenCL, which Debian's oneDNN CMake config requires (libdnnl-dev
                         # only recommends it, and recommends are not installed)
  zlib1g-dev             # reading the gzip'd IDX files
  libdlpack-dev          # DLPack header
  nlohmann-json3-dev     # safetensors headers
  swig                   # Python and Java bindings
  python3-dev default-jdk-headless
  # tests
  libcmocka-dev libgtest-dev junit5
  binutils               # nm and readelf in the CUDA plugin's export check
  abigail-tools          # abidw and abidiff: scripts/abi-check.sh against abi/libdataparallel.abi
  python3 python3-numpy python3-pytest
  python3-mpi4py         # the Python test of a process group over mpi4py's communicator
  slurmd slurmctld slurm-client munge   # srun, on the one-node Slurm cluster that
                         # scripts/slurm-check.sh starts and stops (with a munged of its own)
  libpmix-dev            # Slurm's mpi/pmix opens libpmix.so, which only this package has
                         # (libopenmpi-dev brings it too)
  python3-venv           # the Python wheel build (bindings/python/README.md) runs in a venv
  patchelf               # auditwheel repair rewrites the wheel's RPATHs and sonames with it
  locales                # localedef: a checkpoint test runs under a decimal-comma locale
  python3-torch          # the reference in parity tests and benchmarks
  libopenblas0-pthread   # the BLAS Debian's PyTorch uses; without it torch falls back to
                         # the reference BLAS, ~20x slower, which would flatter our numbers
  valgrind clang libclang-rt-14-dev   # leak checks and the libFuzzer targets
  # demo
  dataset-fashion-mnist
)

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
fi

# The wheel test (python_wheel) builds with this venv's pip; bindings/python/CMakeLists.txt
# looks for it at the same default path.
WHEEL_VENV=${DP_WHEEL_VENV:-/opt/dataparallel/wheel-venv}
# auditwheel repairs the wheel (bundles what it links); 6.7.0 is the last release that
# takes Debian 12's patchelf (0.14.3; 6.8 asks for 0.14.5). Installed with --no-deps:
# every dependency is pinned here (auditwheel needs packaging and pyelftools).
WHEEL_PINS=(scikit-build-core==0.11.6 packaging==26.4 pathspec==1.1.1
            auditwheel==6.7.0 pyelftools==0.33)
if ! "$WHEEL_VENV/bin/python" -c "import sys; from importlib.metadata import version
sys.exit(any(version(n) != v for n, v in (p.split('==') for p in sys.argv[1:])))" \
    "${WHEEL_PINS[@]}" 2>/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && [ ! -w "$(dirname "$WHEEL_VENV")" ]; then SUDO="sudo"; fi
  echo "install-deps: installing ${WHEEL_PINS[*]} into $WHEEL_VENV"
  $SUDO mkdir -p "$(dirname "$WHEEL_VENV")"
  $SUDO /usr/bin/python3 -m venv "$WHEEL_VENV"
  $SUDO "$WHEEL_VENV/bin/pip" install -q --no-deps "${WHEEL_PINS[@]}"
fi

# ml_dtypes, for the test python_bf16_ml_dtypes only: with it importable the Python binding
# gives bfloat16 tensors to NumPy as ml_dtypes.bfloat16 values, without it as np.uint16
# bits, and Debian 12 does not package it. A plain directory (pip --target), not the system's
# site-packages: that test puts it on PYTHONPATH, every other test keeps the uint16 form.
# 0.5.4 is the last release that takes NumPy 1.x (Debian's 1.24.2; 0.6.0 needs NumPy 2);
# its only dependency is NumPy (its metadata's Requires-Dist), hence --no-deps. Checked by
# importing it with Debian's Python, as the test will.
# Absolute, without a trailing slash, so that the check below compares like with like.
ML_DTYPES_DIR=$(realpath -m "${DP_ML_DTYPES_DIR:-/opt/dataparallel/ml-dtypes}")
ML_DTYPES_VERSION=0.5.4
if ! PYTHONPATH="$ML_DTYPES_DIR" /usr/bin/python3 -c "import sys, ml_dtypes
sys.exit(ml_dtypes.__version__ != sys.argv[1] or not ml_dtypes.__file__.startswith(sys.argv[2]))" \
    "$ML_DTYPES_VERSION" "$ML_DTYPES_DIR/" 2>/dev/null; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ] && [ ! -w "$(dirname "$ML_DTYPES_DIR")" ]; then SUDO="sudo"; fi
  echo "install-deps: installing ml_dtypes==$ML_DTYPES_VERSION into $ML_DTYPES_DIR"
  $SUDO mkdir -p "$(dirname "$ML_DTYPES_DIR")"
  # The wheel venv's pip runs Debian's Python, so it picks that interpreter's wheel (cp311).
  $SUDO "$WHEEL_VENV/bin/pip" install -q --no-deps --only-binary=:all: --upgrade \
    --target "$ML_DTYPES_DIR" "ml_dtypes==$ML_DTYPES_VERSION"
fi
