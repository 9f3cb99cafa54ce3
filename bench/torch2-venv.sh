#!/usr/bin/env bash
# A benchmark-only virtual environment with PyTorch 2.x (CPU use) from PyPI, for
# bench/torch_reference.py --autocast bf16 beside dp-train. Not used by CI, the tests or
# scripts/install-deps.sh: the parity tests keep Debian's PyTorch 1.13 (/usr/bin/python3).
#
#   bench/torch2-venv.sh            create it if missing; print its directory on stdout
#   "$(bench/torch2-venv.sh)/bin/python" bench/torch_reference.py --autocast bf16 ...
#
# The directory is $DP_TORCH2_VENV, else ~/.cache/libdataparallel/torch2-venv. Idempotent:
# a venv that already imports torch 2.x is only printed. PyPI's Linux wheel of torch pulls
# its CUDA libraries too (about 5 GB on disk; the download takes minutes); set
# DP_TORCH2_SPEC (default "torch>=2,<3") to pin a version.
set -euo pipefail

venv=${DP_TORCH2_VENV:-$HOME/.cache/libdataparallel/torch2-venv}
spec=${DP_TORCH2_SPEC:-torch>=2,<3}
base=/usr/bin/python3

has_torch2() {
  [ -x "$venv/bin/python" ] &&
    "$venv/bin/python" -c 'import sys, torch; sys.exit(int(torch.__version__.split(".")[0]) < 2)' \
      >/dev/null 2>&1
}

if ! has_torch2; then
  echo "torch2-venv.sh: installing $spec into $venv (minutes; about 5 GB)" >&2
  mkdir -p "$(dirname "$venv")"
  [ -x "$venv/bin/python" ] || "$base" -m venv "$venv" >&2 || {
    echo "torch2-venv.sh: $base -m venv failed (apt-get install python3-venv)" >&2
    exit 1
  }
  if ! "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "$spec" numpy >&2; then
    echo "torch2-venv.sh: pip could not install $spec from PyPI (network or disk space?)" >&2
    exit 1
  fi
  has_torch2 || { echo "torch2-venv.sh: $venv does not import torch 2.x after the install" >&2; exit 1; }
  echo "torch2-venv.sh: $("$venv/bin/python" -c 'import torch; print("torch", torch.__version__)')" >&2
fi
echo "$venv"
