"""Whole-job outcomes of DistributedDataParallel under the MPI launcher: what every rank prints, the
job's exit code, how long it takes, and the trace. ctest sets DP_MPIEXEC (the launcher and
its flags, ';'-separated) and DP_SCENARIOS (tests/distributed/ddp_scenarios.c's binary).
Each job is bounded: the group's timeout (DP_DISTRIBUTED_TIMEOUT) ends a rank that waits,
and a job that still outlives JOB_TIMEOUT has its whole process group (the launcher, and
the ranks where the launcher starts them itself, as mpirun does) ended."""
import json
import os
import re
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bounded import run_bounded  # noqa: E402 (tests/bounded.py)

MPIEXEC = [a for a in os.environ.get("DP_MPIEXEC", "mpirun").split(";") if a]
SCENARIOS = os.environ.get("DP_SCENARIOS", "")


def is_open_mpi():
    version = subprocess.run(MPIEXEC[:1] + ["--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True).stdout
    return "Open MPI" in version or "OpenRTE" in version


JOB_TIMEOUT = 45  # seconds: every job the tests expect to end does so within 30


def run_job(mode, ranks=2, timeout_s=20, env=None, wrap=None):
    """Runs ddp_scenarios MODE on `ranks` ranks; returns (exit code, output, seconds). Past
    JOB_TIMEOUT the launcher's process group is ended, ranks included, and the test fails
    (srun's ranks are not in that group: Slurm ends them with the step)."""
    cmd = MPIEXEC + ["-np", str(ranks)] + (wrap or []) + [SCENARIOS, mode]
    started = time.monotonic()
    job = run_bounded(cmd, JOB_TIMEOUT, stderr=subprocess.STDOUT,
                      env={**os.environ, "DP_DISTRIBUTED_TIMEOUT": str(timeout_s), **(env or {})})
    return job.returncode, job.stdout, time.monotonic() - started


def test_mismatched_models_fail_on_every_rank_naming_the_first_difference():
    code, out, seconds = run_job("mismatch", ranks=3)
    assert code != 0, out
    messages = re.findall(r"^rank (\d): invalid argument: (.*)$", out, re.MULTILINE)
    assert sorted(int(r) for r, _ in messages) == [0, 1, 2], out
    # The same message on every rank, naming rank 1's first differing parameter.
    assert len({m for _, m in messages}) == 1, out
    assert ("rank 0 has parameter '0.weight' (float32, [64, 784]) where rank 1 has "
            "parameter '0.weight' (float32, [48, 784])") in messages[0][1], out
    assert seconds < 30, f"{seconds:.1f} s"


def test_a_killed_rank_ends_the_job_with_an_error_within_the_timeout():
    code, out, seconds = run_job("kill", ranks=2, timeout_s=10)
    assert "rank 1: killing itself before the backward of step 4" in out, out
    assert code != 0, out
    # mpirun notices the death, or rank 0's wait reaches the 10 s timeout and aborts.
    assert seconds < 30, f"{seconds:.1f} s: {out}"


def test_the_wait_past_the_timeout_names_the_collective_and_the_step():
    # Rank 1 killed, mpirun told to leave the others running: only the timeout ends rank 0,
    # which waits in step 4's first bucket.
    if not is_open_mpi():
        pytest.skip("needs Open MPI's --mca orte_abort_on_non_zero_status")
    code, out, seconds = run_job("kill", ranks=2, timeout_s=5,
                                 wrap=None, env={"OMPI_MCA_orte_abort_on_non_zero_status": "0"})
    assert code != 0, out
    assert re.search(r"rank 0 of 2 waited 5 s for the gradient allreduce of bucket 0 "
                     r"\(of 2\) in step 4 ", out), out
    assert seconds < 30, f"{seconds:.1f} s"


# The stalls' timeout: long enough that no earlier collective (the ranks' start-up skew
# under a sanitizer on a loaded machine included) reaches it first.
STALL_TIMEOUT = 5
STALLS = {
    "stall-backward": "rank 0 of 2 waited {} s for the gradient allreduce of bucket 0 (of 2) "
                      "in step 4 ",
    "stall-buffers": "rank 1 of 2 waited {} s for the broadcast of buffer '5.running_mean' "
                     "from rank 0 in step 4 ",
    "stall-order": "rank 1 of 2 waited {} s for the broadcast of rank 0's bucket order in "
                   "step 2 ",
    "stall-count": "rank 1 of 2 waited {} s for the count of ranks still training in step 4 ",
    "stall-join": "rank 1 of 2 waited {} s for the count of ranks still training in step 5 ",
}


@pytest.mark.parametrize("mode", STALLS)
def test_every_collective_of_a_step_names_it_when_its_wait_times_out(mode):
    # One rank sleeps outside MPI at a point of a step (ddp_scenarios.c): the other surely
    # waits in the step's next collective, and only its timeout ends the job (on any
    # launcher), the sleeping rank with it.
    code, out, seconds = run_job(mode, ranks=2, timeout_s=STALL_TIMEOUT)
    assert code != 0, out
    assert STALLS[mode].format(STALL_TIMEOUT) in out, out
    assert seconds < 30, f"{seconds:.1f} s: {out}"


def test_the_timeout_ends_a_collective_the_caller_runs_itself():
    if not is_open_mpi():
        pytest.skip("needs Open MPI's --mca orte_abort_on_non_zero_status")
    code, out, seconds = run_job("kill-barrier", ranks=2, timeout_s=3,
                                 env={"OMPI_MCA_orte_abort_on_non_zero_status": "0"})
    assert code != 0, out
    assert "rank 0 of 2 waited 3 s for barrier" in out, out
    assert seconds < 30, f"{seconds:.1f} s"


def test_the_timeout_ends_a_rank_busy_outside_mpi_with_the_job():
    # MPI_Abort must end rank 1, asleep for 60 s where no MPI call sees an abort message.
    code, out, seconds = run_job("stall-barrier", ranks=2, timeout_s=3)
    assert code != 0, out
    assert "rank 0 of 2 waited 3 s for barrier" in out, out
    assert seconds < 30, f"{seconds:.1f} s: {out}"


def launcher_rank_variable():
    """The variable the launcher gives each rank its number in, or None."""
    env = subprocess.run(MPIEXEC + ["-np", "1", "env"], stdout=subprocess.PIPE, text=True).stdout
    # Open MPI's, MPICH's (Hydra, and srun --mpi=pmi2), PMIx's (srun --mpi=pmix)
    for name in ("OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK"):
        if re.search(rf"^{name}=", env, re.MULTILINE):
            return name
    return None


def test_a_rank_that_never_comes_ends_the_job_at_the_groups_start():
    if launcher_rank_variable() is None:
        pytest.skip("rank 1 is made late through OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK")
    code, out, seconds = run_job("late", ranks=2, timeout_s=5)
    assert code != 0, out
    # Open MPI's and MPICH's starts are collective: rank 0 waits inside MPI_Init_thread,
    # where the watchdog ends it; an MPI whose start is local would wait in the group's start.
    assert re.search(r"waited 5 s for (MPI's start|the process group's start)", out), out
    assert seconds < 30, f"{seconds:.1f} s"


def test_a_bucket_allreduce_starts_before_the_first_layers_backward_ends(tmp_path):
    rank_variable = launcher_rank_variable()
    if rank_variable is None:
        pytest.skip("the per-rank trace path uses OMPI_COMM_WORLD_RANK, PMI_RANK or PMIX_RANK")
    pattern = str(tmp_path / f"trace.${rank_variable}.json")
    code, out, _ = run_job("trace", wrap=["/bin/sh", "-c", f'DP_TRACE="{pattern}" exec "$0" "$@"'])
    assert code == 0, out
    events = json.loads((tmp_path / "trace.0.json").read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    names = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M"}
    spans = [e for e in events if e.get("ph") == "X"]
    backwards = sorted((e for e in spans if e["name"] == "autograd backward"),
                       key=lambda e: e["ts"])
    assert len(backwards) == 6, [e["name"] for e in spans][:40]
    # device/trace.cc writes a span's argument, the bucket's index, as args.i.
    first_buckets = [e for e in spans if e["name"] == "bucket allreduce"
                     and e.get("args", {}).get("i") == 0]
    overlapped = 0
    for step, bw in enumerate(backwards):
        begin, end = bw["ts"], bw["ts"] + bw["dur"]
        # The nodes this backward ran (not the gradient hooks' accumulation): the last one
        # to end is the first layer's backward.
        nodes = [e for e in spans if begin <= e["ts"] <= end and names.get(e["tid"]) != "comm"
                 and e["name"] not in ("autograd backward", "AccumulateGrad", "gradient sum")]
        last_node_end = max(e["ts"] + e["dur"] for e in nodes)
        bucket0 = [e for e in first_buckets if begin <= e["ts"] <= end]
        assert bucket0, f"step {step}: no allreduce of bucket 0 inside the backward"
        assert names[bucket0[0]["tid"]] == "comm"
        if bucket0[0]["ts"] < last_node_end:
            overlapped += 1
    # Step 0 warms up (the first allocation of every buffer); every later step overlaps.
    assert overlapped >= 5, f"bucket 0 overlapped the backward in {overlapped} of 6 steps"
