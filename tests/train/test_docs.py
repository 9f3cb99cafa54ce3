"""docs/dp-train.md and docs/models.md stay true: the options and exit codes dp-train has,
and a PyTorch snippet that loads its checkpoints, run as written.

Run by ctest with the other dp-train tests (tests/train.cmake)."""
import json
import os
import re
import runpy
import subprocess

import pytest

from reference import read_idx

DOCS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs")


def doc(name):
    with open(os.path.join(DOCS, name)) as f:
        return f.read()


def run(dp_train, *args, cwd=None):
    return subprocess.run([dp_train, *args], capture_output=True, text=True, timeout=300,
                          cwd=cwd, env=dict(os.environ, DP_CPU_DEVICES="2"))


def python_block(text):
    """The first ```python block of a markdown text."""
    start = text.index("```python\n") + len("```python\n")
    return text[start:text.index("\n```", start)]


def test_dp_train_md_documents_every_option_and_exit_code_of_help(dp_train):
    usage = run(dp_train, "--help").stdout
    options = re.findall(r"^  (--[a-z-]+)", usage, re.MULTILINE)
    codes = re.findall(r"^  (\d+)  ", usage.split("Exit codes:\n")[1], re.MULTILINE)
    text = doc("dp-train.md")
    # Each option has a row of the options table, each code one of the exit codes table.
    rows = set(re.findall(r"^\| `(--[a-z-]+)", text, re.MULTILINE))
    assert set(options) == rows, (sorted(set(options) - rows), sorted(rows - set(options)))
    documented = re.findall(r"^\| (\d+) \|", text, re.MULTILINE)
    assert documented == codes, (documented, codes)


@pytest.mark.parametrize("model,shape", [("mlp", (-1, 784)), ("cnn", (-1, 1, 28, 28))])
def test_the_models_md_snippet_loads_a_checkpoint_that_pytorch_evaluates_as_dp_train_does(
        dp_train, tmp_path, monkeypatch, model, shape):
    torch = pytest.importorskip("torch")
    p = run(dp_train, "--model", model, "--limit", "512", "--epochs", "1", "--checkpoint",
            "ck.safetensors", "--quiet", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    e = run(dp_train, "--eval-only", "ck.safetensors", "--json", "--quiet", cwd=tmp_path)
    assert e.returncode == 0, e.stderr
    ours = json.loads(e.stdout)

    snippet = tmp_path / "snippet.py"
    snippet.write_text(python_block(doc("models.md")))
    monkeypatch.chdir(tmp_path)  # the snippet reads ck.safetensors from where it runs
    loaded = runpy.run_path(str(snippet), run_name="__main__")
    net = loaded["model"]
    assert isinstance(net, torch.nn.Sequential) and not net.training
    x = torch.from_numpy(read_idx("t10k-images-idx3-ubyte.gz").astype("float32") / 255)
    y = torch.from_numpy(read_idx("t10k-labels-idx1-ubyte.gz").astype("int64"))
    with torch.no_grad():
        logits = net(x.reshape(shape))
    loss = torch.nn.functional.cross_entropy(logits, y).item()
    accuracy = (logits.argmax(1) == y).double().mean().item()
    # dp-train prints 4 decimals; a few of 10,000 near-ties may round the other way.
    assert abs(ours["test_loss"] - loss) < 2e-4, (ours["test_loss"], loss)
    assert abs(ours["test_accuracy"] - accuracy) <= 3e-4, (ours["test_accuracy"], accuracy)
