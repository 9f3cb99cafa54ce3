import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--dp-train", default="build/bin/dp-train", help="the dp-train binary")
    parser.addoption("--print-randperm", default="build/bin/print_randperm",
                     help="the helper that prints dp-train's shuffling order")
    parser.addoption("--mpi-plugin", default="build/lib/libdataparallel_mpi.so",
                     help="the MPI plugin that dp-train --distributed loads (the tests of "
                          "--distributed skip without it)")


@pytest.fixture(scope="session")
def dp_train(pytestconfig):
    path = pytestconfig.getoption("dp_train")
    assert os.access(path, os.X_OK), f"{path} is not built"
    return path


@pytest.fixture(scope="session")
def print_randperm(pytestconfig):
    path = pytestconfig.getoption("print_randperm")
    assert os.access(path, os.X_OK), f"{path} is not built"
    return path
