"""A child process with a bounded time, for the tests that start whole jobs (mpirun and its
ranks): tests/distributed/test_scenarios.py and tests/train/test_distributed.py."""
import os
import signal
import subprocess

import pytest


def run_bounded(cmd, timeout_s, **popen_args):
    """Runs cmd in a session of its own and returns its CompletedProcess (text output, as
    popen_args ask for it: stdout and stderr default to pipes). Past timeout_s the whole
    session is ended, SIGTERM first (mpirun then ends its ranks), SIGKILL 10 s later, and
    the test fails with what the job printed."""
    popen_args.setdefault("stdout", subprocess.PIPE)
    popen_args.setdefault("stderr", subprocess.PIPE)
    job = subprocess.Popen(cmd, text=True, start_new_session=True, **popen_args)
    try:
        out, err = job.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(job.pid, signal.SIGTERM)
        try:
            out, err = job.communicate(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(job.pid, signal.SIGKILL)
            out, err = job.communicate(timeout=10)
        pytest.fail(f"{cmd} ran past {timeout_s} s:\n{out}\n{err or ''}")
    return subprocess.CompletedProcess(cmd, job.returncode, out, err)
