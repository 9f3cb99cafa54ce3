"""bfloat16 tensors in Python: creation and conversion (rounded to nearest even), NumPy's
two forms (ml_dtypes.bfloat16 values, or np.uint16 bits without ml_dtypes), the bits
helpers, borrowing, DLPack with PyTorch's torch.bfloat16, safetensors' BF16.

ctest runs this file once per NumPy form, and DP_TEST_BF16_NUMPY names the form the run
must get: python_bfloat16 (Debian's Python: uint16), python_bf16_ml_dtypes (ml_dtypes on
PYTHONPATH, see bindings/python/CMakeLists.txt). A run that gets the other form fails;
run by hand without the variable, the file tests the form this interpreter has. The tests
of one form only are skipped in the other run."""
import os
import subprocess
import sys
import textwrap

# The uint16 form is tested even where ml_dtypes is installed site-wide: it is hidden
# before the binding looks for it (importing a None entry of sys.modules raises
# ImportError).
if os.environ.get("DP_TEST_BF16_NUMPY") == "uint16":
    sys.modules["ml_dtypes"] = None

import numpy as np
import pytest
import torch
from torch.utils import dlpack as torch_dlpack

import dataparallel as dp

from safetensors_plain import load_file, save_file

try:
    import ml_dtypes
    ML_DTYPES_ERROR = None
except ImportError as e:
    ml_dtypes, ML_DTYPES_ERROR = None, e

FORM = os.environ.get("DP_TEST_BF16_NUMPY")
if FORM not in (None, "uint16", "ml_dtypes"):
    raise ValueError(f"DP_TEST_BF16_NUMPY={FORM!r}: expected uint16 or ml_dtypes")
# Checked here, before any test: a run started for one form must not quietly test the other.
if FORM == "ml_dtypes" and ml_dtypes is None:
    raise ImportError("DP_TEST_BF16_NUMPY=ml_dtypes, but ml_dtypes does not import "
                      f"({ML_DTYPES_ERROR}); PYTHONPATH={os.environ.get('PYTHONPATH')}")
ML_DTYPES_FORM = ml_dtypes is not None
uint16_form_only = pytest.mark.skipif(
    ML_DTYPES_FORM, reason="the np.uint16 form: ml_dtypes imports here (ctest's "
    "python_bfloat16 runs it)")
ml_dtypes_form_only = pytest.mark.skipif(
    not ML_DTYPES_FORM, reason="the ml_dtypes form: ml_dtypes does not import here "
    "(ctest's python_bf16_ml_dtypes runs it)")


def bits(values):
    """bfloat16 bits (as ints) of whatever numpy() returned, in either form."""
    return np.asarray(values).view(np.uint16).tolist()


# Hand-computed roundings (bfloat16 keeps 7 stored mantissa bits: its step at 1.0 is 2**-7):
# value, bits of the nearest bfloat16 (ties to the even mantissa), the value of those bits.
ROUNDINGS = [
    (1.0, 0x3F80, 1.0),
    (1.0 + 2**-8, 0x3F80, 1.0),         # halfway between 1 and 1 + 2**-7: to even, 1
    (1.0 + 3 * 2**-8, 0x3F82, 1.0 + 2**-6),  # halfway between 1 + 2**-7 and 1 + 2**-6: to even
    (1.0 + 2**-8 + 2**-20, 0x3F81, 1.0 + 2**-7),  # just past halfway: up
    (-2.5, 0xC020, -2.5),
    (3.0e38, 0x7F62, (1 + 0x62 / 128) * 2.0**127),  # exponent 0xFE, mantissa 0x62
    (3.4e38, 0x7F80, float("inf")),     # past the largest finite bfloat16: infinity
    (float("-inf"), 0xFF80, float("-inf")),
    (1e-40, 0x0001, 2.0**-133),         # a float32 subnormal rounds to a bfloat16 subnormal
    (-0.0, 0x8000, -0.0),
]
INPUTS = [v for v, _, _ in ROUNDINGS]
BITS = [b for _, b, _ in ROUNDINGS]
VALUES = [x for _, _, x in ROUNDINGS]


def same_floats(got, expected):
    """Equal as floats, the sign of zero included."""
    got = np.asarray(got, np.float64)
    return got.tolist() == list(expected) and \
        np.signbit(got).tolist() == np.signbit(expected).tolist()


def test_float32_to_bfloat16_rounds_to_nearest_even_and_keeps_nan():
    values = np.array(INPUTS, np.float32)
    assert dp.float32_to_bfloat16(values).tolist() == BITS
    assert dp.float32_to_bfloat16(values).dtype == np.uint16
    nans = np.array([np.nan, -np.nan], np.float32)
    nans_bits = nans.view(np.uint32) | np.array([1, 0x3F0001], np.uint32)  # payloads
    out = dp.float32_to_bfloat16(nans_bits.view(np.float32))
    assert np.isnan(dp.bfloat16_to_float32(out)).all()
    assert [int(b) >> 15 for b in out] == [int(n) >> 31 for n in nans_bits]  # signs kept


def test_bfloat16_to_float32_is_exact_for_every_pattern():
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    wide = dp.bfloat16_to_float32(every)
    assert wide.dtype == np.float32
    assert (wide.view(np.uint32) == every.astype(np.uint32) << 16).all()
    finite = ~np.isnan(wide)
    assert (dp.float32_to_bfloat16(wide[finite]) == every[finite]).all()  # a round trip


def test_bits_helpers_agree_with_torch(rng):
    a = (rng.standard_normal(4096) * 10.0 ** rng.integers(-30, 30, 4096)).astype(np.float32)
    theirs = torch.from_numpy(a).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert (dp.float32_to_bfloat16(a) == theirs).all()


def test_tensor_with_dtype_bfloat16_rounds_values_as_the_library_documents(ctx):
    t = ctx.tensor(INPUTS, dtype=dp.bfloat16)
    assert t.dtype == dp.bfloat16 and t.dtype.itemsize == 2 and t.nbytes == 2 * len(INPUTS)
    assert bits(t.numpy()) == BITS
    assert same_floats(t.tolist(), VALUES)
    # The library's own conversion (float32 tensor -> bfloat16) rounds the same way.
    assert bits(ctx.tensor(INPUTS).to(dtype="bfloat16").numpy()) == BITS
    assert ctx.tensor(2.5, dtype=dp.bfloat16).shape == ()


def test_float64_goes_to_bfloat16_through_float32_as_pytorch(ctx):
    # 1 + 2**-8 + 2**-30: float32 rounds it to 1 + 2**-8 (a tie), which goes to 1.0 even;
    # rounding the float64 straight to bfloat16 would give 1 + 2**-7.
    v = 1.0 + 2**-8 + 2**-30
    expected = torch.tensor([v], dtype=torch.float64).to(torch.bfloat16).float().item()
    assert expected == 1.0
    assert ctx.tensor(np.array([v]), dtype=dp.bfloat16).tolist() == [expected]
    assert ctx.tensor(np.array([v])).to(dtype=dp.bfloat16).tolist() == [expected]


def test_values_come_back_as_floats_never_bits(ctx):
    t = ctx.tensor([[1.5, -2.0], [0.1, 300.0]], dtype=dp.bfloat16)
    assert t.tolist() == [[1.5, -2.0], [0.10009765625, 300.0]]  # 0.1 is 0x3DCD
    # Summed in float32 (299.6001) and rounded once to bfloat16, whose step is 2 there.
    assert t.sum().dtype == dp.bfloat16 and t.sum().item() == 300.0
    assert ctx.tensor([0.1], dtype=dp.bfloat16).reshape(()).item() == 0.10009765625
    assert "dtype=bfloat16" in repr(t) and "1.5" in repr(t) and "16320" not in repr(t)
    assert t.to(dtype=dp.float32).numpy().tolist() == [[1.5, -2.0], [0.10009765625, 300.0]]
    assert t.to(dtype=dp.float64).dtype == dp.float64
    assert t.to(dtype=dp.int64).tolist() == [[1, -2], [0, 300]]


def test_numpy_form_of_a_bfloat16_tensor_is_the_one_this_run_tests(ctx):
    a = ctx.tensor([1.0, -2.0], dtype=dp.bfloat16).numpy()
    if ML_DTYPES_FORM:
        assert a.dtype == np.dtype(ml_dtypes.bfloat16)
        assert not dp.dtypes.bfloat16_numpy_is_bits()
        assert a.astype(np.float64).tolist() == [1.0, -2.0]
    else:
        assert a.dtype == np.uint16 and dp.dtypes.bfloat16_numpy_is_bits()
        assert a.tolist() == [0x3F80, 0xC000]
    assert dp.bfloat16.numpy == a.dtype and dp.bfloat16.numpy.itemsize == 2
    assert dp.bfloat16_to_float32(a).tolist() == [1.0, -2.0]


def test_numpy_conversions_and_ufuncs_see_values_in_either_form(ctx):
    t = ctx.tensor([4.0, -2.0, np.inf], dtype=dp.bfloat16)
    assert np.asarray(t, dtype=np.float64).tolist() == [4.0, -2.0, np.inf]
    assert np.array(t, dtype=np.float32).tolist() == [4.0, -2.0, np.inf]
    assert np.isfinite(t).tolist() == [True, True, False]
    assert np.maximum(t, 0).tolist() == [4.0, 0.0, np.inf]


def test_uint16_arrays_are_bits_only_when_bfloat16_is_asked_for(ctx):
    raw = np.array([0x3F80, 0xC020], np.uint16)
    assert ctx.tensor(raw).dtype == dp.int64  # never silently bfloat16
    assert ctx.from_numpy(raw).tolist() == [0x3F80, 0xC020]
    assert ctx.tensor(raw, dtype=dp.bfloat16).tolist() == [1.0, -2.5]
    assert ctx.from_numpy(raw, dtype=dp.bfloat16).tolist() == [1.0, -2.5]
    with pytest.raises(TypeError, match="uint16"):
        ctx.zeros(3, dtype=np.uint16)
    # A uint16 array holding numbers is converted as numbers into float32.
    assert ctx.tensor(raw, dtype=dp.float32).tolist() == [16256.0, 49184.0]


def test_copy_of_a_bfloat16_tensor_takes_its_bits_unchanged(ctx):
    t = ctx.tensor([1.0 + 2**-7, 3.0], dtype=dp.bfloat16)
    u = ctx.zeros(2, dtype=dp.bfloat16).copy_(t)
    assert bits(u.numpy()) == bits(t.numpy())
    u.copy_([0.1, 0.2])
    assert bits(u.numpy()) == dp.float32_to_bfloat16([0.1, 0.2]).tolist()
    assert ctx.tensor(t).dtype == dp.bfloat16 and ctx.tensor(t).tolist() == t.tolist()


def test_a_bfloat16_tensor_converts_by_value_into_other_dtypes(ctx):
    b = ctx.tensor([1.0, -2.5, 3.0], dtype=dp.bfloat16)
    assert ctx.zeros(3).copy_(b).tolist() == [1.0, -2.5, 3.0]  # not its bits, 16256, ...
    assert dp.tensor(ctx, b, dtype=dp.float32).tolist() == [1.0, -2.5, 3.0]
    assert dp.tensor(ctx, b, dtype="int64").tolist() == [1, -2, 3]
    assert dp.tensor(ctx, ctx.tensor([1.0, 0.1]), dtype=dp.bfloat16).tolist() == \
        [1.0, 0.10009765625]
    # A module's float32 parameters from bfloat16 values: the library's and torch's.
    lin = dp.Linear(ctx, 2, 1)
    lin.load_state_dict({"weight": ctx.tensor([[0.5, -1.5]], dtype=dp.bfloat16),
                         "bias": torch.tensor([2.25], dtype=torch.bfloat16)})
    assert lin.weight.tolist() == [[0.5, -1.5]] and lin.bias.tolist() == [2.25]


def test_factories_and_scalar_ops_keep_bfloat16(ctx):
    assert ctx.full((2,), 0.1, dtype=dp.bfloat16).tolist() == [0.10009765625] * 2
    assert bits(ctx.zeros((2, 2), dtype="bfloat16").numpy()) == [[0, 0], [0, 0]]
    assert ctx.empty(3, dtype=torch.bfloat16).dtype == dp.bfloat16
    t = ctx.tensor([1.0, 2.0], dtype=dp.bfloat16)
    for r in (t + 1, t * 3, 2 * t, t - 0.5, t / 4, -t, t + t):
        assert r.dtype == dp.bfloat16
    assert (t * 3 + 1).tolist() == [4.0, 7.0]
    # 1 + 2**-8 is a tie: the sum rounds to 1.0 (the library computes in float32 and
    # rounds once)
    assert (ctx.tensor([1.0], dtype=dp.bfloat16) + 2**-8).tolist() == [1.0]


def test_nan_and_infinity_survive_bfloat16(ctx):
    t = ctx.tensor([np.nan, np.inf, -np.inf, 1.0], dtype=dp.bfloat16)
    out = (t * 2).tolist()
    assert np.isnan(out[0]) and out[1:] == [np.inf, -np.inf, 2.0]


def test_borrowing_bits_shares_memory_both_ways(ctx):
    raw = dp.float32_to_bfloat16([1.0, 2.0, 3.0])
    t = ctx.from_numpy(raw, copy=False, dtype=dp.bfloat16)
    assert t.dtype == dp.bfloat16 and t.tolist() == [1.0, 2.0, 3.0]
    raw[1] = dp.float32_to_bfloat16([-8.0])[0]
    assert t.tolist() == [1.0, -8.0, 3.0]
    t.copy_([0.5, 0.25, 0.125])
    assert dp.bfloat16_to_float32(raw).tolist() == [0.5, 0.25, 0.125]
    view = t.numpy(copy=False)
    assert view.dtype == dp.bfloat16.numpy and bits(view) == raw.tolist()
    with pytest.raises(dp.InvalidArgumentError, match="uint16 is not"):
        ctx.from_numpy(raw, copy=False, dtype=dp.int64)
    with pytest.raises(dp.InvalidArgumentError, match="bfloat16"):
        ctx.from_numpy(np.zeros(2, np.float32), copy=False, dtype=dp.bfloat16)


def test_bfloat16_on_a_second_device_and_back(ctx):
    t = ctx.tensor([0.1, 0.2], dtype=dp.bfloat16, device="cpu:1")
    assert t.device == dp.cpu(1) and t.cpu().dtype == dp.bfloat16
    assert bits(t.cpu().numpy()) == dp.float32_to_bfloat16([0.1, 0.2]).tolist()


# ---- DLPack with PyTorch (1.13 exchanges torch.bfloat16 as kDLBfloat) --------------------
def test_torch_bfloat16_round_trips_through_dlpack_sharing_memory(ctx):
    src = torch.tensor([[1.5, -0.1], [3.0e38, float("inf")]], dtype=torch.bfloat16)
    t = dp.Tensor.from_dlpack(ctx, src)
    assert t.dtype == dp.bfloat16 and t.shape == (2, 2)
    assert bits(t.numpy()) == src.view(torch.int16).numpy().view(np.uint16).tolist()
    assert t.data_ptr() == src.data_ptr()  # shared, not copied
    back = torch.from_dlpack(t)
    assert back.dtype == torch.bfloat16 and torch.equal(back, src)
    assert back.data_ptr() == src.data_ptr()
    src[0, 0] = 2.0  # writes by PyTorch are seen by the library
    assert t.tolist()[0][0] == 2.0
    imported = dp.Tensor.from_dlpack(ctx, torch_dlpack.to_dlpack(src))  # the older API
    assert imported.dtype == dp.bfloat16 and imported.data_ptr() == src.data_ptr()
    old = torch_dlpack.from_dlpack(ctx.tensor([0.1], dtype=dp.bfloat16).__dlpack__())
    assert old.dtype == torch.bfloat16 and old.float().item() == 0.10009765625


def test_library_bfloat16_results_reach_torch_with_their_bits(ctx):
    t = ctx.tensor(np.linspace(-3, 3, 7, dtype=np.float32), dtype=dp.bfloat16).exp()
    theirs = torch.from_dlpack(t)
    expected = torch.linspace(-3, 3, 7).to(torch.bfloat16).float().exp().to(torch.bfloat16)
    assert torch.equal(theirs, expected)  # exp in float32, rounded once, as PyTorch


# ---- NumPy's two forms ------------------------------------------------------------------
# Operands of exact bfloat16 values and what the library makes of them: float32 math
# (exact for these), rounded once to nearest even. bfloat16's step is 2**-7 in [1, 2) and
# 2**-6 in [2, 4).
OPERANDS = [1.0, 1.0 + 2**-7, 3.0, -2.5]
PLUS_2_POW_MINUS_8 = [1.0,           # 1 + 2**-8: a tie, to even 1
                      1.0 + 2**-6,   # 1 + 3 * 2**-8: a tie, to the even mantissa 2
                      3.0,           # 3 + 2**-8: below half of 2**-6
                      -2.5]          # -2.5 + 2**-8: likewise
TIMES_3 = [3.0, 3.03125, 9.0, -7.5]  # 3 + 3 * 2**-7 = 193.5 steps of 2**-6: to even 194
SUM = 2.5                            # 2.5078125 = 160.5 steps of 2**-6: to even 160
MATMUL = [3.0, 3.5]                  # [[1, 1 + 2**-7], [3, -2.5]] @ [2, 1]: 3.0078125 to 3


@uint16_form_only
def test_uint16_form_hands_out_bits_that_the_helpers_read(ctx):
    t = ctx.tensor(OPERANDS, dtype=dp.bfloat16)
    for a in (t.numpy(), t.numpy(copy=False), np.asarray(t)):
        assert a.dtype == np.uint16 and a.tolist() == [0x3F80, 0x3F81, 0x4040, 0xC020]
        assert dp.bfloat16_to_float32(a).tolist() == OPERANDS
    assert ctx.tensor(t.numpy(), dtype=dp.bfloat16).tolist() == OPERANDS  # bits back in
    assert dp.bfloat16_to_float32((t + 2**-8).numpy()).tolist() == PLUS_2_POW_MINUS_8
    assert dp.bfloat16_to_float32((t * 3).numpy()).tolist() == TIMES_3
    assert dp.bfloat16_to_float32(t.sum().numpy()).tolist() == SUM
    with pytest.raises(TypeError, match="uint16"):
        dp.dtypes.dtype_of(np.uint16)  # bits are bfloat16 only when dtype=bfloat16 says so


@ml_dtypes_form_only
def test_ml_dtypes_form_holds_the_rounded_values(ctx):
    t = ctx.tensor(INPUTS, dtype=dp.bfloat16)
    for a in (t.numpy(), t.numpy(copy=False), np.asarray(t), t.cpu().numpy()):
        assert a.dtype == np.dtype(ml_dtypes.bfloat16) and a.shape == (len(INPUTS),)
        assert bits(a) == BITS
        assert same_floats(a.astype(np.float64), VALUES)
    assert dp.dtypes.dtype_of(ml_dtypes.bfloat16) == dp.bfloat16
    assert dp.dtypes.dtype_of(np.dtype(ml_dtypes.bfloat16)) == dp.bfloat16


@ml_dtypes_form_only
def test_ml_dtypes_rounds_float32_as_the_library_does(ctx, rng):
    # ml_dtypes' own conversion is an independent reference for the library's: both round
    # to nearest even (NaN aside: ml_dtypes makes every NaN 0x7FC0 with its sign, the
    # library keeps the payload's upper bits).
    assert bits(np.array(INPUTS, np.float32).astype(ml_dtypes.bfloat16)) == BITS
    a = (rng.standard_normal(4096) * 10.0 ** rng.integers(-40, 39, 4096)).astype(np.float32)
    theirs = a.astype(ml_dtypes.bfloat16)
    assert bits(ctx.tensor(a, dtype=dp.bfloat16).numpy()) == bits(theirs)
    assert bits(ctx.tensor(a).to(dtype=ml_dtypes.bfloat16).numpy()) == bits(theirs)
    assert bits(dp.float32_to_bfloat16(a)) == bits(theirs)
    nans = ctx.tensor([np.nan, -np.nan], dtype=dp.bfloat16).numpy()
    assert np.isnan(nans.astype(np.float32)).all()
    assert np.signbit(nans).tolist() == [False, True]


@ml_dtypes_form_only
def test_every_bfloat16_pattern_reads_the_same_through_ml_dtypes_and_the_library(ctx):
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    reference = (every.astype(np.uint32) << 16).view(np.float32)  # bfloat16 is the top half
    as_ml = every.view(ml_dtypes.bfloat16)
    assert (as_ml.astype(np.float32).view(np.uint32) == reference.view(np.uint32)).all()
    assert (dp.bfloat16_to_float32(as_ml).view(np.uint32) == reference.view(np.uint32)).all()
    t = ctx.tensor(as_ml)  # taken as it is: NaN payloads too
    assert t.dtype == dp.bfloat16 and (t.numpy().view(np.uint16) == every).all()
    assert (t.to(dtype=dp.float32).numpy().view(np.uint32) == reference.view(np.uint32)).all()


@ml_dtypes_form_only
def test_ml_dtypes_arrays_become_bfloat16_tensors_without_a_dtype(ctx):
    a = np.array([[1.5, -0.1, 7.0], [3.0e38, -np.inf, 2.0**-133]], dtype=ml_dtypes.bfloat16)
    expected = [[1.5, -0.10009765625, 7.0], [(1 + 0x62 / 128) * 2.0**127, -np.inf, 2.0**-133]]
    for t, source in ((ctx.tensor(a), a), (ctx.from_numpy(a), a),
                      (ctx.from_numpy(a, copy=False), a),
                      (dp.tensor(ctx, a, device="cpu:1"), a),
                      (ctx.tensor(a[:, ::2]), a[:, ::2])):
        assert t.dtype == dp.bfloat16 and t.shape == source.shape
        assert t.numpy().dtype == np.dtype(ml_dtypes.bfloat16)
        assert bits(t.numpy()) == bits(source)
    assert ctx.tensor(a).tolist() == expected
    assert ctx.tensor(a[:, ::2]).tolist() == [row[::2] for row in expected]
    # Asked for another dtype, the values convert (to int64 toward zero, as NumPy casts).
    assert ctx.tensor(a, dtype=dp.float64).tolist() == expected
    assert ctx.tensor(a[:1], dtype=dp.int64).tolist() == [[1, 0, 7]]
    assert ctx.zeros(2, dtype=ml_dtypes.bfloat16).dtype == dp.bfloat16
    assert ctx.full((2,), 0.1, dtype=ml_dtypes.bfloat16).tolist() == [0.10009765625] * 2
    assert ctx.tensor([0.1], dtype=ml_dtypes.bfloat16).tolist() == [0.10009765625]


@ml_dtypes_form_only
def test_borrowed_ml_dtypes_array_shares_memory_both_ways(ctx):
    a = np.array([1.0, 2.0, 3.0], ml_dtypes.bfloat16)
    t = ctx.from_numpy(a, copy=False)
    assert t.dtype == dp.bfloat16 and t.data_ptr() == a.ctypes.data
    a[1] = -8.0
    assert t.tolist() == [1.0, -8.0, 3.0]
    t.copy_([0.5, 0.1, 0.125])  # rounded by the library, seen through the array
    assert a.astype(np.float64).tolist() == [0.5, 0.10009765625, 0.125]
    view = t.numpy(copy=False)
    assert view.dtype == np.dtype(ml_dtypes.bfloat16)
    view[2] = 1.0 + 2**-7
    assert a.astype(np.float64).tolist()[2] == 1.0 + 2**-7 and t.tolist()[2] == 1.0 + 2**-7
    with pytest.raises(dp.InvalidArgumentError, match="bfloat16 is not float32"):
        ctx.from_numpy(a, copy=False, dtype=dp.float32)


@ml_dtypes_form_only
def test_library_arithmetic_reads_back_as_ml_dtypes_values(ctx):
    t = ctx.tensor(OPERANDS, dtype=dp.bfloat16)
    a = t.numpy()
    m = ctx.tensor([[1.0, 1.0 + 2**-7], [3.0, -2.5]], dtype=dp.bfloat16)
    v = ctx.tensor([[2.0], [1.0]], dtype=dp.bfloat16)
    results = [(t + 2**-8, PLUS_2_POW_MINUS_8), (t * 3, TIMES_3), (t.sum(), SUM),
               ((m @ v).reshape(2), MATMUL), (t + a, [2 * x for x in OPERANDS])]
    for r, expected in results:
        assert r.dtype == dp.bfloat16
        out = r.numpy()
        assert out.dtype == np.dtype(ml_dtypes.bfloat16)
        assert out.astype(np.float64).tolist() == expected
    # ml_dtypes' arithmetic (float32 math, rounded once) gives the same bits.
    assert bits((t * 3).numpy()) == bits(a * ml_dtypes.bfloat16(3))
    assert bits((t + 2**-8).numpy()) == bits(a + ml_dtypes.bfloat16(2**-8))
    # An ml_dtypes array on the left is the tensor's operand, not a NumPy ufunc's.
    assert isinstance(a + t, dp.Tensor) and (a + t).tolist() == (t + a).tolist()


@ml_dtypes_form_only
def test_torch_bfloat16_memory_reads_as_ml_dtypes_values_through_dlpack(ctx):
    src = torch.tensor([1.5, -0.1, 3.0e38], dtype=torch.bfloat16)
    t = dp.Tensor.from_dlpack(ctx, src)
    view = t.numpy(copy=False)
    assert view.dtype == np.dtype(ml_dtypes.bfloat16) and view.ctypes.data == src.data_ptr()
    assert view.astype(np.float64).tolist() == src.double().tolist()
    src[0] = 2.0 ** -10  # PyTorch's write, seen in the array
    assert view.astype(np.float64).tolist()[0] == 2.0 ** -10
    # And the other way: an ml_dtypes array borrowed by the library, shared with PyTorch.
    a = np.array([0.25, -7.0], ml_dtypes.bfloat16)
    theirs = torch.from_dlpack(ctx.from_numpy(a, copy=False))
    assert theirs.dtype == torch.bfloat16 and theirs.data_ptr() == a.ctypes.data
    assert theirs.double().tolist() == [0.25, -7.0]


def test_bfloat16_buffers_go_through_safetensors_and_state_dicts_in_this_form(ctx, tmp_path):
    values = [1.5, -0.1, 3.0e38, -0.0]
    expected = [1.5, -0.10009765625, (1 + 0x62 / 128) * 2.0**127, -0.0]
    m = dp.Module(ctx)
    m.register_buffer("scale", ctx.tensor(values, dtype=dp.bfloat16))
    state = m.state_dict()["scale"]
    assert state.dtype == dp.bfloat16.numpy  # ml_dtypes.bfloat16 values or np.uint16 bits
    assert same_floats(dp.bfloat16_to_float32(state), expected)
    m.save(tmp_path / "m.safetensors")
    raw = load_file(tmp_path / "m.safetensors")["scale"]  # BF16 read as its bits
    assert raw.tolist() == bits(state) == dp.float32_to_bfloat16(values).tolist()
    if ML_DTYPES_FORM:  # the file's bytes are ml_dtypes' bfloat16 as they stand
        assert same_floats(raw.view(ml_dtypes.bfloat16).astype(np.float64), expected)
    # A state dict in this form loads back unchanged; a file of BF16 bits loads as values.
    m.load_state_dict({"scale": state[::-1].copy()})
    assert same_floats(dp.bfloat16_to_float32(m.state_dict()["scale"]), expected[::-1])
    save_file({"scale": dp.float32_to_bfloat16([4.0, 0.2, -1.0, 2.0**-133])},
              tmp_path / "in.safetensors")
    m.load(tmp_path / "in.safetensors")
    assert m.state_dict()["scale"].dtype == dp.bfloat16.numpy
    assert ctx.tensor(m.state_dict()["scale"], dtype=dp.bfloat16).tolist() == \
        [4.0, 0.2001953125, -1.0, 2.0**-133]


def test_without_ml_dtypes_numpy_gets_uint16_bits(tmp_path):
    # A fresh interpreter where ml_dtypes cannot be imported, whatever is installed here.
    script = textwrap.dedent("""
        import sys
        sys.modules["ml_dtypes"] = None  # import ml_dtypes raises ImportError
        import numpy as np
        import dataparallel as dp
        ctx = dp.Context(cpu_devices=1, load_cuda=False)
        t = ctx.tensor([1.0, -2.5], dtype=dp.bfloat16)
        a = t.numpy()
        assert dp.bfloat16.numpy == np.uint16, dp.bfloat16.numpy
        assert a.dtype == np.uint16 and a.tolist() == [0x3F80, 0xC020], a
        assert t.numpy(copy=False).dtype == np.uint16
        assert ctx.tensor(a).dtype == dp.int64
        assert ctx.tensor(a, dtype=dp.bfloat16).tolist() == [1.0, -2.5]
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, env=dict(os.environ))
    assert run.returncode == 0 and run.stdout.strip() == "ok", run.stderr


def test_bad_bits_input_is_named(ctx):
    with pytest.raises(TypeError, match="int32"):
        dp.bfloat16_to_float32(np.zeros(2, np.int32))
    with pytest.raises(TypeError, match="bfloat16"):
        ctx.tensor(["a"], dtype=dp.bfloat16)
    # NumPy's float16 holds values (it is not bfloat16): converted, not taken as bits.
    assert ctx.tensor(np.array([1.5], np.float16), dtype=dp.bfloat16).tolist() == [1.5]
