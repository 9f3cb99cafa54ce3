"""Shared fixtures. The package under test is the one on PYTHONPATH (ctest points it at
<build>/bindings/python)."""
import gc
import os
import sys

import numpy as np
import pytest

import dataparallel as dp


def pytest_sessionstart(session):
    """ctest's python_bf16_ml_dtypes (bindings/python/CMakeLists.txt) runs test_bfloat16.py
    with DP_ML_DTYPES_DIR on PYTHONPATH. Where scripts/install-deps.sh has not installed
    ml_dtypes there, the run ends here with 77, which ctest reports as a skip: no ml_dtypes
    is no failure of the library's. (A directory that has it but does not import fails the
    run: test_bfloat16.py checks that the form asked for is the one it gets.)"""
    where = os.environ.get("DP_ML_DTYPES_DIR")
    if where and not os.path.isdir(os.path.join(where, "ml_dtypes")):
        pytest.exit(f"skipped: no ml_dtypes in DP_ML_DTYPES_DIR={where} "
                    "(scripts/install-deps.sh installs it there)", returncode=77)


@pytest.fixture
def ctx():
    """Two virtual CPU devices, no CUDA (the tests are about the binding, not the GPU)."""
    c = dp.Context(cpu_devices=2, load_cuda=False, seed=0)
    yield c
    c.close()
    gc.collect()
    dp.capi.dp_py_run_pending()


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture(autouse=True)
def seeded_torch():
    """PyTorch's initial weights do not depend on which tests ran before (only where a test
    file imports torch: the others need not pay for loading it)."""
    if "torch" in sys.modules:
        sys.modules["torch"].manual_seed(0)
