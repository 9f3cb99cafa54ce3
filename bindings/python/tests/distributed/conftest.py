"""The tests here run as one job of 2 ranks (ctest starts them under the MPI launcher;
started otherwise, as by a plain `pytest tests/`, they skip). A rank whose test failed
ends at once, without finalising MPI: the launcher then ends the whole job. (Finalising
waits for the other ranks, which may be waiting in a collective the failed test never
reached.)"""
import os
import sys

import pytest

# The job's size as Open MPI's and MPICH's launchers tell each rank.
_RANKS = os.environ.get("OMPI_COMM_WORLD_SIZE", os.environ.get("PMI_SIZE"))
_RANK = os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "?"))


def pytest_collection_modifyitems(config, items):
    if _RANKS != "2":
        skip = pytest.mark.skip(reason="needs a job of 2 ranks: mpirun -np 2 python3 -m pytest")
        for item in items:
            item.add_marker(skip)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed:
        sys.stdout.flush()
        sys.stderr.write(f"\nrank {_RANK}: {item.nodeid} failed ({report.when}):\n"
                         f"{report.longreprtext}\nrank {_RANK}: ending the job\n")
        sys.stderr.flush()
        os._exit(1)
