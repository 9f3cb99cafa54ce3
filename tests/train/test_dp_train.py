"""dp-train end to end: it learns, it resumes exactly, and it fails cleanly on bad input.

Run by ctest: /usr/bin/python3 -m pytest tests/train --dp-train build/bin/dp-train
"""
import gzip
import json
import math
import os
import random
import re
import select
import signal
import stat
import struct
import subprocess
import sys
import threading
import time

import pytest

from reference import DATA, read_idx, read_safetensors, torch_model


def run(dp_train, *args, timeout=300, env=None):
    env = dict(os.environ, DP_CPU_DEVICES="2", **(env or {}))
    return subprocess.run([dp_train, *args], capture_output=True, text=True, timeout=timeout,
                          env=env)


def start(dp_train, *args):
    """dp-train in the background, as run() runs it (output piped), for tests that signal it."""
    return subprocess.Popen([dp_train, *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, DP_CPU_DEVICES="2"))


def error_lines(proc):
    """The lines of stderr that dp-train's errors and notes start with its name."""
    return [l for l in proc.stderr.splitlines() if l.startswith("dp-train:")]


def final_json(proc):
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    assert lines, proc.stdout + proc.stderr
    return json.loads(lines[-1])


def metrics(path):
    with open(path) as f:
        header = f.readline().strip().split(",")
        return [dict(zip(header, map(float, line.strip().split(",")))) for line in f]


def test_mlp_on_4096_samples_for_2_epochs_on_2_devices_learns(dp_train, tmp_path):
    # Batch 64: at the default 256, 4096 samples are only 16 steps an epoch, and PyTorch
    # itself reaches ~67% after 2 epochs (torch_reference.py --limit 4096 --epochs 2).
    csv = tmp_path / "m.csv"
    p = run(dp_train, "--model", "mlp", "--limit", "4096", "--epochs", "2", "--batch", "64",
            "--devices", "cpu:0,cpu:1", "--metrics", str(csv), "--json", "--quiet")
    assert p.returncode == 0, p.stderr
    j = final_json(p)
    assert j["devices"] == ["cpu:0", "cpu:1"]
    assert j["test_accuracy"] > 0.70
    rows = metrics(csv)
    assert len(rows) == 2
    assert rows[1]["train_loss"] < rows[0]["train_loss"]
    assert rows[0]["train_loss"] < 2.2  # below chance level (ln 10 = 2.30) already
    assert j["samples_per_s"] > 0 and j["phases"]["apply"] > 0


PHASES = ["scatter", "replicate", "apply", "gather", "backward", "reduce", "optimizer"]
PLAIN_PROGRESS = re.compile(
    r"  epoch (\d+)/(\d+): (\d+)/(\d+) batches, loss (\S+), (\S+)k samples/s, (\S+)s")
BAR_PROGRESS = re.compile(
    r"  epoch (\d+)/(\d+) \[([=> ]{30})\] (\d+)/(\d+)  loss (\S+)  (\S+)k samples/s  ETA (\d+)s")
EPOCH_SUMMARY = re.compile(
    r"epoch (\d+)/(\d+)  train loss (\S+)  test loss (\S+)  test accuracy (\S+)%  "
    r"(\S+)k samples/s  (\S+)s  \[" + " ".join(rf"{p} (\S+)s" for p in PHASES) + r"\]")


def positive_finite(text):
    v = float(text)
    return math.isfinite(v) and v > 0


def epoch_summaries(stdout):
    rows = []
    for line in stdout.splitlines():
        m = EPOCH_SUMMARY.fullmatch(line)
        if m:
            v = m.groups()
            rows.append({"epoch": int(v[0]), "of": int(v[1]), "train_loss": v[2],
                         "test_loss": v[3], "test_accuracy": float(v[4]),
                         "samples_per_s": float(v[5]) * 1000, "seconds": float(v[6]),
                         "phases": dict(zip(PHASES, map(float, v[7:])))})
    return rows


@pytest.fixture(scope="module")
def plain_run(dp_train, tmp_path_factory):
    """One run without --quiet, stderr a pipe: 4096 samples, 16 batches an epoch."""
    csv = tmp_path_factory.mktemp("plain") / "m.csv"
    p = run(dp_train, "--limit", "4096", "--epochs", "2", "--devices", "cpu:0,cpu:1", "--json",
            "--metrics", str(csv))
    assert p.returncode == 0, p.stderr
    return p, metrics(csv)


def test_without_a_terminal_progress_is_plain_lines_and_each_epoch_ends_with_a_summary(
        plain_run):
    p, rows = plain_run
    assert ("dp-train: mlp on cpu:0,cpu:1, 4096 training samples, batch 256, sgd lr 0.1"
            in p.stderr.splitlines()), p.stderr
    assert "\r" not in p.stderr, p.stderr  # no bar
    progress = [PLAIN_PROGRESS.fullmatch(l) for l in p.stderr.splitlines()
                if l.startswith("  epoch ")]
    assert progress and all(progress), p.stderr
    summaries = epoch_summaries(p.stdout)
    assert [(s["epoch"], s["of"]) for s in summaries] == [(1, 2), (2, 2)], p.stdout
    for epoch, summary, row in zip((1, 2), summaries, rows):
        lines = [m.groups() for m in progress if int(m.group(1)) == epoch]
        # About ten an epoch: every 16 // 10 + 1 = 2 batches, the last one included.
        assert [int(l[2]) for l in lines] == list(range(2, 17, 2)), lines
        assert all(l[1] == "2" and l[3] == "16" for l in lines), lines
        assert all(positive_finite(l[4]) and positive_finite(l[5]) for l in lines), lines
        elapsed = [float(l[6]) for l in lines]
        assert elapsed == sorted(elapsed), lines
        # The last progress line's running loss is the epoch's train loss.
        assert lines[-1][4] == summary["train_loss"], (lines[-1], summary)

        assert positive_finite(summary["train_loss"]) and positive_finite(summary["test_loss"])
        assert 0 < summary["test_accuracy"] <= 100
        assert summary["samples_per_s"] > 0 and summary["seconds"] >= 0
        assert all(v >= 0 for v in summary["phases"].values()), summary
        # The same numbers as the --metrics row, rounded for the screen.
        assert abs(float(summary["train_loss"]) - row["train_loss"]) <= 5.1e-5
        assert abs(float(summary["test_loss"]) - row["test_loss"]) <= 5.1e-5
        assert abs(summary["test_accuracy"] - 100 * row["test_accuracy"]) <= 5.1e-3
        for phase in PHASES:
            assert abs(summary["phases"][phase] - row[phase + "_s"]) <= 5.1e-3, (phase, row)
    assert float(summaries[1]["train_loss"]) < float(summaries[0]["train_loss"])


def test_the_json_line_has_every_field_the_issue_lists(plain_run):
    p, rows = plain_run
    j = final_json(p)
    assert {"model", "devices", "epochs", "test_accuracy", "test_loss", "samples_per_s",
            "seconds", "phases"} <= set(j), j
    assert set(j["phases"]) == set(PHASES), j["phases"]
    assert j["model"] == "mlp" and j["devices"] == ["cpu:0", "cpu:1"] and j["epochs"] == 2
    assert j["precision"] == "fp32"
    assert abs(j["test_accuracy"] - rows[-1]["test_accuracy"]) <= 5.1e-5
    assert abs(j["test_loss"] - rows[-1]["test_loss"]) <= 5.1e-5
    # Phase seconds are the sums over the epochs; samples/s counts the training loop only,
    # so it lies between the epochs' own rates, and the run took at least that long.
    for phase in PHASES:
        assert abs(j["phases"][phase] - sum(r[phase + "_s"] for r in rows)) <= 2e-4, phase
    rates = [r["samples_per_s"] for r in rows]
    assert min(rates) - 0.1 <= j["samples_per_s"] <= max(rates) + 0.1, (j, rates)
    assert j["seconds"] >= sum(r["seconds"] for r in rows) - 2e-3, (j, rows)


def run_on_a_terminal(dp_train, *args, timeout=120):
    """dp-train with stderr on a pseudo-terminal (stdout a pipe): (returncode, stdout,
    everything written to the terminal)."""
    master, slave = os.openpty()
    env = dict(os.environ, DP_CPU_DEVICES="2")
    proc = subprocess.Popen([dp_train, *args], stdout=subprocess.PIPE, stderr=slave, env=env)
    os.close(slave)
    terminal = b""
    deadline = time.time() + timeout
    try:
        while time.time() < deadline:
            if not select.select([master], [], [], 1)[0]:
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # EIO: every writer has closed the terminal
                break
            if not chunk:
                break
            terminal += chunk
    finally:
        os.close(master)
    out, _ = proc.communicate(timeout=60)
    return proc.returncode, out.decode(), terminal.decode()


def test_on_a_terminal_progress_is_a_bar_with_batches_eta_loss_and_rate(dp_train):
    # 192 batches an epoch: the bar is redrawn every 0.1 s, so a slow enough epoch shows
    # frames part of the way through as well as the last one, which is always drawn.
    code, out, terminal = run_on_a_terminal(dp_train, "--limit", "12288", "--batch", "64",
                                            "--epochs", "2", "--devices", "cpu:0,cpu:1")
    assert code == 0, terminal
    assert "batches," not in terminal, terminal  # no plain lines
    frames = [BAR_PROGRESS.fullmatch(f.rstrip(" ")) for f in re.split(r"[\r\n]+", terminal)
              if f.startswith("  epoch ")]
    assert frames and all(frames), terminal
    summaries = epoch_summaries(out)
    assert len(summaries) == 2, out
    for epoch, summary in zip((1, 2), summaries):
        bars = [m.groups() for m in frames if int(m.group(1)) == epoch]
        assert bars, terminal
        for _, of, bar, done, total, loss, rate, eta in bars:
            assert of == "2" and total == "192"
            filled = int(int(done) / 192 * 30)
            assert bar == ("=" * filled + ">" * (filled < 30)).ljust(30), bar
            assert positive_finite(loss) and positive_finite(rate)
            # The samples left at the rate so far, in whole seconds; the rate shown is
            # rounded to 0.1k, so the true one lies within 0.05k of it.
            left = (192 - int(done)) * 64
            fastest, slowest = (float(rate) + 0.05) * 1000, (float(rate) - 0.05) * 1000
            assert int(eta) >= left / fastest - 0.5 - 1e-9, (eta, rate, done)
            if slowest > 0:
                assert int(eta) <= left / slowest + 0.5 + 1e-9, (eta, rate, done)
        assert [int(b[3]) for b in bars] == sorted(int(b[3]) for b in bars), bars
        last = bars[-1]
        assert last[3] == "192" and last[2] == "=" * 30 and last[7] == "0", last
        assert last[5] == summary["train_loss"], (last, summary)


def test_resuming_from_a_checkpoint_matches_the_uninterrupted_run(dp_train, tmp_path):
    common = ["--limit", "4096", "--devices", "cpu:0,cpu:1", "--json", "--quiet"]
    straight = tmp_path / "straight.safetensors"
    p = run(dp_train, *common, "--epochs", "3", "--checkpoint", str(straight))
    assert p.returncode == 0, p.stderr
    first = tmp_path / "first.safetensors"
    p1 = run(dp_train, *common, "--epochs", "1", "--checkpoint", str(first))
    assert p1.returncode == 0, p1.stderr
    resumed = tmp_path / "resumed.safetensors"
    os.replace(first, resumed)
    # Without --quiet, so that the note and the epoch summaries show where it picked up.
    p2 = run(dp_train, *[a for a in common if a != "--quiet"], "--epochs", "3", "--resume",
             str(resumed), "--checkpoint", str(resumed))
    assert p2.returncode == 0, p2.stderr
    assert f"dp-train: resuming after epoch 1 from {resumed}" in p2.stderr.splitlines()
    assert [l.split()[1] for l in p2.stdout.splitlines() if l.startswith("epoch ")] == \
        ["2/3", "3/3"], p2.stdout
    a, b = final_json(p), final_json(p2)
    assert a["test_loss"] == b["test_loss"] and a["test_accuracy"] == b["test_accuracy"]
    # Same weights, optimizer state and metadata: the files are identical byte for byte.
    assert straight.read_bytes() == resumed.read_bytes()


def test_resuming_a_checkpoint_already_at_epochs_warns_that_nothing_trains(dp_train, tmp_path):
    ck = tmp_path / "c.st"
    p = run(dp_train, "--limit", "512", "--epochs", "2", "--quiet", "--checkpoint", str(ck))
    assert p.returncode == 0, p.stderr
    p = run(dp_train, "--epochs", "2", "--quiet", "--resume", str(ck))
    assert p.returncode == 0, p.stderr
    assert f"dp-train: warning: {ck} is at epoch 2 and --epochs is 2" in p.stderr, p.stderr
    assert "epoch " not in p.stdout, p.stdout


@pytest.mark.parametrize("settings", [
    ["--lr", "0.05", "--momentum", "0.5", "--batch", "128", "--seed", "3"],
    ["--optimizer", "adam", "--lr", "0.002", "--batch", "128"],
], ids=["sgd", "adam"])
def test_resuming_without_the_options_continues_with_the_checkpoints_settings(
        dp_train, tmp_path, settings):
    # None of the settings is repeated on resuming: the run must take each over from the
    # checkpoint (the defaults, lr 0.1 / momentum 0.9 / batch 256 / seed 0 / sgd, would
    # train differently, and adam's state does not load into sgd).
    common = ["--limit", "2048", "--devices", "cpu:0,cpu:1", "--json", "--quiet"]
    straight = tmp_path / "straight.safetensors"
    p = run(dp_train, *common, *settings, "--epochs", "2", "--checkpoint", str(straight))
    assert p.returncode == 0, p.stderr
    ck = tmp_path / "ck.safetensors"
    p1 = run(dp_train, *common, *settings, "--epochs", "1", "--checkpoint", str(ck))
    assert p1.returncode == 0, p1.stderr
    p2 = run(dp_train, *common, "--epochs", "2", "--resume", str(ck), "--checkpoint", str(ck))
    assert p2.returncode == 0, p2.stderr
    assert final_json(p2)["batch"] == 128
    assert straight.read_bytes() == ck.read_bytes()


def test_a_setting_given_on_resuming_wins_over_the_checkpoints_with_a_warning(
        dp_train, tmp_path):
    ck = tmp_path / "ck.safetensors"
    p1 = run(dp_train, "--limit", "1024", "--epochs", "1", "--lr", "0.05", "--checkpoint",
             str(ck), "--quiet")
    assert p1.returncode == 0, p1.stderr
    ck2 = tmp_path / "ck2.safetensors"
    p2 = run(dp_train, "--limit", "1024", "--epochs", "2", "--resume", str(ck), "--lr", "0.01",
             "--momentum", "0.9", "--checkpoint", str(ck2))
    assert p2.returncode == 0, p2.stderr
    # The optimizer itself ran at 0.01: the library's checkpoint records the rate it had
    # (a load restores the saved 0.05, which dp-train then replaces).
    assert float(safetensors_header(ck)["__metadata__"]["optimizer_lr"]) == 0.05
    assert float(safetensors_header(ck2)["__metadata__"]["optimizer_lr"]) == 0.01
    lines = error_lines(p2)
    assert "dp-train: warning: the checkpoint was trained with --lr 0.05, this run continues " \
        "with --lr 0.01" in lines, p2.stderr
    # The momentum given is the one recorded: nothing to warn about.
    assert not [l for l in lines if "--momentum" in l], p2.stderr
    assert any(l.endswith("sgd lr 0.01") for l in lines), p2.stderr
    p3 = run(dp_train, "--limit", "1024", "--epochs", "2", "--resume", str(ck), "--optimizer",
             "adam")
    assert p3.returncode == 2, p3.stderr
    assert error_lines(p3) == [
        f"dp-train: --resume {ck}: the checkpoint holds the state of optimizer sgd, not adam"]
    # A batch taken over from the checkpoint is named as such when it does not fit.
    p4 = run(dp_train, "--limit", "200", "--epochs", "2", "--resume", str(ck))
    assert p4.returncode == 2, p4.stderr
    assert error_lines(p4) == [
        "dp-train: warning: the checkpoint was trained with --limit 1024, this run continues "
        "with --limit 200",
        "dp-train: --batch 256 (the checkpoint's) is larger than the 200 training samples"]


def test_quiet_drops_progress_but_not_the_warning_that_a_setting_differs(dp_train, tmp_path):
    # --quiet is "no progress output": a resumed run that no longer continues the
    # checkpoint's run exactly must still say so.
    ck = tmp_path / "ck.safetensors"
    p1 = run(dp_train, "--limit", "1024", "--epochs", "1", "--lr", "0.05", "--checkpoint",
             str(ck), "--quiet")
    assert p1.returncode == 0, p1.stderr
    p2 = run(dp_train, "--limit", "1024", "--epochs", "2", "--resume", str(ck), "--lr", "0.01",
             "--quiet")
    assert p2.returncode == 0, p2.stderr
    assert p2.stderr.splitlines() == [
        "dp-train: warning: the checkpoint was trained with --lr 0.05, this run continues "
        "with --lr 0.01"], p2.stderr


def test_one_device_reports_its_backward_time_too(dp_train, tmp_path):
    # DataParallel over one device runs the module itself (no gather, no reduce); the
    # backward phase must still show the time the backward took, not 0.
    csv = tmp_path / "m.csv"
    p = run(dp_train, "--limit", "4096", "--epochs", "1", "--devices", "cpu:0", "--json",
            "--metrics", str(csv))
    assert p.returncode == 0, p.stderr
    j = final_json(p)
    assert j["phases"]["backward"] > 0, j
    # One epoch: the CSV's row and the JSON's total are the same figure (4 decimals).
    assert abs(metrics(csv)[0]["backward_s"] - j["phases"]["backward"]) <= 1e-4, j
    summary = epoch_summaries(p.stdout)
    assert summary and summary[0]["phases"]["backward"] > 0, p.stdout


def test_eval_only_without_model_evaluates_the_checkpoints_model(dp_train, tmp_path):
    ck = tmp_path / "cnn.safetensors"
    p = run(dp_train, "--model", "cnn", "--limit", "256", "--epochs", "1", "--checkpoint",
            str(ck), "--json", "--quiet")
    assert p.returncode == 0, p.stderr
    e = run(dp_train, "--eval-only", str(ck), "--json", "--quiet")
    assert e.returncode == 0, e.stderr
    j = final_json(e)
    assert j["model"] == "cnn" and j["test_accuracy"] == final_json(p)["test_accuracy"], j


def test_eval_only_reports_the_checkpoints_accuracy(dp_train, tmp_path):
    ck = tmp_path / "ck.safetensors"
    p = run(dp_train, "--limit", "4096", "--epochs", "1", "--checkpoint", str(ck), "--json",
            "--quiet")
    assert p.returncode == 0, p.stderr
    e = run(dp_train, "--eval-only", str(ck), "--json", "--quiet")
    assert e.returncode == 0, e.stderr
    assert e.stdout.count("\n") == 1, e.stdout  # --quiet --json: the JSON line alone
    j = final_json(e)
    assert j["test_accuracy"] == final_json(p)["test_accuracy"]
    # The training run's keys; nothing trained, so no rate and no phases.
    assert set(j) == set(final_json(p)) and j["samples_per_s"] is None and j["phases"] is None


def test_eval_only_needs_only_the_test_files(dp_train, tmp_path):
    ck = tmp_path / "ck.safetensors"
    p = run(dp_train, "--limit", "512", "--epochs", "1", "--checkpoint", str(ck), "--json",
            "--quiet")
    assert p.returncode == 0, p.stderr
    test_only = tmp_path / "test-only"
    test_only.mkdir()
    for name in ("t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"):
        (test_only / name).symlink_to(os.path.join(DATA, name))
    e = run(dp_train, "--eval-only", str(ck), "--data", str(test_only), "--json", "--quiet")
    assert e.returncode == 0, e.stderr
    assert final_json(e)["test_accuracy"] == final_json(p)["test_accuracy"]
    # Training still needs its files, and says which one is missing.
    t = run(dp_train, "--limit", "512", "--epochs", "1", "--data", str(test_only))
    assert t.returncode == 2
    assert error_lines(t) and "train-images-idx3-ubyte.gz" in error_lines(t)[0], t.stderr


def test_eval_only_agrees_with_pytorch_on_the_same_weights(dp_train, tmp_path):
    # The whole input path (IDX bytes, pixel / 255 as float32, batches of the test set)
    # against PyTorch's evaluation of the checkpoint's weights on the raw test files.
    torch = pytest.importorskip("torch")
    ck = tmp_path / "ck.safetensors"
    p = run(dp_train, "--limit", "2048", "--epochs", "1", "--checkpoint", str(ck), "--quiet")
    assert p.returncode == 0, p.stderr
    e = run(dp_train, "--eval-only", str(ck), "--json", "--quiet")
    assert e.returncode == 0, e.stderr
    ours = final_json(e)

    model, _ = torch_model("mlp")
    tensors = read_safetensors(ck)
    state = {k: torch.from_numpy(tensors[k].copy()) for k in model.state_dict()}
    model.load_state_dict(state)
    x = torch.from_numpy(read_idx("t10k-images-idx3-ubyte.gz").reshape(-1, 784)
                         .astype("float32")) / 255.0
    y = torch.from_numpy(read_idx("t10k-labels-idx1-ubyte.gz").astype("int64"))
    with torch.no_grad():
        logits = model(x)
        loss = torch.nn.functional.cross_entropy(logits, y).item()
        accuracy = (logits.argmax(1) == y).double().mean().item()
    # dp-train prints 4 decimals; a few of 10,000 near-ties may round the other way.
    assert abs(ours["test_loss"] - loss) < 2e-4, (ours["test_loss"], loss)
    assert abs(ours["test_accuracy"] - accuracy) <= 3e-4, (ours["test_accuracy"], accuracy)


def run_trace_summary(trace):
    """bench/trace_summary.py over the trace file; it must succeed."""
    summary = os.path.join(os.path.dirname(__file__), "..", "..", "bench", "trace_summary.py")
    s = subprocess.run([sys.executable, summary, str(trace)], capture_output=True, text=True,
                       timeout=60)
    assert s.returncode == 0, s.stderr
    return s


def test_dp_trace_records_every_thread_and_trace_summary_sums_it(dp_train, tmp_path):
    trace = tmp_path / "trace.json"
    env = dict(os.environ, DP_CPU_DEVICES="2", DP_TRACE=str(trace))
    p = subprocess.run([dp_train, "--limit", "5120", "--epochs", "1", "--devices",
                        "cpu:0,cpu:1", "--quiet"], capture_output=True, text=True,
                       timeout=300, env=env)
    assert p.returncode == 0, p.stderr
    events = json.loads(trace.read_text())["traceEvents"]
    threads = {e["tid"]: e["args"]["name"] for e in events if e["ph"] == "M"}
    # cpu:0's work runs on the caller while that worker is idle (see docs/threading.md),
    # so its replica shows on the caller's row, or on cpu:0's when it was busy.
    assert {"caller", "cpu:1"} <= set(threads.values())
    spans = [(threads[e["tid"]], e["name"]) for e in events if e["ph"] == "X"]
    steps = spans.count(("caller", "optimizer step"))
    assert steps == 5120 // 256
    for rows in (("caller", "cpu:0"), ("cpu:1",)):  # 20 training, 10 evaluation forwards
        assert sum(spans.count((r, "replica forward")) for r in rows) == steps + 10
        assert sum(spans.count((r, "LinearBackward")) for r in rows) == 3 * steps

    s = run_trace_summary(trace)
    lines = s.stdout.splitlines()
    assert lines[0].startswith(f"{steps - 6} steps after the first 6")
    rows = {tuple(l.split()[:2]): l.split() for l in lines if l.startswith(("cpu:", "caller"))}
    # One replica forward and three LinearBackward per step on cpu:1, and the same for
    # cpu:0 on the caller's row and cpu:0's together.
    def per_step(row_names, span, column):
        return sum(float(rows[(r, span)][column]) for r in row_names if (r, span) in rows)
    for row_names in (("caller", "cpu:0"), ("cpu:1",)):
        assert abs(per_step(row_names, "replica", 3) - 1.0) < 0.015, rows
        assert abs(per_step(row_names, "LinearBackward", 2) - 3.0) < 0.015, rows


def test_trace_summary_reports_how_far_apart_the_replicas_start_and_end(tmp_path):
    # A hand-made timeline of 10 steps, 1000 us each, on the caller and cpu:1: replica 1
    # starts 3 us (5 us in every other step) after replica 0 and ends 10 us after it; in the
    # backward cpu:1's last node ends 5 us after the caller's, before BroadcastBackward.
    events = [{"ph": "M", "tid": 1, "args": {"name": "caller"}},
              {"ph": "M", "tid": 2, "args": {"name": "cpu:1"}}]
    def span(tid, name, ts, end):
        events.append({"ph": "X", "tid": tid, "name": name, "ts": ts, "dur": end - ts})
    for i in range(10):
        t = 1000.0 * i
        lag = 3 if i % 2 else 5
        span(1, "data parallel forward", t, t + 400)
        span(1, "replica forward", t + 10, t + 310)
        span(2, "replica forward", t + 10 + lag, t + 320)
        span(1, "autograd backward", t + 420, t + 900)
        span(1, "LinearBackward", t + 430, t + 700)
        span(2, "LinearBackward", t + 432, t + 705)
        span(1, "BroadcastBackward", t + 710, t + 720)
        span(2, "shared slice", t + 712, t + 730)  # the sum's chunks: after the meeting point
        span(1, "optimizer step", t + 910, t + 950)
    trace = tmp_path / "trace.json"
    trace.write_text(json.dumps({"traceEvents": events}))
    s = run_trace_summary(trace)
    lines = s.stdout.splitlines()
    # Steps 7-10 are in the window (the first 6 are warm-up), with lags 5, 3, 5, 3: the
    # median (the upper of the middle two) and the 90th percentile are both 5.
    assert lines[0] == "4 steps after the first 6, 1000.0 us per step", lines[0]
    assert ("  forward: replicas start 5.0 / 5.0 us apart, end 10.0 / 10.0 us apart"
            in lines), lines
    assert ("  backward: the devices' last nodes before the gradient sum end 5.0 / 5.0 us apart"
            in lines), lines


def test_plot_and_metrics_files_are_written(dp_train, tmp_path):
    svg, csv = tmp_path / "p.svg", tmp_path / "m.csv"
    p = run(dp_train, "--limit", "2048", "--epochs", "2", "--plot", str(svg), "--metrics",
            str(csv), "--quiet")
    assert p.returncode == 0, p.stderr
    text = svg.read_text()
    assert text.startswith("<svg") and text.rstrip().endswith("</svg>")
    assert "Test accuracy" in text and text.count("<polyline") == 3
    assert len(metrics(csv)) == 2


@pytest.fixture(scope="module")
def even_split_run(dp_train):
    """The reference for the options below: 2048 samples, 2 epochs, 2 devices, defaults."""
    p = run(dp_train, "--limit", "2048", "--epochs", "2", "--devices", "cpu:0,cpu:1", "--json",
            "--quiet")
    assert p.returncode == 0, p.stderr
    return final_json(p)


def test_precision_bf16_trains_under_autocast_and_says_once_when_bf16_is_not_native(
        dp_train, even_split_run):
    p = run(dp_train, "--limit", "2048", "--epochs", "2", "--devices", "cpu:0,cpu:1", "--json",
            "--quiet", "--precision", "bf16")
    assert p.returncode == 0, p.stderr
    j = final_json(p)
    assert j["precision"] == "bf16"
    # Not the float32 run, but as far as bfloat16 rounding takes 16 steps (measured 0.2
    # points of accuracy on this data; lost learning would be tens of points).
    assert j["test_loss"] != even_split_run["test_loss"]
    assert abs(j["test_accuracy"] - even_split_run["test_accuracy"]) < 0.03, (j, even_split_run)
    # Whether bfloat16 is native as the library decided it (the CPU, or DP_CPU_BF16 and
    # ONEDNN_MAX_CPU_ISA where the environment sets them); either reason's warning.
    warnings = [l for l in p.stderr.splitlines() if "compute in float32 and round" in l]
    assert len(warnings) == (0 if j["bf16_native"] else 1), p.stderr


def test_dp_cpu_bf16_fp32_says_once_that_bf16_runs_in_float32_on_any_cpu(dp_train):
    # The warning's other reason, which a CPU with native bfloat16 can check too.
    p = run(dp_train, "--limit", "512", "--epochs", "1", "--devices", "cpu:0,cpu:1", "--quiet",
            "--precision", "bf16", env={"DP_CPU_BF16": "fp32"})
    assert p.returncode == 0, p.stderr
    warnings = [l for l in p.stderr.splitlines() if "compute in float32 and round" in l]
    assert len(warnings) == 1, p.stderr
    # Once per context, by whichever replica casts first.
    assert re.search(r"cpu:[01] runs bfloat16 in float32 \(DP_CPU_BF16=fp32\)", warnings[0]), \
        warnings[0]


@pytest.mark.parametrize("model", ["mlp", "cnn"])
def test_bf16_weights_casts_kept_between_steps_change_no_bit_of_the_training(
        dp_train, tmp_path, model):
    # Autocast keeps each parameter's bfloat16 cast while the parameter is unchanged, and
    # the optimizer writes it along with the parameter (docs/autocast.md);
    # DP_AUTOCAST_CACHE=0 casts afresh at every use. On 2 devices (the replica on cpu:1
    # shares the kept casts) and through evaluation, both must train to the same bits:
    # the checkpoints (weights and momentum) are equal byte for byte, and so are the
    # evaluations after each epoch (which run on the kept casts).
    # That the casts were kept shows in DP_TRACE's "autocast cast" spans, whose argument
    # is the element count: with kept casts each parameter is cast in the first step only
    # (once, or once by each replica when both miss together), cast afresh it is cast by
    # both replicas at each of the 16 steps and again for each evaluation batch. The
    # activations' casts are the same in both runs (and one may have a parameter's size:
    # the CNN's logits and last weight), so the runs are compared size by size.
    saved, evaluated, casts = {}, {}, {}
    for keep in ("1", "0"):
        path, trace = tmp_path / f"{keep}.safetensors", tmp_path / f"{keep}.json"
        p = run(dp_train, "--model", model, "--limit", "1024", "--epochs", "2", "--batch", "128",
                "--devices", "cpu:0,cpu:1", "--precision", "bf16", "--json", "--quiet",
                "--checkpoint", str(path), env={"DP_AUTOCAST_CACHE": keep, "DP_TRACE": str(trace)})
        assert p.returncode == 0, p.stderr
        saved[keep] = path.read_bytes()
        j = final_json(p)
        evaluated[keep] = (j["test_loss"], j["test_accuracy"])
        events = json.loads(trace.read_text())["traceEvents"]
        casts[keep] = [e["args"]["i"] for e in events
                       if e["ph"] == "X" and e["name"] == "autocast cast"]
    assert saved["1"] == saved["0"]
    assert evaluated["1"] == evaluated["0"]
    sizes = [math.prod(v["shape"]) for k, v in safetensors_header(path).items()
             if k != "__metadata__" and not k.startswith("optimizer/")]
    for n in set(sizes):
        kept, afresh = casts["1"].count(n), casts["0"].count(n)
        assert afresh - kept >= 2 * (16 - 1) * sizes.count(n), (n, kept, afresh)


def run_2048(dp_train, tmp_path, *args):
    """As even_split_run with args added; (final JSON, --metrics rows)."""
    csv = tmp_path / "m.csv"
    p = run(dp_train, "--limit", "2048", "--epochs", "2", "--devices", "cpu:0,cpu:1", "--json",
            "--quiet", "--metrics", str(csv), *args)
    assert p.returncode == 0, p.stderr
    return final_json(p), metrics(csv)


def assert_same_training(a, b):
    """The same gradients in another order of summation: equal to the printed digits, but
    for a few of the 10,000 test images near a tie."""
    assert abs(a["test_loss"] - b["test_loss"]) <= 2e-4, (a, b)
    assert abs(a["test_accuracy"] - b["test_accuracy"]) <= 3e-4, (a, b)


def safetensors_header(path):
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8:8 + n])


def test_adam_trains_the_mlp_above_chance_and_checkpoints_its_moments(dp_train, tmp_path):
    ck = tmp_path / "adam.safetensors"
    j, rows = run_2048(dp_train, tmp_path, "--optimizer", "adam", "--checkpoint", str(ck))
    assert rows[1]["train_loss"] < rows[0]["train_loss"] < math.log(10), rows
    assert j["test_accuracy"] > 0.5, j  # chance is 0.1; SGD gets ~0.59 here
    header = safetensors_header(ck)
    assert header["__metadata__"]["optimizer"] == "adam"
    assert any(name.endswith("exp_avg_sq") for name in header), sorted(header)


def test_output_device_cpu_1_trains_as_the_default_output_on_cpu_0(dp_train, tmp_path,
                                                                     even_split_run):
    j, rows = run_2048(dp_train, tmp_path, "--output-device", "cpu:1")
    assert j["devices"] == ["cpu:0", "cpu:1"]
    assert rows[1]["train_loss"] < rows[0]["train_loss"]
    assert_same_training(j, even_split_run)


def test_chunk_sizes_128_128_are_the_default_split_and_give_identical_results(
        dp_train, tmp_path, even_split_run):
    j, _ = run_2048(dp_train, tmp_path, "--chunk-sizes", "128,128")
    assert (j["test_accuracy"], j["test_loss"]) == (even_split_run["test_accuracy"],
                                                    even_split_run["test_loss"])


def test_only_the_seeds_low_32_bits_count_as_in_torch_manual_seed(
        dp_train, tmp_path, even_split_run):
    # PyTorch's CPU generator takes the seed's low 32 bits, so 2^32 is seed 0 again, for the
    # initial weights and for the shuffling; --help says so.
    j, _ = run_2048(dp_train, tmp_path, "--seed", str(2**32))
    assert (j["test_accuracy"], j["test_loss"]) == (even_split_run["test_accuracy"],
                                                    even_split_run["test_loss"])
    assert "low 32 bits" in run(dp_train, "--help").stdout


def test_chunk_sizes_192_64_train_as_the_even_split_does(dp_train, tmp_path, even_split_run):
    # The loss is the mean over the gathered batch, so the gradient does not depend on the
    # split; the test set (batches of 1,000) is split evenly whatever --chunk-sizes says.
    j, rows = run_2048(dp_train, tmp_path, "--chunk-sizes", "192,64")
    assert rows[1]["train_loss"] < rows[0]["train_loss"]
    assert j["test_accuracy"] > 0.5, j
    assert_same_training(j, even_split_run)


def test_momentum_0_is_accepted_and_changes_the_training(dp_train, tmp_path, even_split_run):
    j, rows = run_2048(dp_train, tmp_path, "--momentum", "0")
    assert rows[1]["train_loss"] < rows[0]["train_loss"] < math.log(10), rows
    assert j["test_accuracy"] > 0.3, j
    # Plain SGD takes smaller steps than with momentum 0.9: after 16 of them it is behind.
    assert j["test_loss"] > even_split_run["test_loss"] + 0.1, (j, even_split_run)


def test_help_exits_0_with_a_usage_on_stdout_naming_every_option(dp_train):
    p = run(dp_train, "--help")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    assert p.stdout.startswith("usage: dp-train"), p.stdout
    listed = re.findall(r"^  (--[a-z-]+)", p.stdout, re.MULTILINE)
    assert set(listed) >= {
        "--model", "--epochs", "--batch", "--lr", "--momentum", "--optimizer", "--seed",
        "--devices", "--output-device", "--chunk-sizes", "--limit", "--data", "--checkpoint",
        "--resume", "--eval-only", "--metrics", "--plot", "--json", "--quiet", "--help"}, listed
    for option, default in (("--model", "default mlp"), ("--epochs", "default 5"),
                            ("--batch", "default 256"), ("--devices", "default all")):
        line = next(l for l in p.stdout.splitlines() if l.startswith(f"  {option} "))
        assert default in line, line


SOURCES = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "train")


def exit_codes_in_the_sources():
    """Every exit code dp-train's sources can produce: the EXIT_* constants, exit(N) and
    exit_code = N."""
    codes = {0}
    for name in os.listdir(SOURCES):
        if name.endswith((".c", ".h")):
            with open(os.path.join(SOURCES, name)) as f:
                text = f.read()
            codes |= {int(c) for c in re.findall(r"#define EXIT_\w+ (\d+)", text)}
            codes |= {int(c) for c in re.findall(r"\bexit\((\d+)\)", text)}
            codes |= {int(c) for c in re.findall(r"\bexit_code = (\d+);", text)}
    return codes


def test_help_lists_every_exit_code_the_program_uses(dp_train):
    p = run(dp_train, "--help")
    assert p.returncode == 0, p.stderr
    section = p.stdout.split("Exit codes:\n", 1)
    assert len(section) == 2, p.stdout
    listed = [int(m) for m in re.findall(r"^  (\d+)  ", section[1], re.MULTILINE)]
    assert listed == [0, 1, 2, 130], section[1]
    assert set(listed) == exit_codes_in_the_sources(), (listed, exit_codes_in_the_sources())
    assert "Ctrl-C" in section[1] and "bad input" in section[1], section[1]


def damaged_header(original, tmp_path, damage):
    """A copy of checkpoint `original` with its header damaged; (path, expected message)."""
    raw = bytearray(original.read_bytes())
    (n,) = struct.unpack("<Q", raw[:8])
    bad = tmp_path / "bad.safetensors"
    if damage == "a byte that is not JSON":
        at = raw.index(b'"dtype"', 8) + len(b'"dtype"')  # the colon after a key
        raw[at] = ord("#")
        expected = (f"the header is not valid JSON at byte {at} of the file: unexpected '#' "
                    f"(the header is bytes 8 to {8 + n - 1})")
    else:  # the length says the header ends 40 bytes early, inside the JSON
        raw[:8] = struct.pack("<Q", n - 40)
        expected = (f"the header is not valid JSON: its {n - 40} bytes end inside a value "
                    "(the header cut short, or a header length too small)")
    bad.write_bytes(bytes(raw))
    return bad, expected


@pytest.mark.parametrize("option,prefix", [("--resume", "cannot resume from"),
                                           ("--eval-only", "cannot use --eval-only")])
@pytest.mark.parametrize("damage", ["a byte that is not JSON", "a header length too short"])
def test_a_checkpoint_header_that_is_not_json_is_named_with_where_it_breaks(
        dp_train, tmp_path, mlp_checkpoint, option, prefix, damage):
    # The JSON library's own text came through: "[json.exception.parse_error.101] parse
    # error at line 1, column 180: syntax error while parsing object separator ...".
    bad, expected = damaged_header(mlp_checkpoint, tmp_path, damage)
    p = run(dp_train, "--limit", "512", "--epochs", "2", option, str(bad))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert error_lines(p) == [f'dp-train: {prefix} {bad}: "{bad}": {expected}'], p.stderr
    assert "json.exception" not in p.stderr and "parse error" not in p.stderr, p.stderr


@pytest.mark.parametrize("args,needle", [
    (["--batch", "0"], "--batch = \"0\""),
    (["--epochs", "x"], "--epochs = \"x\""),
    (["--model", "resnet"], "--model = \"resnet\""),
    (["--devices", "cpu:9"], "cpu:9 does not exist"),
    (["--devices", "gpu:0"], "\"gpu:0\" is not a device"),
    (["--devices", "cpu: 1"], "\"cpu: 1\" is not a device"),
    (["--devices", "cpu:+1"], "\"cpu:+1\" is not a device"),
    (["--chunk-sizes", "100,100"], "--chunk-sizes sum to 200"),
    (["--data", "/nonexistent/dir"], "/nonexistent/dir/train-images-idx3-ubyte.gz"),
    (["--resume", "/nonexistent/ck.safetensors"], "/nonexistent/ck.safetensors"),
    (["--resume", "a.st", "--eval-only", "b.st"], "--resume and --eval-only exclude each other"),
    (["--eval-only", "/nonexistent/ck.safetensors"], "/nonexistent/ck.safetensors"),
    (["--frobnicate"], "unknown option"),
    (["--optimizer", "adam", "--momentum", "0.5"],
     "--momentum applies to --optimizer sgd only, not adam"),
    (["-qx"], "unknown option \"-q\""),  # a bundle names its letter, not the argument before
    (["--metrics", "/nonexistent/m.csv"], "cannot write --metrics file /nonexistent/m.csv"),
    (["--plot", "/nonexistent/p.svg"], "cannot write --plot file /nonexistent/p.svg"),
    (["--checkpoint", "/nonexistent/c.st"], "cannot write --checkpoint file /nonexistent/c.st"),
    (["--checkpoint", ""], "--checkpoint needs a file name"),
    (["--metrics", ""], "--metrics needs a file name"),
    (["--plot", "/tmp"], "cannot write --plot file /tmp: it is a directory"),
    (["--checkpoint", "/tmp"], "cannot write --checkpoint file /tmp: it is a directory"),
    (["--eval-only", "e.st", "--metrics", "m.csv"],
     "--metrics and --eval-only exclude each other: --eval-only writes no file"),
    (["--batch", " 256"], "--batch = \" 256\""),  # strtoll alone skips the blank
    (["--lr", "+0.1"], "--lr = \"+0.1\""),
    # Not "not a number": infinities, numbers past a double's range and NaN are numbers.
    (["--lr", "inf"], "--lr = \"inf\" is not finite: it must be a finite number >= 0"),
    (["--lr", "1e999"], "--lr = \"1e999\" is not finite"),
    (["--lr", "-inf"], "--lr = \"-inf\" is not finite"),
    (["--momentum", "nan"], "--momentum = \"nan\" is not finite"),
    (["--lr", "infinite"], "--lr = \"infinite\" is not a number >= 0"),
    (["--precision", "fp16"], "--precision = \"fp16\": expected fp32 or bf16"),
])
def test_bad_input_gives_one_line_naming_the_problem_and_exit_2(dp_train, args, needle):
    p = run(dp_train, "--limit", "512", "--epochs", "1", *args)
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = error_lines(p)
    assert len(lines) == 1, p.stderr
    assert needle in lines[0], lines[0]


def test_unwritable_outputs_are_reported_before_training_not_after_an_epoch(dp_train):
    start = time.time()
    p = run(dp_train, "--epochs", "3", "--metrics", "/nonexistent/m.csv")
    assert p.returncode == 2 and "cannot write --metrics" in p.stderr, p.stderr
    assert "epoch" not in p.stdout and time.time() - start < 5, p.stdout


def test_outputs_through_a_symbolic_link_write_the_file_it_names(dp_train, tmp_path):
    # The link stays a link (a temporary file beside the file it names is renamed over
    # that file), for dp-train's own files and for the library's checkpoint alike.
    names = {"--metrics": "m.csv", "--plot": "p.svg", "--checkpoint": "c.st"}
    args = []
    for option, name in names.items():
        (tmp_path / ("real-" + name)).write_text("old")
        (tmp_path / name).symlink_to(tmp_path / ("real-" + name))
        args += [option, str(tmp_path / name)]
    p = run(dp_train, "--limit", "512", "--epochs", "1", "--quiet", *args)
    assert p.returncode == 0, p.stderr
    for name in names.values():
        assert (tmp_path / name).is_symlink(), name
        assert (tmp_path / ("real-" + name)).read_bytes() != b"old", name
    assert (tmp_path / "real-m.csv").read_text().startswith("epoch,train_loss")
    assert sorted(f.name for f in tmp_path.iterdir()) == sorted(
        list(names.values()) + ["real-" + n for n in names.values()])  # no temporary left


def test_outputs_to_a_fifo_are_written_through_it_and_leave_it_a_fifo(dp_train, tmp_path):
    # A FIFO (or a device such as /dev/null) cannot be replaced by a rename: dp-train and
    # the library write to it directly. A reader on each FIFO collects what arrives.
    fifos = {option: tmp_path / name for option, name in
             (("--metrics", "m.fifo"), ("--plot", "p.fifo"), ("--checkpoint", "c.fifo"))}
    received = {}

    def read_all(option, path):
        with open(path, "rb") as f:  # waits for the writer
            received[option] = f.read()

    readers = []
    for option, path in fifos.items():
        os.mkfifo(path)
        readers.append(threading.Thread(target=read_all, args=(option, path), daemon=True))
        readers[-1].start()
    args = [a for option, path in fifos.items() for a in (option, str(path))]
    p = run(dp_train, "--limit", "512", "--epochs", "1", "--quiet", *args)
    assert p.returncode == 0, p.stderr
    for t in readers:
        t.join(timeout=30)
    for option, path in fifos.items():
        assert stat.S_ISFIFO(os.lstat(path).st_mode), f"{option}: {path} is no longer a FIFO"
    assert received["--metrics"].startswith(b"epoch,train_loss"), received["--metrics"][:80]
    assert received["--plot"].startswith(b"<svg"), received["--plot"][:80]
    header_len = struct.unpack("<Q", received["--checkpoint"][:8])[0]
    assert b'"format"' in received["--checkpoint"][8:8 + header_len]


def test_resume_with_a_fifo_for_metrics_writes_through_it_without_reading_it(dp_train,
                                                                           tmp_path):
    # A FIFO has no earlier history to keep: opening it to read one would wait for a
    # writer that never comes (dp-train hung there).
    ck = tmp_path / "c.st"
    p = run(dp_train, "--limit", "256", "--epochs", "1", "--quiet", "--checkpoint", str(ck))
    assert p.returncode == 0, p.stderr
    fifo = tmp_path / "m.fifo"
    os.mkfifo(fifo)
    received = []

    def read_all():
        with open(fifo, "rb") as f:
            received.append(f.read())

    reader = threading.Thread(target=read_all, daemon=True)
    reader.start()
    p = run(dp_train, "--resume", str(ck), "--epochs", "2", "--quiet", "--metrics", str(fifo),
            timeout=60)
    reader.join(timeout=30)
    assert p.returncode == 0, p.stderr
    assert received and received[0].startswith(b"epoch,train_loss"), received
    assert received[0].decode().splitlines()[-1].startswith("2,")


def poison(path, name):
    """Sets the first element of tensor `name` in the safetensors file at path to NaN."""
    b = bytearray(path.read_bytes())
    n = struct.unpack("<Q", b[:8])[0]
    start = 8 + n + json.loads(b[8:8 + n])[name]["data_offsets"][0]
    b[start:start + 4] = struct.pack("<f", float("nan"))
    path.write_bytes(bytes(b))


def test_a_checkpoint_with_a_nan_parameter_exits_1_without_a_nan_report(dp_train, tmp_path):
    # Evaluation alone (--eval-only, or --resume of a checkpoint at --epochs already) checks
    # the test loss as training does: exit 1 and a line, never "test_loss": nan.
    ck = tmp_path / "c.st"
    p = run(dp_train, "--limit", "256", "--epochs", "1", "--quiet", "--checkpoint", str(ck))
    assert p.returncode == 0, p.stderr
    poison(ck, "4.bias")
    csv = tmp_path / "m.csv"
    for args, option in ((["--eval-only", str(ck)], "--eval-only"),
                         (["--resume", str(ck), "--epochs", "1", "--metrics", str(csv)],
                          "--resume")):
        p = run(dp_train, *args, "--json", "--quiet")
        assert p.returncode == 1, (args, p.returncode, p.stdout, p.stderr)
        assert "nan" not in p.stdout.lower(), p.stdout
        assert f"the test loss of {option} {ck} is" in p.stderr, p.stderr
    assert not csv.exists()


def test_a_standard_output_that_cannot_be_written_is_an_error(dp_train):
    with open("/dev/full", "w") as full:
        p = subprocess.run([dp_train, "--limit", "256", "--epochs", "1", "--json", "--quiet"],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=300,
                           env=dict(os.environ, DP_CPU_DEVICES="2"))
    assert p.returncode == 2, p.stderr
    assert "dp-train: cannot write the standard output: No space left on device" in p.stderr


def idx_file(path, magic, dims, payload):
    path.write_bytes(gzip.compress(struct.pack(">I", magic) +
                                   b"".join(struct.pack(">I", d) for d in dims) + payload))


@pytest.mark.parametrize("images,labels,needle", [
    ((0, 28, 28), (0,), "t10k-images-idx3-ubyte.gz: holds no images"),
    ((3, 32, 32), (3,), "t10k-images-idx3-ubyte.gz: expected N x 28 x 28 images, got 3 x 32 x 32"),
])
def test_a_test_set_without_usable_images_is_rejected(dp_train, tmp_path, images, labels, needle):
    d = tmp_path / "data"
    d.mkdir()
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"):
        os.symlink(os.path.join(DATA, name), d / name)
    n = images[0] * images[1] * images[2]
    idx_file(d / "t10k-images-idx3-ubyte.gz", 0x803, images, b"\0" * n)
    idx_file(d / "t10k-labels-idx1-ubyte.gz", 0x801, labels, b"\0" * labels[0])
    p = run(dp_train, "--data", str(d), "--limit", "512", "--epochs", "1", "--json")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    assert needle in error_lines(p)[0], p.stderr


def test_a_gzip_file_cut_short_is_rejected_even_with_its_data_whole(dp_train, tmp_path):
    # Only the gzip trailer (the checksum and length) is missing: zlib hands over every data
    # byte, so a reader that took the end of the input for the end of the file read on.
    d = tmp_path / "data"
    d.mkdir()
    for name in ("train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                 "t10k-images-idx3-ubyte.gz"):
        os.symlink(os.path.join(DATA, name), d / name)
    whole = gzip.open(os.path.join(DATA, "t10k-labels-idx1-ubyte.gz")).read()
    (d / "t10k-labels-idx1-ubyte.gz").write_bytes(gzip.compress(whole)[:-8])
    p = run(dp_train, "--data", str(d), "--limit", "512", "--epochs", "1", "--json")
    assert p.returncode == 2, (p.returncode, p.stdout, p.stderr)
    lines = error_lines(p)
    assert len(lines) == 1 and "t10k-labels-idx1-ubyte.gz is truncated" in lines[0], p.stderr


def test_a_diverged_model_exits_1_instead_of_writing_nan(dp_train, tmp_path):
    csv, svg = tmp_path / "m.csv", tmp_path / "p.svg"
    p = run(dp_train, "--limit", "256", "--epochs", "1", "--lr", "1e20", "--json", "--quiet",
            "--metrics", str(csv), "--plot", str(svg))
    assert p.returncode == 1, (p.returncode, p.stdout)
    assert "try a smaller --lr" in p.stderr, p.stderr
    assert "nan" not in p.stdout.lower() and not csv.exists() and not svg.exists()


@pytest.mark.parametrize("devices,batch", [("cpu:0", "256"), ("cpu:0,cpu:1", "1")])
def test_one_device_in_use_with_another_output_device_trains(dp_train, tmp_path, devices, batch):
    # A single device runs the module alone, without a gather, so the logits stay on cpu:0,
    # not on the output device cpu:1; a batch of one row over two devices (one chunk) is
    # gathered to cpu:1. The labels must meet the logits either way.
    p = run(dp_train, "--limit", "2048" if batch == "256" else "64", "--epochs", "1",
            "--batch", batch, "--devices", devices, "--output-device", "cpu:1", "--json",
            "--quiet")
    assert p.returncode == 0, p.stderr
    j = final_json(p)
    assert math.isfinite(j["test_loss"]) and j["batch"] == int(batch)
    if batch == "256":  # a batch of one at lr 0.1 trains, but not to any accuracy
        assert j["test_accuracy"] > 0.3


def test_a_resumed_run_continues_the_metrics_and_plot_history(dp_train, tmp_path):
    ck, csv, svg = tmp_path / "c.st", tmp_path / "m.csv", tmp_path / "p.svg"
    files = ["--checkpoint", str(ck), "--metrics", str(csv), "--plot", str(svg)]
    p1 = run(dp_train, "--limit", "2048", "--epochs", "1", *files, "--quiet")
    assert p1.returncode == 0, p1.stderr
    first = metrics(csv)
    p2 = run(dp_train, "--limit", "2048", "--epochs", "2", "--resume", str(ck), *files,
             "--seed", "7")
    assert p2.returncode == 0, p2.stderr
    rows = metrics(csv)
    assert [r["epoch"] for r in rows] == [1, 2] and rows[0] == first[0], rows
    assert svg.read_text().count("<circle") == 3 * 2  # three series, two epochs each
    assert "trained with --seed 0, this run continues with --seed 7" in p2.stderr, p2.stderr


def test_epochs_0_is_refused_naming_the_value_and_writes_nothing(dp_train, tmp_path):
    # It trained nothing and exited 0 without a word.
    csv, svg = tmp_path / "m.csv", tmp_path / "p.svg"
    p = run(dp_train, "--limit", "512", "--epochs", "0", "--metrics", str(csv), "--plot",
            str(svg), "--json", "--quiet")
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert error_lines(p) == [
        'dp-train: --epochs = "0" is not an integer between 1 and 100000'], p.stderr
    assert p.stdout == "" and not csv.exists() and not svg.exists()


def test_a_resume_with_no_epoch_left_still_writes_the_metrics_and_plot_files(
        dp_train, tmp_path, mlp_checkpoint):
    # mlp_checkpoint is at epoch 1: resuming it with --epochs 1 trains nothing.
    csv, svg = tmp_path / "m.csv", tmp_path / "p.svg"
    p = run(dp_train, "--epochs", "1", "--resume", str(mlp_checkpoint), "--metrics",
            str(csv), "--plot", str(svg), "--json", "--quiet")
    assert p.returncode == 0, p.stderr
    assert "no epoch to train" in p.stderr, p.stderr
    assert metrics(csv) == [] and svg.read_text().rstrip().endswith("</svg>")


def test_corrupt_data_files_are_rejected_with_exit_2(dp_train, tmp_path):
    bad_cases = {
        "not gzip at all": b"hello",
        "truncated": gzip.compress(struct.pack(">I", 0x801) + struct.pack(">I", 60000) + b"\0" * 10),
        "wrong magic": gzip.compress(b"\x01\x02\x08\x01" + struct.pack(">I", 3) + b"\0\0\0"),
        "label 42": gzip.compress(struct.pack(">I", 0x801) + struct.pack(">I", 60000) +
                                  b"\x2a" * 60000),
    }
    for what, payload in bad_cases.items():
        d = tmp_path / what.replace(" ", "_")
        d.mkdir()
        for name in os.listdir(DATA):
            os.symlink(os.path.join(DATA, name), d / name)
        os.remove(d / "train-labels-idx1-ubyte.gz")
        (d / "train-labels-idx1-ubyte.gz").write_bytes(payload)
        p = run(dp_train, "--data", str(d), "--epochs", "1")
        assert p.returncode == 2, (what, p.returncode, p.stderr)
        lines = error_lines(p)
        assert len(lines) == 1, (what, p.stderr)
        assert f"{d}/train-labels-idx1-ubyte.gz" in lines[0], (what, lines)


def test_a_checkpoint_of_another_model_is_rejected(dp_train, tmp_path):
    ck = tmp_path / "cnn.safetensors"
    p = run(dp_train, "--model", "cnn", "--limit", "256", "--epochs", "1", "--checkpoint",
            str(ck), "--quiet")
    assert p.returncode == 0, p.stderr
    for option in ("--resume", "--eval-only"):
        r = run(dp_train, "--model", "mlp", "--limit", "512", "--epochs", "2", option, str(ck))
        assert r.returncode == 2, (option, r.returncode, r.stderr)
        assert error_lines(r) == [
            f"dp-train: {option} {ck}: the checkpoint is of model cnn, not mlp"], r.stderr


@pytest.fixture(scope="module")
def mlp_checkpoint(dp_train, tmp_path_factory):
    ck = tmp_path_factory.mktemp("ck") / "mlp.safetensors"
    p = run(dp_train, "--limit", "512", "--epochs", "1", "--checkpoint", str(ck), "--quiet")
    assert p.returncode == 0, p.stderr
    return ck


@pytest.mark.parametrize("option", ["--resume", "--eval-only"])
@pytest.mark.parametrize("damage", ["random bytes", "truncated"])
def test_an_unreadable_checkpoint_gives_one_line_naming_the_file_and_exit_2(
        dp_train, tmp_path, mlp_checkpoint, option, damage):
    bad = tmp_path / "bad.safetensors"
    if damage == "random bytes":
        bad.write_bytes(random.Random(5).randbytes(4096))
    else:  # the header intact, half of the tensors' bytes gone
        raw = mlp_checkpoint.read_bytes()
        bad.write_bytes(raw[:len(raw) // 2])
    p = run(dp_train, "--limit", "512", "--epochs", "2", option, str(bad))
    assert p.returncode == 2, (p.returncode, p.stderr)
    lines = error_lines(p)
    assert len(lines) == 1, p.stderr
    assert str(bad) in lines[0], lines[0]
    if damage == "truncated":
        assert "truncated" in lines[0], lines[0]


def test_ctrl_c_before_the_first_checkpoint_says_none_was_written(dp_train, tmp_path):
    ck = tmp_path / "ck.safetensors"
    proc = start(dp_train, "--model", "cnn", "--epochs", "3", "--checkpoint", str(ck))
    deadline = time.time() + 60
    line = ""
    while "epoch 1/3" not in line and time.time() < deadline:  # training has begun
        line = proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted in epoch 1; no checkpoint was written yet" in err, err
    assert not ck.exists()


def test_ctrl_c_keeps_the_last_complete_checkpoint(dp_train, tmp_path):
    ck = tmp_path / "ck.safetensors"
    proc = start(dp_train, "--model", "cnn", "--limit", "2048", "--epochs", "50",
                 "--checkpoint", str(ck), "--quiet")
    deadline = time.time() + 120
    while not ck.exists() and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    assert ck.exists(), "no checkpoint was written"
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert re.search(rf"interrupted in epoch \d+; {re.escape(str(ck))} holds epoch \d+, intact", err), err
    assert [f.name for f in tmp_path.iterdir()] == ["ck.safetensors"]  # no temporary left
    e = run(dp_train, "--model", "cnn", "--eval-only", str(ck), "--quiet", "--json")
    assert e.returncode == 0, e.stderr


def test_resuming_without_limit_trains_on_the_checkpoints_samples(dp_train, tmp_path):
    # The samples (--limit) set each epoch's shuffle: a resumed run that left --limit off
    # trained on all 60,000 and no longer continued the first run.
    ck = tmp_path / "ck.safetensors"
    p1 = run(dp_train, "--limit", "1024", "--epochs", "1", "--checkpoint", str(ck), "--quiet")
    assert p1.returncode == 0, p1.stderr
    p2 = run(dp_train, "--epochs", "2", "--resume", str(ck))
    assert p2.returncode == 0, p2.stderr
    assert "1024 training samples" in p2.stderr, p2.stderr
    assert "warning" not in p2.stderr, p2.stderr


@pytest.mark.parametrize("a,b", [("--checkpoint", "--metrics"), ("--checkpoint", "--plot"),
                                 ("--metrics", "--plot"), ("--metrics", "--resume")])
def test_two_file_options_naming_one_file_are_refused(dp_train, tmp_path, a, b):
    # They would overwrite each other: a checkpoint replaced by a CSV, then unreadable.
    same = tmp_path / "same"
    if b == "--resume":
        ck = run(dp_train, "--limit", "512", "--epochs", "1", "--checkpoint", str(same), "--quiet")
        assert ck.returncode == 0, ck.stderr
    before = same.read_bytes() if same.exists() else None
    p = run(dp_train, "--limit", "512", "--epochs", "1", a, str(same), b, str(same))
    assert p.returncode == 2, (p.returncode, p.stderr)
    assert error_lines(p) == [f"dp-train: {a} and {b} name the same file, {same}"], p.stderr
    assert (same.read_bytes() if same.exists() else None) == before
    if b != "--resume":  # one new file spelled two ways
        (tmp_path / "sub").mkdir()
        p = run(dp_train, "--limit", "512", "--epochs", "1", a, str(tmp_path / "new"), b,
                str(tmp_path / "sub" / ".." / "new"))
        assert p.returncode == 2, (p.returncode, p.stderr)
        assert not (tmp_path / "new").exists()


def test_a_metrics_history_longer_than_the_run_is_cut_not_overrun(dp_train, tmp_path):
    # 50 rows of "epoch 1" before a resume: the history held them all and the epochs after
    # it were written past the end of its array (a crash, or ASan's report). Now it holds
    # at most one row per epoch before the resumed one, in order.
    ck, csv = tmp_path / "ck.safetensors", tmp_path / "m.csv"
    p1 = run(dp_train, "--limit", "512", "--epochs", "2", "--checkpoint", str(ck), "--metrics",
             str(csv), "--quiet")
    assert p1.returncode == 0, p1.stderr
    header, row = csv.read_text().splitlines()[:2]
    csv.write_text("\n".join([header] + [row] * 50) + "\n")
    p2 = run(dp_train, "--limit", "512", "--epochs", "4", "--resume", str(ck), "--metrics",
             str(csv))
    assert p2.returncode == 0, (p2.returncode, p2.stderr)
    assert "row 2 has epoch 1 after epoch 1; its history ends before it" in p2.stderr, p2.stderr
    epochs = [int(line.split(",")[0]) for line in csv.read_text().splitlines()[1:]]
    assert epochs == [1, 3, 4]


def test_the_start_up_write_check_leaves_an_existing_tmp_file_alone(dp_train, tmp_path):
    precious = tmp_path / "m.csv.tmp"
    precious.write_text("precious")
    p = run(dp_train, "--limit", "512", "--epochs", "1", "--metrics", str(tmp_path / "m.csv"),
            "--quiet")
    assert p.returncode == 0, p.stderr
    assert precious.read_text() == "precious"
    assert sorted(f.name for f in tmp_path.iterdir()) == ["m.csv", "m.csv.tmp"]


def test_ctrl_c_during_the_last_epochs_evaluation_exits_130(dp_train, tmp_path):
    # The flag was read before each batch only: Ctrl-C while the last epoch's test set was
    # evaluated (or its checkpoint written) let the run finish and exit 0.
    ck = tmp_path / "ck.safetensors"
    proc = start(dp_train, "--model", "cnn", "--limit", "256", "--epochs", "1",
                 "--checkpoint", str(ck), "--json")
    deadline = time.time() + 60
    line = ""
    while "1/1 batches" not in line and time.time() < deadline:  # the evaluation starts
        line = proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, (proc.returncode, err)
    assert "interrupted after epoch 1" in err, err
    assert "test_accuracy" not in out  # no final JSON line for an interrupted run


def y_ticks(svg_text):
    """The y-axis labels of each panel of a --plot file, bottom to top, as text."""
    panels = {}
    for x, y, label in re.findall(
            r"<text x='(\d+)' y='([0-9.]+)' font-size='11' text-anchor='end'>([^<]*)</text>",
            svg_text):
        panels.setdefault(x, []).append((-float(y), label))
    return [[label for _, label in sorted(ticks)]
            for _, ticks in sorted(panels.items(), key=lambda item: int(item[0]))]


def assert_round_ticks(labels, unit=""):
    """Evenly spaced labels, each a multiple of a step of 1, 2 or 5 times a power of ten,
    written with no more decimals than the step needs."""
    assert len(labels) >= 3, labels
    assert all(l.endswith(unit) for l in labels), labels
    values = [float(l[:len(l) - len(unit)]) for l in labels]
    step = values[1] - values[0]
    exponent = math.floor(math.log10(step) + 1e-9)
    mantissa = step / 10 ** exponent
    assert min(abs(mantissa - m) for m in (1, 2, 5)) < 1e-6, (labels, step)
    for a, b in zip(values, values[1:]):
        assert abs(b - a - step) < step * 1e-6, labels
    for v in values:
        assert abs(v / step - round(v / step)) < 1e-6, (labels, v)
    decimals = max(0, -exponent)
    for l in labels:
        text = l[:len(l) - len(unit)]
        assert len(text.partition(".")[2]) == decimals, (labels, l)
    return values


def test_the_plots_y_axes_have_round_ticks_that_span_the_data(dp_train, tmp_path):
    # Ticks fell at a quarter of the padded range: 1.922, 1.567 ... instead of 1.5, 2.0.
    svg, csv = tmp_path / "p.svg", tmp_path / "m.csv"
    p = run(dp_train, "--limit", "2048", "--epochs", "3", "--plot", str(svg), "--metrics",
            str(csv), "--quiet")
    assert p.returncode == 0, p.stderr
    loss_labels, accuracy_labels = y_ticks(svg.read_text())
    loss = assert_round_ticks(loss_labels)
    accuracy = assert_round_ticks(accuracy_labels, "%")
    rows = metrics(csv)
    losses = [r[k] for r in rows for k in ("train_loss", "test_loss")]
    assert loss[0] <= min(losses) and max(losses) <= loss[-1], (loss_labels, losses)
    accuracies = [100 * r["test_accuracy"] for r in rows]
    assert accuracy[0] <= min(accuracies) and max(accuracies) <= accuracy[-1], (
        accuracy_labels, accuracies)


def test_a_plot_with_no_epoch_has_a_plain_round_axis(dp_train, tmp_path, mlp_checkpoint):
    svg = tmp_path / "p.svg"
    p = run(dp_train, "--epochs", "1", "--resume", str(mlp_checkpoint), "--plot", str(svg),
            "--quiet")
    assert p.returncode == 0, p.stderr
    loss_labels, accuracy_labels = y_ticks(svg.read_text())
    assert loss_labels == ["0.0", "0.5", "1.0"], loss_labels
    assert accuracy_labels == ["0%", "50%", "100%"], accuracy_labels


def test_on_a_terminal_the_divergence_message_starts_its_own_line(dp_train):
    # A CNN at lr 1e20 diverges a few batches in, with the progress bar's line open.
    rc, out, terminal = run_on_a_terminal(dp_train, "--model", "cnn", "--limit", "8192",
                                          "--epochs", "1", "--lr", "1e20")
    assert rc == 1, terminal
    lines = terminal.replace("\r\n", "\n").split("\n")
    assert any(l.startswith("dp-train: the loss became") for l in lines), terminal
