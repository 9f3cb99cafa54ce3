"""Runs the ```python block of the README's "Distributed training" section as written, on
each rank of the job that started this (ctest: mpirun -np 2), and checks that it learned:
it prints each rank's final loss, which must be below 0.3 (about ln 2 = 0.69 untrained)."""
import contextlib
import io
import pathlib
import sys

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"

text = README.read_text()
start = text.index("```python\n", text.index("## Distributed training")) + len("```python\n")
code = text[start:text.index("\n```", start)]
out = io.StringIO()
with contextlib.redirect_stdout(out):
    exec(compile(code, "ddp_example.py", "exec"), {"__name__": "__main__"})
printed = out.getvalue()
print(printed, end="")
loss = float(printed.split("final loss")[1])
if not loss < 0.3:
    sys.exit(f"the README's distributed example did not learn: {printed!r}")
