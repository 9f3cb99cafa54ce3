"""dp-train --distributed under mpirun: R ranks train the steps one process trains, rank 0
alone prints and writes, its checkpoints load anywhere and resume exactly, and bad
combinations fail with exit code 2.

Each run is small (--limit, one or two epochs) and bounded: mpirun's --timeout ends the
job, DP_DISTRIBUTED_TIMEOUT aborts a collective that waits, and a run that still outlives
RUN_TIMEOUT has its whole process group killed. The tests that run ranks need Open MPI's
mpirun (its --allow-run-as-root, --oversubscribe, --timeout, --wdir per application and
--output-filename) and the MPI plugin, and skip without either.
"""
import glob
import json
import os
import runpy
import shutil
import subprocess
import sys

import numpy as np
import pytest

from reference import read_idx, read_safetensors

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bounded import run_bounded  # noqa: E402 (tests/bounded.py)

MPIRUN = shutil.which("mpirun")
RUN_TIMEOUT = 120  # seconds; mpirun's own --timeout is 90


def open_mpi():
    if not MPIRUN:
        return False
    p = subprocess.run([MPIRUN, "--version"], capture_output=True, text=True, timeout=30)
    return "Open MPI" in p.stdout + p.stderr


needs_mpirun = pytest.mark.skipif(not open_mpi(), reason="needs Open MPI's mpirun on PATH")

# --limit 2048 at batch 64: 32 steps an epoch.
SAMPLES = ["--limit", "2048", "--batch", "64"]
COMMON = [*SAMPLES, "--epochs", "1"]


@pytest.fixture(scope="session")
def mpi_plugin(pytestconfig):
    path = pytestconfig.getoption("mpi_plugin")
    if not path or not os.path.exists(path):
        pytest.skip("the MPI plugin libdataparallel_mpi.so is not built")
    return path


def environment(mpi_plugin, cpu_devices):
    env = dict(os.environ, DP_CPU_DEVICES=str(cpu_devices), DP_MPI_PLUGIN=mpi_plugin,
               DP_DISTRIBUTED_TIMEOUT="60", DP_SPIN_US="0")
    if "ASAN_OPTIONS" in env:
        # The sanitizer build (scripts/test.sh stage 3): Open MPI's once-per-process
        # allocations are suppressed by library name, which the leak report knows only
        # when it unwinds the allocations' stacks in full.
        supp = os.path.join(os.path.dirname(__file__), "..", "..", "scripts", "lsan-mpi.supp")
        env["ASAN_OPTIONS"] += ":fast_unwind_on_malloc=0"
        env["LSAN_OPTIONS"] = "suppressions=" + os.path.abspath(supp) + ":print_suppressions=0"
    return env


def bounded(cmd, env, cwd):
    """cmd's CompletedProcess; past RUN_TIMEOUT its process group (mpirun and the ranks) is
    ended and the test fails."""
    return run_bounded(cmd, RUN_TIMEOUT, env=env, cwd=cwd)


MPIRUN_FLAGS = ["--allow-run-as-root", "--oversubscribe", "--timeout", "90"]


def mpirun(dp_train, mpi_plugin, cwd, *args, ranks=2, cpu_devices=2):
    """dp-train --distributed ARGS as `ranks` ranks in cwd."""
    cmd = [MPIRUN, *MPIRUN_FLAGS, "-np", str(ranks), dp_train, "--distributed", *args]
    return bounded(cmd, environment(mpi_plugin, cpu_devices), cwd)


def single(dp_train, cwd, *args, cpu_devices=2, env=None):
    """dp-train ARGS as one process in cwd."""
    return bounded([dp_train, *args], dict(env or os.environ, DP_CPU_DEVICES=str(cpu_devices)),
                   cwd)


def final_json(stdout):
    lines = [l for l in stdout.splitlines() if l.startswith("{")]
    assert len(lines) == 1, stdout
    return json.loads(lines[0])


def metrics(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        return [dict(zip(header, map(float, line.strip().split(",")))) for line in f]


def assert_same_training(a, b):
    """The weights of checkpoints a and b agree within float32 rounding. A rank's loss is
    the mean of B/R rows and the ranks' gradients are averaged, where one process takes the
    mean of B: the same numbers, with the rounding of another order of operations. The
    bound (1e-5 relative, 1e-6 absolute, for weights of order 0.01-0.1 after 32 steps) is
    a few float32 ulps per step. Measured: one device per rank equals one process over
    two devices bit for bit (batch 64 halves exactly); two devices per rank differ from
    one process over four by at most 1.6e-7 (the gradients summed in another order)."""
    wa, wb = read_safetensors(a), read_safetensors(b)
    assert wa.keys() == wb.keys()
    for name in wa:
        np.testing.assert_allclose(wa[name], wb[name], rtol=1e-5, atol=1e-6, err_msg=name)


@pytest.fixture(scope="module")
def two_ranks(dp_train, mpi_plugin, tmp_path_factory):
    """One 2-rank run with every output, not --quiet: rank 0 in its own directory r0, rank 1
    in r1 (mpirun --wdir per application), each rank's stdout and stderr kept apart
    (--output-filename). Returns (run, r0, rank 0's output, rank 1's output); an output is
    {"stdout": text, "stderr": text}."""
    root = tmp_path_factory.mktemp("two_ranks")
    r0, r1, outputs = root / "r0", root / "r1", root / "outputs"
    r0.mkdir()
    r1.mkdir()
    args = ["--distributed", "--devices", "cpu:0", *COMMON, "--checkpoint", "ck.safetensors",
            "--metrics", "m.csv", "--plot", "p.svg", "--json"]
    cmd = [MPIRUN, *MPIRUN_FLAGS, "--output-filename", str(outputs),
           "-np", "1", "--wdir", str(r0), dp_train, *args, ":",
           "-np", "1", "--wdir", str(r1), dp_train, *args]
    p = bounded(cmd, environment(mpi_plugin, 2), root)
    assert p.returncode == 0, p.stdout + p.stderr

    def output(rank):
        found = {}
        for stream in ("stdout", "stderr"):
            files = glob.glob(str(outputs / "*" / f"rank.{rank}" / stream))
            assert len(files) <= 1, files
            found[stream] = open(files[0]).read() if files else ""
        return found

    return p, r0, r1, output(0), output(1)


@needs_mpirun
def test_two_ranks_of_one_device_train_the_weights_of_one_process_over_two_devices(
        dp_train, two_ranks, tmp_path):
    _, r0, _, out0, _ = two_ranks
    p = single(dp_train, tmp_path, "--devices", "cpu:0,cpu:1", *COMMON, "--checkpoint",
               "ck.safetensors", "--metrics", "m.csv", "--quiet")
    assert p.returncode == 0, p.stderr
    assert_same_training(r0 / "ck.safetensors", tmp_path / "ck.safetensors")
    (ours,), (theirs,) = metrics(r0 / "m.csv"), metrics(tmp_path / "m.csv")
    # The step losses are the ranks' means averaged, the test sums summed over the ranks'
    # halves of the test set: equal within the rounding of 6 decimals.
    for key in ("train_loss", "test_loss", "test_accuracy"):
        assert abs(ours[key] - theirs[key]) <= 2e-6, (key, ours, theirs)
    j = final_json(out0["stdout"])
    assert j["ranks"] == 2 and j["devices"] == ["cpu:0"] and j["batch"] == 64
    assert j["allreduce_dtype"] == "fp32", j
    # The phases add the synchronisation (dp_ddp_stats): the steps allreduced (time > 0),
    # the wait and the buffer broadcast are reported (a one-process run has none of these
    # keys); the epoch lines say the same.
    ph = j["phases"]
    assert ph["allreduce"] > 0 and ph["sync_wait"] >= 0 and ph["buffer_broadcast"] >= 0, ph
    assert "allreduce" in out0["stdout"] and "(waited" in out0["stdout"], out0["stdout"]


@needs_mpirun
def test_two_ranks_of_the_librarys_two_devices_train_as_one_process_over_four(
        dp_train, mpi_plugin, tmp_path):
    # No --devices: with 4 CPU devices and 2 ranks on this machine each rank takes
    # cpu:0,cpu:1 and splits its 32 rows 16/16, as one process splits 64 over 4 devices.
    (tmp_path / "d").mkdir()
    (tmp_path / "s").mkdir()
    p = mpirun(dp_train, mpi_plugin, tmp_path / "d", *COMMON, "--checkpoint", "ck.safetensors",
               "--json", "--quiet", cpu_devices=4)
    assert p.returncode == 0, p.stdout + p.stderr
    assert final_json(p.stdout)["devices"] == ["cpu:0", "cpu:1"]
    s = single(dp_train, tmp_path / "s", "--devices", "cpu:0,cpu:1,cpu:2,cpu:3", *COMMON,
               "--checkpoint", "ck.safetensors", "--quiet", cpu_devices=4)
    assert s.returncode == 0, s.stderr
    assert_same_training(tmp_path / "d" / "ck.safetensors", tmp_path / "s" / "ck.safetensors")


@needs_mpirun
def test_allreduce_bf16_trains_from_bfloat16_averages_and_says_so(dp_train, mpi_plugin, two_ranks,
                                                                  tmp_path):
    # The gradient bound of the bfloat16 allreduce is checked step by step in the C, Python
    # and Java suites; over 32 steps of momentum SGD its rounding moves the weights by up
    # to 0.06 (measured), so here: the option reaches the library (the weights differ from
    # the fp32 run's), the JSON line says it, and the run trains as well (test accuracy
    # within 5 points of the fp32 run's; measured 0.2).
    _, r0, _, out0, _ = two_ranks
    p = mpirun(dp_train, mpi_plugin, tmp_path, "--devices", "cpu:0", *COMMON, "--checkpoint",
               "ck.safetensors", "--json", "--quiet", "--allreduce", "bf16")
    assert p.returncode == 0, p.stdout + p.stderr
    j, fp32 = final_json(p.stdout), final_json(out0["stdout"])
    assert j["allreduce_dtype"] == "bf16", j
    assert abs(j["test_accuracy"] - fp32["test_accuracy"]) <= 0.05, (j, fp32)
    ours, theirs = read_safetensors(tmp_path / "ck.safetensors"), read_safetensors(r0 / "ck.safetensors")
    assert any(not np.array_equal(ours[k], theirs[k]) for k in ours), "the option was lost"


def test_allreduce_without_distributed_exits_2(dp_train, tmp_path):
    p = single(dp_train, tmp_path, "--allreduce", "bf16", "--limit", "64")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [
        "dp-train: --allreduce needs --distributed: one process has no allreduce between "
        "ranks"], p.stderr
    p = single(dp_train, tmp_path, "--distributed", "--allreduce", "fp16")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == ['dp-train: --allreduce = "fp16": expected fp32 or bf16'], \
        p.stderr


@needs_mpirun
def test_only_rank_0_prints_and_writes_files(two_ranks):
    p, r0, r1, out0, out1 = two_ranks
    assert sorted(os.listdir(r0)) == ["ck.safetensors", "m.csv", "p.svg"]
    assert os.listdir(r1) == [], "rank 1 wrote files"
    assert out1 == {"stdout": "", "stderr": ""}, out1
    lines = out0["stderr"].splitlines()
    assert lines[0] == ("dp-train: mlp on 2 ranks (rank 0 on cpu:0), 2048 training samples, "
                        "batch 64 (32 a rank), sgd lr 0.1"), lines
    # About ten progress lines for the epoch's 32 global steps, the last one included.
    steps = [l.split()[2] for l in lines[1:]]
    assert steps == [f"{n}/32" for n in range(4, 33, 4)], lines
    summaries = [l for l in out0["stdout"].splitlines() if l.startswith("epoch ")]
    assert len(summaries) == 1 and summaries[0].startswith("epoch 1/1  train loss"), out0
    assert len(metrics(r0 / "m.csv")) == 1
    # mpirun passes the ranks' stdout through: one summary and one JSON line in all.
    assert len([l for l in p.stdout.splitlines() if l.startswith("epoch ")]) == 1, p.stdout
    final_json(p.stdout)


TEST_IMAGES, EVAL_BATCH = 10000, 1000  # Fashion-MNIST's test set; dp-train's evaluation batch


@needs_mpirun
@pytest.mark.parametrize("ranks", [2, 3])
def test_each_rank_evaluates_only_its_share_of_the_test_set(dp_train, mpi_plugin, tmp_path,
                                                            ranks):
    # The whole-set figures (compared with one process above) would also come out if every
    # rank evaluated the whole set and nothing were summed over the ranks. Each rank writes
    # its own trace (DP_TRACE, a relative path, in the rank's own --wdir): the evaluation's
    # forwards are the DataParallel forwards after the epoch's last optimizer step, and rank
    # r's rows [r*N/R, (r+1)*N/R) take ceil(rows / 1000) of them (2 ranks: 5 each, 3 ranks:
    # 4 each), where the whole set would take 10 on every rank.
    args = ["--distributed", "--devices", "cpu:0", "--limit", "240", "--batch", "60",
            "--epochs", "1", "--quiet"]
    cmd = [MPIRUN, *MPIRUN_FLAGS]
    for r in range(ranks):
        (tmp_path / f"r{r}").mkdir()
        cmd += [*([":"] if r else []), "-np", "1", "--wdir", str(tmp_path / f"r{r}"), dp_train,
                *args]
    p = bounded(cmd, dict(environment(mpi_plugin, 2), DP_TRACE="trace.json"), tmp_path)
    assert p.returncode == 0, p.stdout + p.stderr
    for r in range(ranks):
        events = json.loads((tmp_path / f"r{r}" / "trace.json").read_text())["traceEvents"]
        spans = [e for e in events if e.get("ph") == "X"]
        trained = max(e["ts"] + e["dur"] for e in spans if e["name"] == "optimizer step")
        evaluated = [e for e in spans if e["name"] == "data parallel forward"
                     and e["ts"] >= trained]
        rows = TEST_IMAGES * (r + 1) // ranks - TEST_IMAGES * r // ranks
        assert len(evaluated) == -(-rows // EVAL_BATCH), (r, len(evaluated))


@needs_mpirun
def test_a_two_rank_checkpoint_evaluates_alike_in_one_process_and_in_pytorch(
        dp_train, two_ranks, tmp_path, monkeypatch):
    _, r0, _, out0, _ = two_ranks
    trained = final_json(out0["stdout"])
    shutil.copy(r0 / "ck.safetensors", tmp_path / "ck.safetensors")
    e = single(dp_train, tmp_path, "--eval-only", "ck.safetensors", "--devices", "cpu:0,cpu:1",
               "--json", "--quiet")
    assert e.returncode == 0, e.stderr
    evaluated = final_json(e.stdout)
    # Both are the whole test set's figures, printed to 4 decimals.
    assert evaluated["test_accuracy"] == trained["test_accuracy"], (evaluated, trained)
    assert evaluated["test_loss"] == trained["test_loss"], (evaluated, trained)

    torch = pytest.importorskip("torch")
    docs = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")
    with open(os.path.join(docs, "models.md")) as f:
        text = f.read()
    start = text.index("```python\n") + len("```python\n")
    (tmp_path / "snippet.py").write_text(text[start:text.index("\n```", start)])
    monkeypatch.chdir(tmp_path)  # the snippet reads ck.safetensors from where it runs
    net = runpy.run_path(str(tmp_path / "snippet.py"), run_name="__main__")["model"]
    x = torch.from_numpy(read_idx("t10k-images-idx3-ubyte.gz").astype("float32") / 255)
    y = torch.from_numpy(read_idx("t10k-labels-idx1-ubyte.gz").astype("int64"))
    with torch.no_grad():
        logits = net(x.reshape(-1, 784))
    loss = torch.nn.functional.cross_entropy(logits, y).item()
    accuracy = (logits.argmax(1) == y).double().mean().item()
    # As test_docs.py: 4 decimals printed, and a few of 10,000 near-ties may round apart.
    assert abs(trained["test_loss"] - loss) < 2e-4, (trained["test_loss"], loss)
    assert abs(trained["test_accuracy"] - accuracy) <= 3e-4, (trained["test_accuracy"], accuracy)


@needs_mpirun
def test_resuming_a_two_rank_checkpoint_continues_as_the_uninterrupted_run_on_2_or_1_process(
        dp_train, mpi_plugin, two_ranks, tmp_path):
    _, r0, _, _, _ = two_ranks
    shutil.copy(r0 / "ck.safetensors", tmp_path / "resumed.safetensors")
    shutil.copy(r0 / "ck.safetensors", tmp_path / "single.safetensors")
    straight = mpirun(dp_train, mpi_plugin, tmp_path, "--devices", "cpu:0", *SAMPLES,
                      "--epochs", "2", "--checkpoint", "straight.safetensors", "--json",
                      "--quiet")
    assert straight.returncode == 0, straight.stdout + straight.stderr
    # The settings come from the checkpoint (limit, batch, seed ...), as without ranks.
    resumed = mpirun(dp_train, mpi_plugin, tmp_path, "--devices", "cpu:0", "--epochs", "2",
                     "--resume", "resumed.safetensors", "--checkpoint", "resumed.safetensors",
                     "--json")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert resumed.stderr.count("dp-train: resuming after epoch 1 from resumed.safetensors") \
        == 1, resumed.stderr
    assert [l.split()[1] for l in resumed.stdout.splitlines() if l.startswith("epoch ")] \
        == ["2/2"], resumed.stdout
    # Every rank loaded the model and the optimizer's state: the same bytes as straight on.
    assert (tmp_path / "straight.safetensors").read_bytes() == \
        (tmp_path / "resumed.safetensors").read_bytes()
    a, b = final_json(straight.stdout), final_json(resumed.stdout)
    assert (a["test_loss"], a["test_accuracy"]) == (b["test_loss"], b["test_accuracy"])

    # One process over two devices resumes it too, and trains the same second epoch.
    one = single(dp_train, tmp_path, "--devices", "cpu:0,cpu:1", "--epochs", "2", "--resume",
                 "single.safetensors", "--checkpoint", "single.safetensors", "--quiet")
    assert one.returncode == 0, one.stderr
    assert_same_training(tmp_path / "single.safetensors", tmp_path / "straight.safetensors")


@needs_mpirun
@pytest.mark.parametrize("batch,needle", [
    ("255", "dp-train: --batch 255 is not divisible by the 2 ranks"),
    ("1", "dp-train: --batch 1 is smaller than the 2 ranks"),
])
def test_a_batch_the_ranks_cannot_share_exits_2_naming_both(dp_train, mpi_plugin, tmp_path,
                                                            batch, needle):
    p = mpirun(dp_train, mpi_plugin, tmp_path, "--limit", "512", "--batch", batch,
               "--checkpoint", "ck.safetensors")
    assert p.returncode == 2, p.stdout + p.stderr
    assert needle in p.stderr, p.stderr
    assert p.stdout == "" and os.listdir(tmp_path) == [], (p.stdout, os.listdir(tmp_path))


def test_distributed_with_chunk_sizes_exits_2_before_starting_mpi(dp_train, tmp_path):
    p = single(dp_train, tmp_path, "--distributed", "--chunk-sizes", "32,32", "--batch", "64")
    assert p.returncode == 2, p.stderr
    assert p.stderr.splitlines() == [
        "dp-train: --chunk-sizes and --distributed exclude each other: each rank splits its "
        "share of --batch evenly over its devices"], p.stderr


def test_distributed_without_the_mpi_plugin_exits_1_with_the_librarys_message(
        dp_train, tmp_path):
    missing = str(tmp_path / "libdataparallel_mpi.so")
    p = single(dp_train, tmp_path, "--distributed", "--limit", "512",
               env=dict(os.environ, DP_MPI_PLUGIN=missing))
    assert p.returncode == 1, p.stderr
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("dp-train: --distributed: "), lines
    assert missing in lines[0], lines


def test_without_distributed_dp_train_loads_no_mpi(dp_train, tmp_path):
    # The dynamic loader lists every library it opens, dlopen's included.
    p = single(dp_train, tmp_path, "--limit", "256", "--batch", "64", "--epochs", "1",
               "--quiet", env=dict(os.environ, LD_DEBUG="files"))
    assert p.returncode == 0, p.stderr[-2000:]
    opened = [l for l in p.stderr.splitlines() if "file=" in l]
    assert any("libdataparallel.so" in l for l in opened), opened[:20]
    mpi = [l for l in opened if "libmpi" in l or "dataparallel_mpi" in l]
    assert not mpi, mpi
