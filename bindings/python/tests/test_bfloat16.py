"""bfloat16 tensors in Python: creation and conversion (rounded to nearest even), NumPy's
two forms (ml_dtypes.bfloat16 values, or np.uint16 bits without ml_dtypes), the bits
helpers, borrowing, DLPack with PyTorch's torch.bfloat16."""
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import torch
from torch.utils import dlpack as torch_dlpack

import dataparallel as dp

try:
    import ml_dtypes
except ImportError:
    ml_dtypes = None


def bits(values):
    """bfloat16 bits (as ints) of whatever numpy() returned, in either form."""
    return np.asarray(values).view(np.uint16).tolist()


# Hand-computed roundings (bfloat16 keeps 7 stored mantissa bits: its step at 1.0 is 2**-7):
# value, bits of the nearest bfloat16 (ties to the even mantissa).
ROUNDINGS = [
    (1.0, 0x3F80),
    (1.0 + 2**-8, 0x3F80),              # halfway between 1 and 1 + 2**-7: to even, 1
    (1.0 + 3 * 2**-8, 0x3F82),          # halfway between 1 + 2**-7 and 1 + 2**-6: to even
    (1.0 + 2**-8 + 2**-20, 0x3F81),     # just past halfway: up
    (-2.5, 0xC020),
    (3.0e38, 0x7F62),
    (3.4e38, 0x7F80),                   # past the largest finite bfloat16: infinity
    (float("-inf"), 0xFF80),
    (1e-40, 0x0001),                    # a float32 subnormal rounds to a bfloat16 subnormal
    (-0.0, 0x8000),
]


def test_float32_to_bfloat16_rounds_to_nearest_even_and_keeps_nan():
    values = np.array([v for v, _ in ROUNDINGS], np.float32)
    assert dp.float32_to_bfloat16(values).tolist() == [b for _, b in ROUNDINGS]
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
    values = [v for v, _ in ROUNDINGS]
    t = ctx.tensor(values, dtype=dp.bfloat16)
    assert t.dtype == dp.bfloat16 and t.dtype.itemsize == 2 and t.nbytes == 2 * len(values)
    assert bits(t.numpy()) == [b for _, b in ROUNDINGS]
    # The library's own conversion (float32 tensor -> bfloat16) rounds the same way.
    assert bits(ctx.tensor(values).to(dtype="bfloat16").numpy()) == [b for _, b in ROUNDINGS]
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


def test_numpy_array_of_a_bfloat16_tensor_is_the_documented_form(ctx):
    a = ctx.tensor([1.0, -2.0], dtype=dp.bfloat16).numpy()
    if ml_dtypes is None:
        assert a.dtype == np.uint16 and a.tolist() == [0x3F80, 0xC000]
    else:
        assert a.dtype == ml_dtypes.bfloat16 and a.astype(np.float32).tolist() == [1.0, -2.0]
    assert dp.bfloat16.numpy == a.dtype
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
@pytest.mark.skipif(ml_dtypes is None, reason="ml_dtypes is not installed")
def test_ml_dtypes_bfloat16_arrays_map_to_bfloat16_both_ways(ctx):
    a = np.array([1.5, -0.1, 7.0], dtype=ml_dtypes.bfloat16)
    for t in (ctx.tensor(a), ctx.from_numpy(a), ctx.from_numpy(a, copy=False)):
        assert t.dtype == dp.bfloat16
        assert bits(t.numpy()) == bits(a)
        assert t.numpy().dtype == ml_dtypes.bfloat16
    assert ctx.tensor(a, dtype=dp.float32).tolist() == a.astype(np.float32).tolist()
    assert ctx.zeros(2, dtype=ml_dtypes.bfloat16).dtype == dp.bfloat16
    assert ctx.tensor([0.1], dtype=ml_dtypes.bfloat16).tolist() == [0.10009765625]


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
