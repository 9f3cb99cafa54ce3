"""The autocast op table of docs/autocast.md is what the binding does: every row's op runs
under dp.autocast() in the dtype the row names, and every op the binding has that no row
names runs in its input's dtype. A row naming an op the binding cannot run fails, and so
does an op of dataparallel.ops that this file has no runner for: the docs, the library
and this test cannot drift apart.

Rows: `| `op` | bf16 | ...`, `| `op` | fp32 | ...` or `| `op` | promote | ...` (the first
column the op's name in backticks, the second its autocast class; further columns are
free)."""
import pathlib
import re

import numpy as np
import pytest

import dataparallel as dp

DOC = pathlib.Path(__file__).resolve().parents[3] / "docs" / "autocast.md"
ROW = re.compile(r"^\|\s*`([A-Za-z0-9_]+)`\s*\|\s*(bf16|fp32|promote)\s*\|")
CLASSES = ("bf16", "fp32", "promote")


def table():
    """{op: class} from the doc's rows; an op listed twice is an error."""
    rows = {}
    for line in DOC.read_text().splitlines():
        m = ROW.match(line.strip())
        if m:
            op, cls = m.groups()
            assert op not in rows, f"docs/autocast.md lists `{op}` twice"
            rows[op] = cls
    return rows


ROWS = table() if DOC.exists() else {}


def test_the_doc_has_an_op_table_with_every_class():
    assert DOC.exists(), f"{DOC} is missing: it holds the autocast op list this test checks"
    for cls in CLASSES:
        assert cls in ROWS.values(), f"docs/autocast.md has no `| \\`op\\` | {cls} |` row"


# ---- one runner per op: (ctx, dtype of the floating inputs) -> the op's output ----------
def _data(ctx, shape, dtype, seed=0, positive=False):
    a = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    if positive:
        a = np.abs(a) + 0.5
    return ctx.tensor(a, dtype=dtype)


def _labels(ctx, n, classes):
    return ctx.tensor(np.arange(n) % classes)


def _conv_relu_pool(ctx, dtype):
    # The library runs a Sequential's Conv2d, ReLU and pooling as one block
    # (conv2d_relu_pool2d): this is how the binding reaches that op.
    block = dp.Sequential(ctx, dp.Conv2d(ctx, 2, 3, 3, padding=1), dp.ReLU(ctx),
                          dp.MaxPool2d(ctx, 2))
    return block(_data(ctx, (2, 2, 6, 6), dtype))


def _batch_norm(ctx, dtype):
    # Parameters and statistics float32, as a BatchNorm layer keeps them.
    f32 = dp.float32
    return dp.batch_norm(_data(ctx, (4, 3), dtype), ctx.zeros(3), ctx.full(3, 1.0),
                         ctx.full(3, 1.0, dtype=f32), ctx.zeros(3, dtype=f32), training=True)


UNARY = {
    "linear": lambda ctx, dt: dp.linear(_data(ctx, (4, 5), dt), _data(ctx, (3, 5), dt, 1),
                                        _data(ctx, (3,), dt, 2)),
    "matmul": lambda ctx, dt: dp.matmul(_data(ctx, (4, 5), dt), _data(ctx, (5, 3), dt, 1)),
    "conv2d": lambda ctx, dt: dp.conv2d(_data(ctx, (1, 2, 5, 5), dt),
                                        _data(ctx, (3, 2, 3, 3), dt, 1),
                                        _data(ctx, (3,), dt, 2), padding=1),
    "conv2d_relu_pool2d": _conv_relu_pool,
    "softmax": lambda ctx, dt: dp.softmax(_data(ctx, (4, 5), dt), 1),
    "log_softmax": lambda ctx, dt: dp.log_softmax(_data(ctx, (4, 5), dt), 1),
    "cross_entropy": lambda ctx, dt: dp.cross_entropy(_data(ctx, (4, 5), dt), _labels(ctx, 4, 5)),
    "nll_loss": lambda ctx, dt: dp.nll_loss(_data(ctx, (4, 5), dt), _labels(ctx, 4, 5)),
    "mse_loss": lambda ctx, dt: dp.mse_loss(_data(ctx, (4, 5), dt), _data(ctx, (4, 5), dt, 1)),
    "sum": lambda ctx, dt: dp.sum(_data(ctx, (4, 5), dt)),
    "mean": lambda ctx, dt: dp.mean(_data(ctx, (4, 5), dt)),
    "batch_norm": _batch_norm,
    "neg": lambda ctx, dt: dp.neg(_data(ctx, (4,), dt)),
    "scale": lambda ctx, dt: dp.scale(_data(ctx, (4,), dt), 0.5),
    "add_scalar": lambda ctx, dt: dp.add_scalar(_data(ctx, (4,), dt), 0.5),
    "relu": lambda ctx, dt: dp.relu(_data(ctx, (4,), dt)),
    "gelu": lambda ctx, dt: dp.gelu(_data(ctx, (4,), dt)),
    "tanh": lambda ctx, dt: dp.tanh(_data(ctx, (4,), dt)),
    "sigmoid": lambda ctx, dt: dp.sigmoid(_data(ctx, (4,), dt)),
    "exp": lambda ctx, dt: dp.exp(_data(ctx, (4,), dt)),
    "log": lambda ctx, dt: dp.log(_data(ctx, (4,), dt, positive=True)),
    "max_pool2d": lambda ctx, dt: dp.max_pool2d(_data(ctx, (1, 2, 4, 4), dt), 2),
    "avg_pool2d": lambda ctx, dt: dp.avg_pool2d(_data(ctx, (1, 2, 4, 4), dt), 2),
    "dropout": lambda ctx, dt: dp.dropout(_data(ctx, (8,), dt), 0.5, seed=1),
    "embedding": lambda ctx, dt: dp.embedding(_labels(ctx, 3, 4), _data(ctx, (4, 2), dt)),
    "reshape": lambda ctx, dt: dp.reshape(_data(ctx, (2, 3), dt), (3, 2)),
    "flatten": lambda ctx, dt: dp.flatten(_data(ctx, (2, 3), dt)),
    "cat": lambda ctx, dt: dp.cat([_data(ctx, (2,), dt), _data(ctx, (3,), dt, 1)]),
    "split": lambda ctx, dt: dp.split(_data(ctx, (5,), dt), [2, 3])[1],
}
BINARY = {"add": dp.add, "sub": dp.sub, "mul": dp.mul, "div": dp.div}
NOT_FLOATING = {"argmax"}  # int64 indices whatever the input


def _run(op, ctx, dtype):
    if op in BINARY:
        return BINARY[op](_data(ctx, (4,), dtype), _data(ctx, (4,), dtype, 1, positive=True))
    return UNARY[op](ctx, dtype)


def test_every_op_of_the_binding_has_a_runner_here():
    missing = set(dp.ops.__all__) - set(UNARY) - set(BINARY) - NOT_FLOATING
    assert not missing, f"ops without a runner in this test: {sorted(missing)}"


@pytest.mark.parametrize("op", sorted(ROWS))
def test_listed_op_runs_in_the_dtype_the_doc_names(ctx, op):
    cls = ROWS[op]
    assert op in UNARY or op in BINARY, (
        f"docs/autocast.md lists `{op}` ({cls}), which the Python binding cannot run")
    with dp.autocast():
        if cls == "bf16":
            assert _run(op, ctx, dp.float32).dtype == dp.bfloat16
        elif cls == "fp32":
            assert _run(op, ctx, dp.float32).dtype == dp.float32
            assert _run(op, ctx, dp.bfloat16).dtype == dp.float32
        else:
            assert op in BINARY, f"`{op}` is listed as promote but takes one tensor"
            a16, a32 = _data(ctx, (4,), dp.bfloat16), _data(ctx, (4,), dp.float32, 1,
                                                            positive=True)
            assert BINARY[op](a16, a32).dtype == dp.float32
            assert BINARY[op](a32, a16).dtype == dp.float32
            assert BINARY[op](a16, a16).dtype == dp.bfloat16  # nothing to promote


# Without the doc's table nothing is known to be unlisted (the test above fails instead).
@pytest.mark.parametrize("op", sorted(set(UNARY) - set(ROWS)) if ROWS else [])
def test_unlisted_op_runs_in_its_inputs_dtype(ctx, op):
    with dp.autocast():
        for dtype in (dp.float32, dp.bfloat16):
            assert _run(op, ctx, dtype).dtype == dtype, f"{op} on {dtype.name} inputs"


@pytest.mark.parametrize("op", sorted(ROWS))
def test_listed_op_outside_autocast_keeps_float32(ctx, op):
    if op in UNARY or op in BINARY:
        assert _run(op, ctx, dp.float32).dtype == dp.float32


def test_promotion_needs_autocast(ctx):
    a16, a32 = _data(ctx, (4,), dp.bfloat16), _data(ctx, (4,), dp.float32)
    with pytest.raises(dp.DtypeMismatchError):
        dp.add(a16, a32)
