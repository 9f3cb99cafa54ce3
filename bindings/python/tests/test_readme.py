"""The README's example runs as written."""
import os
import pathlib
import subprocess
import sys

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def python_block(text):
    start = text.index("```python\n") + len("```python\n")
    return text[start:text.index("\n```", start)]


def test_readme_example_runs_as_written(tmp_path):
    script = tmp_path / "example.py"
    script.write_text(python_block(README.read_text()))
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                         timeout=120, env=dict(os.environ))
    assert run.returncode == 0, run.stderr
    assert "training accuracy" in run.stdout
    accuracy = float(run.stdout.split("training accuracy")[1])
    assert accuracy > 0.9, run.stdout
