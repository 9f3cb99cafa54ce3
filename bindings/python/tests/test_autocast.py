"""dp.autocast: the per-thread switch (context manager, decorator, nesting, exceptions,
threads), what a bfloat16 linear computes against float64, the gradients' dtypes, and the
device query bf16_native. (Which op runs in which dtype: test_autocast_ops.py.)"""
import os
import threading

import numpy as np
import pytest
import torch

import dataparallel as dp

# ---- the switch --------------------------------------------------------------------------


def test_autocast_is_off_by_default_and_on_inside_the_block():
    assert dp.autocast_dtype() == dp.float32 and not dp.is_autocast_enabled()
    with dp.autocast() as a:
        assert dp.autocast_dtype() == dp.bfloat16 and dp.is_autocast_enabled()
        assert a.dtype == dp.bfloat16 and a.enabled
    assert dp.autocast_dtype() == dp.float32


def test_the_previous_setting_returns_also_after_an_exception():
    with pytest.raises(ZeroDivisionError):
        with dp.autocast():
            1 / 0
    assert not dp.is_autocast_enabled()
    with dp.autocast():
        with pytest.raises(KeyError):
            with dp.autocast(enabled=False):
                assert not dp.is_autocast_enabled()
                raise KeyError("x")
        assert dp.is_autocast_enabled()  # the outer block's setting, not "off"
    assert not dp.is_autocast_enabled()


def test_nested_blocks_and_a_reused_instance_restore_in_order():
    region = dp.autocast()
    with region:
        with dp.autocast(enabled=False):
            assert dp.autocast_dtype() == dp.float32
            with region:  # the same object entered again inside
                assert dp.autocast_dtype() == dp.bfloat16
            assert dp.autocast_dtype() == dp.float32
        assert dp.autocast_dtype() == dp.bfloat16
    assert dp.autocast_dtype() == dp.float32


def test_autocast_as_a_decorator_switches_per_call():
    @dp.autocast()
    def inside():
        return dp.autocast_dtype()

    @dp.autocast(enabled=False)
    def off():
        return dp.autocast_dtype()

    assert inside() == dp.bfloat16 and dp.autocast_dtype() == dp.float32
    with dp.autocast():
        assert off() == dp.float32 and dp.autocast_dtype() == dp.bfloat16
    assert inside.__name__ == "inside"


def test_only_bfloat16_is_an_autocast_dtype():
    assert dp.autocast("bfloat16").dtype == dp.bfloat16
    assert dp.autocast(torch.bfloat16).dtype == dp.bfloat16
    with pytest.raises(dp.InvalidArgumentError, match="float64 is not"):
        dp.autocast(dp.float64)
    with pytest.raises(TypeError, match="float16"):
        dp.autocast(torch.float16)
    # The C call refuses other dtypes too, naming the value.
    with pytest.raises(dp.InvalidArgumentError, match="dtype = 2"):
        dp.capi.dp_set_autocast(dp.int64)
    assert not dp.is_autocast_enabled()


def test_the_setting_belongs_to_the_thread(ctx):
    seen = {}
    release = threading.Event()

    def other():
        seen["start"] = dp.autocast_dtype()
        w = ctx.tensor(np.ones((2, 3), np.float32))
        seen["linear"] = dp.linear(ctx.tensor(np.ones((1, 3), np.float32)), w).dtype
        with dp.autocast():
            seen["inside"] = dp.autocast_dtype()
            release.wait(10)
        seen["end"] = dp.autocast_dtype()

    with dp.autocast():
        t = threading.Thread(target=other)
        t.start()
        while "inside" not in seen and t.is_alive():
            t.join(0.01)
        assert dp.autocast_dtype() == dp.bfloat16
    assert dp.autocast_dtype() == dp.float32  # the other thread is still inside its block
    release.set()
    t.join()
    assert seen == {"start": dp.float32, "linear": dp.float32, "inside": dp.bfloat16,
                    "end": dp.float32}


def test_data_parallel_replicas_run_under_the_callers_autocast(ctx):
    model = dp.Sequential(ctx, dp.Linear(ctx, 4, 8), dp.ReLU(ctx), dp.Linear(ctx, 8, 2))
    net = dp.DataParallel(model, device_ids=["cpu:0", "cpu:1"])
    x = ctx.tensor(np.random.default_rng(0).standard_normal((6, 4)).astype(np.float32))
    with dp.autocast():
        out = net(x)
        loss = dp.cross_entropy(out, ctx.tensor(np.arange(6) % 2))
    assert out.dtype == dp.bfloat16 and loss.dtype == dp.float32
    loss.backward()
    assert all(p.grad is not None and p.grad.dtype == dp.float32 for p in model.parameters())
    # Within bfloat16 rounding of one device's result under autocast.
    with dp.autocast():
        single = model(x)
    assert np.allclose(dp.bfloat16_to_float32(out.numpy()),
                       dp.bfloat16_to_float32(single.numpy()), rtol=2**-7, atol=2**-7)


def test_a_bfloat16_gradient_reduce_rounds_the_other_replicas_gradients(ctx):
    # float32 training (no autocast) over 2 devices: replica 1's gradients are rounded to
    # bfloat16 before they are summed into replica 0's, so each gradient is within 2**-8 of
    # its tensor's largest magnitude of the float32 reduce, and not equal to it.
    x = ctx.tensor(np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32))
    y = ctx.tensor(np.arange(8) % 3)
    model = dp.Sequential(ctx, dp.Linear(ctx, 4, 6), dp.ReLU(ctx), dp.Linear(ctx, 6, 3))
    grads = {}
    for reduce in ("float32", "bfloat16"):
        model.zero_grad()
        net = dp.DataParallel(model, device_ids=["cpu:0", "cpu:1"], grad_reduce_dtype=reduce)
        dp.cross_entropy(net(x), y).backward()
        grads[reduce] = [p.grad.numpy().copy() for p in model.parameters()]
    changed = False
    for a, b in zip(grads["float32"], grads["bfloat16"]):
        assert np.all(np.abs(b - a) <= 2**-8 * np.abs(a).max())
        changed |= not np.array_equal(a, b)
    assert changed
    with pytest.raises(dp.InvalidArgumentError, match="grad_reduce_dtype = 2"):
        dp.DataParallel(dp.Linear(ctx, 2, 2), device_ids=["cpu:0", "cpu:1"],
                        grad_reduce_dtype="int64")


# ---- what a bfloat16 linear computes ---------------------------------------------------
# Error bound of a linear under autocast, against float64 math on the bfloat16-rounded
# inputs x, W, b (the reference the library's result should match):
#   - each product x_k * w_k of two bfloat16 values (8-bit significands) is exact in
#     float32 (16 bits <= 24);
#   - the K products and the bias are summed in float32: at most (K + 1) * 2**-24 *
#     (sum_k |x_k w_k| + |b|) off (the classic gamma_{K+1} bound, first order; any order);
#   - the result is rounded once to bfloat16 (8-bit significand): relative error at most
#     2**-8, half of its 2**-7 step at 1.0.
#   |y - y64| <= 2**-8 * |y64| + (1 + 2**-8) * (K + 1) * 2**-24 * (|x| @ |W|^T + |b|).
# Rounding the inputs is part of what is checked: against float64 math on the unrounded
# float32 inputs the same bound fails (asserted below, so the bound can tell them apart).
BF16_UNIT = 2.0**-8
FP32_UNIT = 2.0**-24


def _round_bf16(a):
    return dp.bfloat16_to_float32(dp.float32_to_bfloat16(a)).astype(np.float64)


def _bound(ref, terms, magnitude):
    """The bound above for a result `ref` summed from `terms` products whose absolute
    values add up to `magnitude`."""
    return BF16_UNIT * np.abs(ref) + (1 + BF16_UNIT) * (terms + 1) * FP32_UNIT * magnitude


def _linear_bound(x, w, b, ref):
    return _bound(ref, x.shape[1], np.abs(x) @ np.abs(w).T + np.abs(b))


def test_bfloat16_linear_matches_float64_on_rounded_inputs_within_the_bound(ctx, rng):
    n, k, m = 16, 300, 24
    x32 = rng.standard_normal((n, k)).astype(np.float32)
    w32 = (rng.standard_normal((m, k)) / np.sqrt(k)).astype(np.float32)
    b32 = rng.standard_normal(m).astype(np.float32)
    with dp.autocast():
        y = dp.linear(ctx.tensor(x32), ctx.tensor(w32), ctx.tensor(b32))
    assert y.dtype == dp.bfloat16
    got = dp.bfloat16_to_float32(y.numpy()).astype(np.float64)

    x, w, b = _round_bf16(x32), _round_bf16(w32), _round_bf16(b32)
    ref = x @ w.T + b
    bound = _linear_bound(x, w, b, ref)
    assert (np.abs(got - ref) <= bound).all(), np.max(np.abs(got - ref) / bound)
    # The bound is tight enough to tell float32 math on the unrounded inputs from bfloat16's.
    unrounded = x32.astype(np.float64) @ w32.astype(np.float64).T + b32
    assert (np.abs(got - unrounded) > bound).any()


def test_bfloat16_linear_forward_on_every_device_and_in_a_module(ctx, rng):
    x32 = rng.standard_normal((5, 7)).astype(np.float32)
    layer = dp.Linear(ctx, 7, 3)
    w, b = (p.numpy().astype(np.float64) for p in layer.parameters())
    with dp.autocast():
        outs = [layer(ctx.tensor(x32)), layer.to("cpu:1")(ctx.tensor(x32, device="cpu:1"))]
    x = _round_bf16(x32)
    ref = x @ _round_bf16(w).T + _round_bf16(b)
    for y in outs:
        assert y.dtype == dp.bfloat16
        got = dp.bfloat16_to_float32(y.numpy())
        assert (np.abs(got - ref) <= _linear_bound(x, _round_bf16(w), _round_bf16(b), ref)).all()
    assert all(p.dtype == dp.float32 for p in layer.parameters())  # master weights stay


def test_gradients_reach_float32_parameters_in_float32(ctx, rng):
    n, k, m = 8, 40, 6
    x32 = rng.standard_normal((n, k)).astype(np.float32)
    x_in = ctx.tensor(x32).requires_grad_()
    w = ctx.tensor(rng.standard_normal((m, k)).astype(np.float32)).requires_grad_()
    b = ctx.tensor(np.zeros(m, np.float32)).requires_grad_()
    with dp.autocast():
        y = dp.linear(x_in, w, b)
        loss = y.sum()  # sum is on the float32 list: a float32 loss
    assert y.dtype == dp.bfloat16 and loss.dtype == dp.float32
    loss.backward()
    for t in (w, b, x_in):
        assert t.grad is not None and t.grad.dtype == dp.float32
    # d(sum y)/dW[o, i] = sum_n x[n, i] (bfloat16-rounded x), computed by a bfloat16
    # product: within the bound above with the batch as K.
    x = _round_bf16(x32)
    ref = np.broadcast_to(x.sum(axis=0), (m, k))
    assert (np.abs(w.grad.numpy() - ref) <= _bound(ref, n, np.abs(x).sum(axis=0))).all()
    assert b.grad.numpy().tolist() == [float(n)] * m  # exact: n ones
    # d/dx[n, i] = sum_o W[o, i] (bfloat16-rounded W), back in float32 through the cast.
    wr = _round_bf16(w.numpy())
    ref_x = np.broadcast_to(wr.sum(axis=0), (n, k))
    assert (np.abs(x_in.grad.numpy() - ref_x) <= _bound(ref_x, m, np.abs(wr).sum(axis=0))).all()


def test_backward_does_not_depend_on_where_it_is_called(ctx, rng):
    # Backward runs with autocast off, so calling it inside the block changes nothing.
    x = ctx.tensor(rng.standard_normal((4, 6)).astype(np.float32))
    grads = []
    for inside in (False, True):
        w = ctx.tensor(np.linspace(-1, 1, 18, dtype=np.float32).reshape(3, 6)).requires_grad_()
        with dp.autocast():
            loss = dp.linear(x, w).sum()
            if inside:
                loss.backward()
        if not inside:
            loss.backward()
        grads.append(w.grad.numpy())
    assert np.array_equal(grads[0], grads[1])


# ---- the device query --------------------------------------------------------------------
def _cpu_has_native_bf16():
    """What the library should report: the CPU's flags, unless DP_CPU_BF16=fp32 turns the
    native path off (docs/environment.md)."""
    if os.environ.get("DP_CPU_BF16") == "fp32":
        return False
    flags = open("/proc/cpuinfo").read().split()
    return "avx512_bf16" in flags or "amx_bf16" in flags


def test_bf16_native_reports_the_cpu(ctx):
    native = ctx.bf16_native("cpu:0")
    assert isinstance(native, bool)
    assert native == ctx.bf16_native(dp.cpu(1))  # every CPU device is the same processor
    assert native == _cpu_has_native_bf16()
    with pytest.raises(dp.OutOfRangeError, match="cpu:5|5"):
        ctx.bf16_native("cpu:5")
