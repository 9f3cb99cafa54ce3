"""Edge cases checked against PyTorch, each once wrong here: an Adam update biased in
float32, the divisor's gradient overflowing, ReLU's gradient at NaN, batch norm of an empty
batch and a NumPy array divided by a smaller tensor."""
import numpy as np
import pytest
import torch

import dataparallel as dp


@pytest.mark.parametrize("beta2", [0.999, 0.9999])
def test_adam_float32_first_step_is_unbiased(ctx, beta2):
    # lr 1, tiny eps: every element of the first step is -1 exactly. 1 - beta2 taken in
    # float32 after rounding beta2 made it -1.0000067 (0.999) and -0.99991727 (0.9999).
    class P(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.register_parameter("w", ctx.zeros([4]))

        def forward(self):
            return self.w

    p = P(ctx)
    opt = dp.Adam(p, lr=1.0, betas=(0.9, beta2), eps=1e-12)
    g = np.array([1.0, 0.5, 2.0, 3.0], np.float32)
    (p.w * ctx.tensor(g)).sum().backward()
    opt.step()
    tw = torch.zeros(4, requires_grad=True)
    topt = torch.optim.Adam([tw], lr=1.0, betas=(0.9, beta2), eps=1e-12)
    tw.grad = torch.tensor(g)
    topt.step()
    np.testing.assert_allclose(p.w.numpy(), tw.detach().numpy(), rtol=2e-7, atol=0)
    np.testing.assert_allclose(p.w.numpy(), -1.0, rtol=2e-7)


@pytest.mark.parametrize("dtype,a,b", [
    ("float32", [1e30, 1e-20, 1.0], [1e20, 1e-25, 3.0]),
    ("float64", [1e300, 1e-200, 1.0], [1e200, 1e-160, 3.0]),
])
def test_the_divisors_gradient_does_not_overflow_where_torchs_does_not(ctx, dtype, a, b):
    ta = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True)
    tb = torch.tensor(b, dtype=getattr(torch, dtype), requires_grad=True)
    (ta / tb).sum().backward()
    x = ctx.tensor(np.array(a, dtype))
    y = ctx.tensor(np.array(b, dtype))
    x.requires_grad = True
    y.requires_grad = True
    (x / y).sum().backward()
    np.testing.assert_allclose(y.grad.numpy(), tb.grad.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), ta.grad.numpy(), rtol=1e-6)


def test_relu_passes_the_gradient_at_a_nan_input_as_torch_does(ctx):
    # float64 (float32's forward runs oneDNN, which the header says gives 0 for NaN).
    x = ctx.tensor(np.array([np.nan, 1.0, -1.0]))
    x.requires_grad = True
    (x.relu() * 0.5).sum().backward()
    tx = torch.tensor([np.nan, 1.0, -1.0], dtype=torch.float64, requires_grad=True)
    (torch.relu(tx) * 0.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())  # [0.5, 0.5, 0]


@pytest.mark.parametrize("shape", [(0, 3), (2, 3, 0, 2), (0, 3, 4, 4)])
def test_batch_norm_of_an_empty_batch_is_empty_in_training_too(ctx, shape):
    bn = dp.BatchNorm1d(ctx, 3) if len(shape) == 2 else dp.BatchNorm2d(ctx, 3)
    before = bn.running_mean.numpy()
    y = bn(ctx.zeros(list(shape)))
    assert y.shape == shape
    np.testing.assert_array_equal(bn.running_mean.numpy(), before)
    # One value per channel still has no variance to train on, as in PyTorch.
    with pytest.raises(dp.ShapeMismatchError, match="more than one value per channel"):
        bn(ctx.zeros([1, 3]) if len(shape) == 2 else ctx.zeros([1, 3, 1, 1]))


def test_an_array_divided_by_a_smaller_tensor_broadcasts(ctx):
    t = ctx.tensor(np.array([2.0, 4.0], np.float32))
    a = np.array([[1.0], [2.0], [3.0]], np.float32)
    np.testing.assert_allclose((a / t).numpy(), a / np.array([2.0, 4.0], np.float32))
    s = ctx.tensor(np.float32(2.0))  # 0-d
    np.testing.assert_allclose((np.array([1.0, 4.0], np.float32) / s).numpy(), [0.5, 2.0])


def test_batch_norm_inside_a_python_forward_behaves_as_the_layer_itself(ctx, rng):
    # Inside a Python forward the layer runs on the replica's tensors: it took no [N, C, L]
    # input, took [N, C] for BatchNorm2d, and never counted num_batches_tracked.
    class Wrap(dp.Module):
        def __init__(self, ctx, bn):
            super().__init__(ctx)
            self.bn = bn

        def forward(self, x):
            return self.bn(x)

    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    w = Wrap(ctx, dp.BatchNorm1d(ctx, 3))
    tb = torch.nn.BatchNorm1d(3)
    for _ in range(2):
        got = w(ctx.tensor(x)).numpy()
        want = tb(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.bn.running_mean.numpy(), tb.running_mean.numpy(), rtol=1e-5)
    np.testing.assert_allclose(w.bn.running_var.numpy(), tb.running_var.numpy(), rtol=1e-5)
    assert int(w.bn.num_batches_tracked.numpy()) == int(tb.num_batches_tracked) == 2
    with pytest.raises(dp.ShapeMismatchError, match=r"BatchNorm2d expects \[N, C, H, W\]"):
        Wrap(ctx, dp.BatchNorm2d(ctx, 3))(ctx.zeros([4, 3]))
