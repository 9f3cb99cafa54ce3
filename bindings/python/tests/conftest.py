"""Shared fixtures. The package under test is the one on PYTHONPATH (ctest points it at
<build>/bindings/python)."""
import gc
import sys

import numpy as np
import pytest

import dataparallel as dp


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
