"""Who owns what: borrowed arrays outlive `del`, handles are released when the Python
object goes or at close(), and nothing leaks over many create/release cycles."""
import gc
import os
import weakref

import numpy as np
import pytest
import torch

import dataparallel as dp
from dataparallel import capi


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def settle():
    gc.collect()
    capi.dp_py_run_pending()


def test_borrowed_array_survives_del_of_the_array(ctx):
    a = np.arange(1000, dtype=np.float32)
    ref = weakref.ref(a)
    t = dp.Tensor.from_numpy(ctx, a, copy=False)
    del a
    settle()
    assert ref() is not None  # the tensor holds the array
    b = np.empty(1000, np.float32)  # reuse pressure on the allocator
    b.fill(-1)
    assert t.numpy()[:3].tolist() == [0, 1, 2] and t.numpy()[-1] == 999


def test_array_is_freed_when_the_last_tensor_using_it_goes(ctx):
    a = np.ones((4, 4), np.float32)
    ref = weakref.ref(a)
    t = dp.Tensor.from_numpy(ctx, a, copy=False)
    view = t.reshape(16)  # a view of the same memory keeps it too
    del a, t
    settle()
    assert ref() is not None
    assert view.sum().item() == 16
    del view
    settle()
    assert ref() is None


def test_array_used_by_a_module_parameter_stays_alive(ctx):
    class Scale(dp.Module):
        def __init__(self, ctx, w):
            super().__init__(ctx)
            self.register_parameter("w", dp.Tensor.from_numpy(ctx, w, copy=False))

        def forward(self, x):
            return x * self.w

    w = np.full(3, 2.0, np.float32)
    ref = weakref.ref(w)
    m = Scale(ctx, w)
    del w
    settle()
    assert m(ctx.tensor([1.0, 2.0, 3.0])).tolist() == [2, 4, 6]
    del m
    settle()
    assert ref() is None


def test_torch_tensor_imported_by_dlpack_stays_alive(ctx):
    src = torch.full((8,), 3.0)
    t = dp.Tensor.from_dlpack(ctx, src)
    del src
    gc.collect()
    assert t.sum().item() == 24.0


def test_exported_memory_outlives_the_tensor_in_numpy_and_torch(ctx):
    t = ctx.full([5], 4.0)
    a = np.from_dlpack(t)
    tt = torch.from_dlpack(t)
    del t
    settle()
    assert a.sum() == 20 and tt.sum().item() == 20


def test_close_twice_is_safe_and_use_after_close_raises(ctx):
    t = ctx.zeros([2])
    m = dp.Linear(ctx, 2, 2)
    opt = dp.SGD(m)
    net = dp.DataParallel(m, ["cpu:0"])
    for obj in (t, m, opt, net):
        obj.close()
        obj.close()
        assert obj.closed
    with pytest.raises(dp.StateError, match="Tensor is closed"):
        t.numpy()
    with pytest.raises(dp.StateError, match="closed"):
        t + t
    with pytest.raises(dp.StateError, match="Linear is closed"):
        m(ctx.zeros([1, 2]))
    with pytest.raises(dp.StateError, match="SGD is closed"):
        opt.step()
    with pytest.raises(dp.StateError, match="DataParallel is closed"):
        net(ctx.zeros([1, 2]))
    assert repr(t) == "Tensor(closed)" and repr(m) == "Linear(closed)"


def test_with_blocks_release_early(ctx):
    a = np.zeros(10, np.float32)
    ref = weakref.ref(a)
    with dp.Tensor.from_numpy(ctx, a, copy=False) as t:
        assert t.shape == (10,)
    del a
    settle()
    assert ref() is None  # released at the end of the block, not when `t` goes
    with dp.Linear(ctx, 2, 2) as m, dp.SGD(m) as opt, dp.DataParallel(m, ["cpu:0"]) as net:
        net(ctx.zeros([2, 2])).sum().backward()
        opt.step()
    assert m.closed and opt.closed and net.closed


def test_module_keeps_children_alive_after_their_objects_close(ctx):
    child = dp.Linear(ctx, 3, 3)
    seq = dp.Sequential(ctx, child, dp.ReLU(ctx))
    child.close()
    assert seq(ctx.zeros([1, 3])).shape == (1, 3)


def test_no_leak_over_ten_thousand_create_release_cycles(ctx):
    data = np.arange(1024, dtype=np.float32)

    class Tiny(dp.Module):
        def forward(self, x):
            return x + 1

    def cycle():
        t = dp.Tensor.from_numpy(ctx, data)  # copy: 4 KiB
        b = dp.Tensor.from_numpy(ctx, np.ones(1024, np.float32), copy=False)  # borrow
        s = (t * b).sum()
        s.numpy()
        np.from_dlpack(b)
        b.numpy(copy=False)
        capsule = t.__dlpack__()
        del capsule
        m = dp.Linear(ctx, 4, 4)
        y = m(ctx.zeros([1, 4]))
        with dp.SGD(m) as opt:
            opt.zero_grad()
        custom = Tiny(ctx)
        custom(y)
        del custom, m, y

    for _ in range(1000):  # warm up: allocator pools, caches
        cycle()
    settle()
    before = rss_bytes()
    for _ in range(10000):
        cycle()
    settle()
    grown = rss_bytes() - before
    # One leaked 4 KiB tensor per cycle would be 40 MiB.
    assert grown < 4 * 1024 * 1024, f"RSS grew by {grown / 1e6:.1f} MB over 10,000 cycles"
