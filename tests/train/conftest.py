import os

import pytest


def pytest_addoption(parser):
    parser.addoption("--dp-train", default="build/bin/dp-train", help="the dp-train binary")
    parser.addoption("--print-randperm", default="build/bin/print_randperm",
                     help="the helper that prints dp-train's shuffling order")


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
