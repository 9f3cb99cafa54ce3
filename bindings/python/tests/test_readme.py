"""The READMEs' Python examples run as written (the binding's and the project's)."""
import os
import pathlib
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"
PROJECT_README = pathlib.Path(__file__).resolve().parents[3] / "README.md"


def python_block(text, section=None):
    """The first ```python block of text (after the heading `section`, if given)."""
    if section is not None:
        text = text[text.index(section):]
    start = text.index("```python\n") + len("```python\n")
    return text[start:text.index("\n```", start)]


def run_python_block(readme, script, section=None):
    """Runs the first ```python block of `readme` (after `section`) as the file `script`;
    asserts it exits 0."""
    script.write_text(python_block(readme.read_text(), section))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    return run


def test_readme_example_runs_as_written(tmp_path):
    run = run_python_block(README, tmp_path / "example.py")
    assert "training accuracy" in run.stdout
    accuracy = float(run.stdout.split("training accuracy")[1])
    assert accuracy > 0.9, run.stdout


def test_project_readme_example_runs_as_written_and_learns(tmp_path):
    run = run_python_block(PROJECT_README, tmp_path / "project_example.py")
    loss = float(run.stdout.split("final loss")[1])
    assert loss < 0.2, run.stdout  # the untrained loss is about ln 2 = 0.69


def test_readme_autocast_example_runs_as_written_and_learns(tmp_path):
    run = run_python_block(README, tmp_path / "autocast_example.py",
                           section="## bfloat16 and autocast")
    first = run.stdout.splitlines()[0].split()
    assert first[:3] == ["dataparallel.bfloat16", "dataparallel.float32",
                         "dataparallel.float32"], run.stdout
    loss = float(run.stdout.split("final loss")[1].split()[0])
    assert loss < 0.2, run.stdout  # XOR of the signs: ln 2 = 0.69 untrained
