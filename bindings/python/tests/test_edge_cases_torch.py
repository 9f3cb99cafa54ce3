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
