"""Tensor: creation, metadata, NumPy and DLPack exchange, ops, operators, autograd."""
import re

import numpy as np
import pytest
import torch

import dataparallel as dp


def test_tensor_from_python_data_is_float32_or_int64(ctx):
    assert ctx.tensor([[1.0, 2.0]]).dtype == dp.float32
    assert ctx.tensor([1, 2]).dtype == dp.int64
    assert ctx.tensor(np.zeros(2)).dtype == dp.float64  # NumPy arrays keep float64
    assert ctx.tensor(np.zeros(2, np.int32)).dtype == dp.int64
    assert ctx.tensor([1, 2], dtype="float64").dtype == dp.float64


def test_big_endian_arrays_keep_their_dtype_and_values(ctx):
    a = np.array([1.0 + 1e-12, -2.5], dtype=">f8")
    for t in (ctx.tensor(a), ctx.from_numpy(a)):
        assert t.dtype == dp.float64
        assert t.numpy().tolist() == a.tolist()
    big = np.array([2**40 + 1, -3], dtype=">i8")
    assert ctx.tensor(big).dtype == dp.int64 and ctx.tensor(big).numpy().tolist() == big.tolist()


def test_metadata(ctx):
    t = ctx.zeros([2, 3, 4], device="cpu:1")
    assert t.shape == (2, 3, 4) and t.ndim == 3 and t.dim() == 3
    assert t.size() == (2, 3, 4) and t.size(-1) == 4
    assert t.numel() == 24 and t.nbytes == 96 and len(t) == 2
    assert t.device == dp.cpu(1) and t.dtype == dp.float32
    assert t.context is ctx
    assert isinstance(t.data_ptr(), int) and t.data_ptr() != 0


def test_factories(ctx):
    assert ctx.full([2, 2], 3.5).numpy().tolist() == [[3.5, 3.5], [3.5, 3.5]]
    assert ctx.empty([3], dtype=dp.int64).shape == (3,)
    assert dp.zeros(ctx, 4).numpy().sum() == 0
    assert dp.full(ctx, (1,), 7, dtype=dp.int64).item() == 7


def test_from_numpy_copy_does_not_share_memory(ctx, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    t = dp.Tensor.from_numpy(ctx, a)
    a[0, 0] = 100
    assert t.numpy()[0, 0] != 100


def test_from_numpy_borrow_shares_memory_both_ways(ctx):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = dp.Tensor.from_numpy(ctx, a, copy=False)
    a[1, 2] = 42
    assert t.numpy()[1, 2] == 42
    t.copy_(np.ones((2, 3)))
    assert a.tolist() == [[1, 1, 1], [1, 1, 1]]


def test_borrow_rejects_what_it_cannot_share(ctx):
    with pytest.raises(dp.InvalidArgumentError, match="float32, float64, int64 or bfloat16"):
        dp.Tensor.from_numpy(ctx, np.zeros(3, np.int32), copy=False)
    with pytest.raises(dp.InvalidArgumentError, match="C-contiguous"):
        dp.Tensor.from_numpy(ctx, np.zeros((4, 4), np.float32)[:, ::2], copy=False)
    with pytest.raises(dp.InvalidArgumentError, match="CPU"):
        dp.Tensor.from_numpy(ctx, np.zeros(3, np.float32), copy=False, device="cuda:0")


def test_numpy_array_and_list_out(ctx):
    t = ctx.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert np.asarray(t).tolist() == [[1, 2], [3, 4]]
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    assert t.tolist() == [[1, 2], [3, 4]]
    assert float(t.sum()) == 10.0 and int(ctx.tensor([3])) == 3
    view = t.numpy(copy=False)
    view[0, 0] = -1
    assert t.numpy()[0, 0] == -1
    t.close()
    assert view[1, 1] == 4  # the view keeps the memory


def test_numpy_from_dlpack_shares_memory(ctx):
    t = ctx.tensor([1.0, 2.0, 3.0])
    a = np.from_dlpack(t)  # read-only: NumPy marks every DLPack import so
    t.copy_([1, 20, 3])
    assert a.tolist() == [1, 20, 3]
    assert t.__dlpack_device__() == (1, 0)


def test_torch_from_dlpack_shares_memory_both_ways(ctx):
    t = ctx.tensor([[1.0, 2.0], [3.0, 4.0]])
    tt = torch.from_dlpack(t)
    assert tt.dtype == torch.float32 and tuple(tt.shape) == (2, 2)
    tt[0, 1] = 9
    assert t.numpy()[0, 1] == 9
    t.copy_(np.zeros((2, 2)))
    assert tt.sum().item() == 0


def test_from_dlpack_imports_torch_and_numpy_without_copy(ctx):
    src = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    t = dp.Tensor.from_dlpack(ctx, src)
    assert t.dtype == dp.float64 and t.shape == (2, 3)
    src[0, 0] = 50
    assert t.numpy()[0, 0] == 50
    a = np.arange(4, dtype=np.int64)
    u = dp.from_dlpack(ctx, a)
    a[3] = -7
    assert u.tolist() == [0, 1, 2, -7]
    capsule = dp.Tensor.__dlpack__(ctx.tensor([5.0]))
    assert dp.Tensor.from_dlpack(ctx, capsule).item() == 5.0
    with pytest.raises(dp.InvalidArgumentError, match="capsule"):
        dp.Tensor.from_dlpack(ctx, capsule)  # already consumed


def test_unconsumed_capsule_releases_its_tensor(ctx):
    t = ctx.tensor([1.0])
    for _ in range(100):
        t.__dlpack__()  # dropped unconsumed: its destructor calls the deleter
    assert t.item() == 1.0


def test_elementwise_ops_and_operators_match_numpy(ctx, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    # Kept away from 1: the library's log loses relative precision there (reported).
    b = rng.uniform(1.5, 3, (3, 4)).astype(np.float32)
    ta, tb = ctx.tensor(a), ctx.tensor(b)
    cases = {
        "add": (ta + tb, a + b), "sub": (ta - tb, a - b), "mul": (ta * tb, a * b),
        "div": (ta / tb, a / b), "neg": (-ta, -a), "scalar add": (ta + 2, a + 2),
        "radd": (2 + ta, a + 2), "scalar sub": (ta - 1.5, a - 1.5), "rsub": (1 - ta, 1 - a),
        "scale": (ta * 3, a * 3), "rmul": (3 * ta, 3 * a), "scalar div": (ta / 4, a / 4),
        "rdiv": (2 / tb, 2 / b), "array operand": (ta + b, a + b),
        "broadcast": (ta + ctx.tensor(b[0]), a + b[0]), "matmul": (ta @ ctx.tensor(b.T), a @ b.T),
        "relu": (ta.relu(), np.maximum(a, 0)), "tanh": (ta.tanh(), np.tanh(a)),
        "sigmoid": (ta.sigmoid(), 1 / (1 + np.exp(-a))), "exp": (ta.exp(), np.exp(a)),
        "log": (tb.log(), np.log(b)), "sum": (ta.sum(), a.sum()),
        "sum dim": (ta.sum(1, keepdim=True), a.sum(1, keepdims=True)),
        "mean": (ta.mean(), a.mean()), "mean dim": (ta.mean(0), a.mean(0)),
        "softmax": (ta.softmax(1), np.exp(a) / np.exp(a).sum(1, keepdims=True)),
        "log_softmax": (ta.log_softmax(1), a - np.log(np.exp(a).sum(1, keepdims=True))),
        "reshape": (ta.reshape(4, 3), a.reshape(4, 3)), "view -1": (ta.view(-1), a.reshape(-1)),
        "flatten": (ta.flatten(), a.reshape(-1)),
    }
    for name, (got, want) in cases.items():
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6, err_msg=name)
    assert ta.argmax(1).tolist() == a.argmax(1).tolist()
    gelu = torch.nn.functional.gelu(torch.from_numpy(a)).numpy()
    np.testing.assert_allclose(ta.gelu().numpy(), gelu, rtol=1e-5, atol=1e-6)


def test_functional_ops_match_torch(ctx, rng):
    F = torch.nn.functional
    x = rng.standard_normal((2, 3, 6, 6)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    tx, tw, tb = (torch.from_numpy(v) for v in (x, w, b))
    dx, dw, db = ctx.tensor(x), ctx.tensor(w), ctx.tensor(b)

    def close(got, want):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)

    close(dp.conv2d(dx, dw, db, stride=1, padding=1), F.conv2d(tx, tw, tb, padding=1))
    close(dp.max_pool2d(dx, 2), F.max_pool2d(tx, 2))
    close(dp.avg_pool2d(dx, 3, stride=2, padding=1), F.avg_pool2d(tx, 3, 2, 1))
    m = rng.standard_normal((5, 3)).astype(np.float32)
    lw = rng.standard_normal((2, 3)).astype(np.float32)
    close(dp.linear(ctx.tensor(m), ctx.tensor(lw)),
          F.linear(torch.from_numpy(m), torch.from_numpy(lw)))
    rm, rv = ctx.zeros([3]), ctx.full([3], 1.0)
    trm, trv = torch.zeros(3), torch.ones(3)
    close(dp.batch_norm(dx, rm, rv, training=True), F.batch_norm(tx, trm, trv, training=True))
    close(rm, trm)
    close(rv, trv)
    idx = np.array([[0, 2], [1, 1]])
    emb = rng.standard_normal((3, 4)).astype(np.float32)
    close(dp.embedding(ctx.tensor(idx), ctx.tensor(emb)),
          F.embedding(torch.from_numpy(idx), torch.from_numpy(emb)))
    logits = rng.standard_normal((4, 5)).astype(np.float32)
    target = np.array([0, 4, 2, 1])
    tl, tt = torch.from_numpy(logits), torch.from_numpy(target)
    close(dp.cross_entropy(ctx.tensor(logits), ctx.tensor(target)), F.cross_entropy(tl, tt))
    close(dp.nll_loss(ctx.tensor(logits).log_softmax(1), ctx.tensor(target)),
          F.nll_loss(F.log_softmax(tl, 1), tt))
    close(dp.mse_loss(ctx.tensor(logits), ctx.tensor(logits * 0)), F.mse_loss(tl, tl * 0))
    a, c = ctx.tensor(m[:2]), ctx.tensor(m[2:])
    close(dp.cat([a, c]), torch.from_numpy(m))
    pieces = ctx.tensor(m).split([2, 3])
    assert [p.shape for p in pieces] == [(2, 3), (3, 3)]
    close(dp.sub(a, a), torch.zeros(2, 3))
    close(dp.scale(a, 2), torch.from_numpy(m[:2] * 2))
    d = dp.dropout(ctx.full([1000], 1.0), p=0.5, training=True, seed=3)
    assert set(np.unique(d.numpy())) <= {0.0, 2.0}
    assert dp.dropout(ctx.full([4], 1.0), 0.5, training=False).tolist() == [1, 1, 1, 1]


def test_to_device_and_dtype(ctx):
    t = ctx.tensor([1.5, 2.5])
    assert t.to("cpu:1").device == dp.cpu(1)
    assert t.to(dtype=dp.int64).tolist() == [1, 2]
    assert t.cpu(1).to(dtype="float64").dtype == dp.float64
    c = t.clone()
    c.copy_([0, 0])
    assert t.tolist() == [1.5, 2.5]


def test_autograd_gradients_match_torch(ctx, rng):
    a = rng.standard_normal((3, 4)).astype(np.float32)
    w = rng.standard_normal((4, 2)).astype(np.float32)
    x = ctx.tensor(a).requires_grad_()
    y = ctx.tensor(w)
    y.requires_grad = True
    assert x.requires_grad and x.grad is None
    loss = ((x @ y).tanh() * 2).sum()
    loss.backward()
    tx = torch.from_numpy(a).requires_grad_()
    ty = torch.from_numpy(w).requires_grad_()
    ((tx @ ty).tanh() * 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y.grad.numpy(), ty.grad.numpy(), rtol=1e-5, atol=1e-6)
    x.zero_grad()
    assert x.grad is None
    assert not x.detach().requires_grad


def test_backward_with_explicit_gradient_and_retain_graph(ctx):
    x = ctx.tensor([1.0, 2.0]).requires_grad_()
    y = x * 3
    y.backward(ctx.tensor([1.0, 1.0]), retain_graph=True)
    dp.backward(y, ctx.tensor([1.0, 0.0]))
    assert x.grad.tolist() == [6, 3]


def test_no_grad_and_grad_mode_switches(ctx):
    x = ctx.tensor([1.0]).requires_grad_()
    assert dp.is_grad_enabled()
    with dp.no_grad():
        assert not dp.is_grad_enabled()
        assert not (x * 2).requires_grad
        with dp.enable_grad():
            assert (x * 2).requires_grad
    assert dp.is_grad_enabled()

    @dp.no_grad()
    def infer():
        return (x * 2).requires_grad
    assert infer() is False
    with dp.set_grad_enabled(False):
        assert not dp.is_grad_enabled()
    assert dp.is_grad_enabled()


def test_version_counts_in_place_writes(ctx):
    t = ctx.zeros([2])
    v = t.version
    t.copy_([1, 2])
    assert t.version > v


def test_repr_shows_values_dtype_and_device(ctx):
    assert repr(ctx.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    r = repr(ctx.tensor([1, 2], device="cpu:1"))
    assert "int64" in r and "cpu:1" in r
    assert "<shape (2000,)>" in repr(ctx.zeros([2000]))


def test_tensor_cannot_be_constructed_directly():
    with pytest.raises(TypeError, match="dataparallel.tensor"):
        dp.Tensor()


def test_context_and_module_level_factories_agree(ctx):
    a = np.arange(4, dtype=np.float32)
    assert ctx.from_numpy(a).tolist() == dp.from_numpy(ctx, a).tolist() == [0, 1, 2, 3]
    assert ctx.from_numpy(a, copy=False, device="cpu:1").device == dp.cpu(1)
    assert ctx.from_dlpack(a).tolist() == [0, 1, 2, 3]
    assert dp.tensor(ctx, 2.5).shape == () and dp.tensor(ctx, 2.5).item() == 2.5
    assert dp.empty(ctx, [2, 2]).shape == (2, 2)


def test_nan_and_infinities_go_through_ops_as_in_torch(ctx):
    """exp(NaN), -inf under padded max pooling and NaN in float64 relu, max pooling and
    softmax, forward and backward, against torch (the float32 oneDNN kernels that skip NaN
    are documented in the header)."""
    def both(fn, tfn, a, requires_grad=True):
        x = ctx.tensor(a)
        x.requires_grad = requires_grad
        tx = torch.tensor(a, requires_grad=requires_grad)
        y, ty = fn(x), tfn(tx)
        np.testing.assert_array_equal(y.numpy(), ty.detach().numpy())
        if requires_grad:
            y.sum().backward()
            ty.sum().backward()
            np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())

    both(dp.exp, torch.exp, np.array([np.nan, 1.0, -np.inf], np.float32))
    both(lambda x: dp.max_pool2d(x, 2, 2, 1), lambda x: torch.nn.functional.max_pool2d(x, 2, 2, 1),
         np.full((1, 1, 3, 3), -np.inf, np.float32))
    nan_row = np.array([[1.0, np.nan, 2.0, 0.5]])
    both(dp.relu, torch.relu, nan_row, requires_grad=False)
    both(lambda x: dp.softmax(x, 1), lambda x: torch.softmax(x, 1), nan_row, requires_grad=False)
    both(lambda x: dp.max_pool2d(x, 2), lambda x: torch.nn.functional.max_pool2d(x, 2),
         np.array([[[[1.0, np.nan], [3.0, 2.0]]]]), requires_grad=False)


def test_dividing_by_a_python_number_is_a_true_division(ctx):
    for a, s in ((np.array([1e-310, 1.0]), 1e-310), (np.array([1e-39, 3.0], np.float32), 1e-39),
                 (np.array([1.0, -1.0, 0.0], np.float32), 0.0), (np.array([3.0, 6.0]), 3.0)):
        np.testing.assert_array_equal((ctx.tensor(a) / s).numpy(), (torch.tensor(a) / s).numpy())


def test_numpy_scalars_work_as_python_numbers_and_keep_autograd(ctx):
    w = ctx.tensor(np.array([1.0, 2.0], np.float32))
    w.requires_grad = True
    for y, want in ((np.float32(2) * w, [2, 4]), (np.float64(2) + w, [3, 4]),
                    (w * np.float32(0.5), [0.5, 1]), (w + np.int64(1), [2, 3]),
                    (np.int32(1) - w, [0, -1]), (w - np.float32(1), [0, 1])):
        assert isinstance(y, dp.Tensor), type(y)  # not a NumPy array: the graph is kept
        np.testing.assert_allclose(y.numpy(), want)
    (np.float32(3) * w).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [3, 3])
    np.testing.assert_array_equal(ctx.full([2], np.float32(0.5)).numpy(), [0.5, 0.5])
    assert ctx.zeros(np.int64(3)).shape == (3,)
    # Other NumPy functions take a tensor as the array of its values.
    np.testing.assert_allclose(np.sqrt(w), np.sqrt([1.0, 2.0]))
    assert np.isfinite(w).all() and np.maximum(np.array([0.0, 5.0]), w).tolist() == [1.0, 5.0]
    assert isinstance(np.array([1.0, 1.0], np.float32) * w, dp.Tensor)
    assert ctx.zeros((np.int64(2), np.int32(3))).shape == (2, 3)


def test_floats_become_int64_by_the_librarys_rule(ctx):
    # Truncated toward zero, saturating, NaN as 0: what the library's own conversion (and
    # Java's Tensor.of) gives, where NumPy's cast gives INT64_MIN and a warning.
    values = [np.nan, 1e30, -1e30, np.inf, -2.7, 2.7, 0.0]
    expected = [0, 2**63 - 1, -2**63, 2**63 - 1, -2, 2, 0]
    assert ctx.tensor(values, dtype=dp.float64).to(dtype="int64").tolist() == expected
    assert ctx.tensor(values, dtype="int64").tolist() == expected
    assert ctx.zeros(7, dtype="int64").copy_(np.array(values)).tolist() == expected
    assert ctx.tensor(np.float32(-3.5), dtype="int64").tolist() == -3


def test_unsigned_values_past_int64_are_refused_not_wrapped(ctx):
    big = np.array([1, 2**63 + 4], np.uint64)
    with pytest.raises(OverflowError, match="9223372036854775812"):
        dp.tensor(ctx, big)
    with pytest.raises(OverflowError):
        dp.Tensor.from_numpy(ctx, big)
    assert dp.tensor(ctx, np.array([1, 2**63 - 1], np.uint64)).numpy().tolist() == [1, 2**63 - 1]


def test_tensors_do_all_their_arithmetic_after_their_context_is_closed():
    # The Context docs promise tensors keep working after close(): operands that are
    # numbers or arrays are made in the tensor's own context, which it keeps alive.
    with dp.Context(cpu_devices=2, load_cuda=False) as ctx:
        t = ctx.tensor(np.array([1.0, 2.0, 4.0], np.float32), device="cpu:1")
    for got, want in ((t / 2, [0.5, 1, 2]), (1 / t, [1, 0.5, 0.25]), (t + [1, 1, 1], [2, 3, 5]),
                      ([10, 10, 10] - t, [9, 8, 6]), (t * 2, [2, 4, 8])):
        np.testing.assert_allclose(got.numpy(), want)
        assert got.device == dp.cpu(1)


def test_numpy_integers_and_floats_are_taken_wherever_numbers_are(ctx):
    t = ctx.tensor(np.ones((2, 3), np.float32))
    np.testing.assert_array_equal(t.sum(dim=np.int64(1)).numpy(), [3, 3])
    lin = dp.Linear(ctx, np.int64(3), np.int32(2))
    assert lin(t).shape == (2, 2)
    opt = dp.SGD(lin, lr=np.float32(0.25))
    assert opt.lr == 0.25
    with pytest.raises(TypeError):
        t.sum(dim=1.5)  # a float is still not an index
    with pytest.raises(OverflowError, match="does not fit in int32_t"):
        t.sum(dim=2**40)


@pytest.mark.parametrize("other", [None, "1.5", [None, 1], b"1"],
                         ids=["None", "str", "list-with-None", "bytes"])
def test_arithmetic_with_something_not_a_number_is_a_type_error(ctx, other):
    # NumPy casts None to nan and "1.5" to 1.5 when asked for float32: no silent nan.
    x = dp.tensor(ctx, [1.0, 2.0])
    for combine in (lambda: x + other, lambda: x * other, lambda: other - x,
                    lambda: x.copy_(other)):
        with pytest.raises(TypeError, match="only from numbers"):
            combine()
    with pytest.raises(TypeError, match="only from numbers"):
        dp.tensor(ctx, [None], dtype="float32")


def test_an_int64_tensor_combines_with_integers_and_refuses_fractions(ctx):
    i = dp.tensor(ctx, [3, 4])
    assert (i + 1).dtype == dp.int64 and (i + 1).tolist() == [4, 5]
    assert (1 + i).tolist() == [4, 5]
    assert (i - 1).tolist() == [2, 3] and (10 - i).tolist() == [7, 6]
    assert (i * 2).tolist() == [6, 8] and (2 * i).tolist() == [6, 8]
    assert (i + np.int64(1)).tolist() == [4, 5]
    with pytest.raises(TypeError, match="int64 tensor and 1.5: no type promotion"):
        i + 1.5


def test_more_devices_than_1024_are_listed_whole(ctx):
    # The binding read at most 1024 devices into a fixed array and cut the list there.
    big = dp.Context(cpu_devices=1030, load_cuda=False)
    try:
        net = dp.DataParallel(dp.Linear(big, 2, 2))
        assert len(net.devices) == 1030
        assert net.devices[-1] == big.devices("cpu")[-1]
    finally:
        big.close()


def test_a_non_tensor_where_a_tensor_belongs_is_a_type_error_naming_the_argument(ctx):
    # Before, each failed as AttributeError: 'numpy.ndarray' object has no attribute '_h'.
    x = dp.tensor(ctx, np.ones((2, 4), np.float32))
    lin = dp.Linear(ctx, 4, 3)
    net = dp.DataParallel(lin, device_ids=ctx.devices("cpu"))
    cases = [
        (lambda: dp.add(x, None), "b must be a dataparallel Tensor, not NoneType"),
        (lambda: dp.matmul(np.ones((2, 4)), x), "a must be a dataparallel Tensor, not ndarray"),
        (lambda: dp.cat([x, "y"]), "tensors[1] must be a dataparallel Tensor, not str"),
        (lambda: lin(np.ones((2, 4), np.float32)), "input 0 must be a dataparallel Tensor"),
        (lambda: net(np.ones((2, 4), np.float32)), "input 0 must be a dataparallel Tensor"),
        (lambda: lin(x).sum().backward(np.ones(())), "grad must be a dataparallel Tensor"),
        (lambda: dp.SGD(None, lr=0.1), "module must be a dataparallel Module, not NoneType"),
        (lambda: dp.DataParallel(None), "module must be a dataparallel Module, not NoneType"),
    ]
    for call, message in cases:
        with pytest.raises(TypeError, match=re.escape(message)):
            call()


def test_a_device_tuple_may_name_its_type(ctx):
    for spelling in (("cpu", 1), (dp.DeviceType.cpu, 1), (0, 1), "cpu:1"):
        assert dp.tensor(ctx, [1.0], device=spelling).device == dp.Device(dp.DeviceType.cpu, 1)
    with pytest.raises(ValueError, match="neither \"cpu\" nor \"cuda\""):
        dp.tensor(ctx, [1.0], device=("tpu", 0))
