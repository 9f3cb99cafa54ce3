"""SGD, Adam and AdamW follow torch.optim step for step."""
import numpy as np
import pytest
import torch

import dataparallel as dp

OPTIMIZERS = [
    ("SGD", lambda m: dp.SGD(m, lr=0.1), lambda p: torch.optim.SGD(p, lr=0.1)),
    ("SGD momentum nesterov decay",
     lambda m: dp.SGD(m, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-3)),
    ("SGD dampening", lambda m: dp.SGD(m, lr=0.05, momentum=0.5, dampening=0.3),
     lambda p: torch.optim.SGD(p, lr=0.05, momentum=0.5, dampening=0.3)),
    ("Adam", lambda m: dp.Adam(m, lr=0.01, betas=(0.8, 0.99), eps=1e-7),
     lambda p: torch.optim.Adam(p, lr=0.01, betas=(0.8, 0.99), eps=1e-7)),
    ("Adam decay", lambda m: dp.Adam(m, lr=0.01, weight_decay=0.1),
     lambda p: torch.optim.Adam(p, lr=0.01, weight_decay=0.1)),
    ("AdamW", lambda m: dp.AdamW(m, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01)),
]


@pytest.mark.parametrize("name,make,make_torch", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_five_steps_match_torch(ctx, rng, name, make, make_torch):
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(6, 5), torch.nn.Tanh(), torch.nn.Linear(5, 3))
    ours = dp.Sequential(ctx, dp.Linear(ctx, 6, 5), dp.Tanh(ctx), dp.Linear(ctx, 5, 3))
    ours.load_state_dict(theirs.state_dict())
    opt, topt = make(ours), make_torch(theirs.parameters())
    x = rng.standard_normal((8, 6)).astype(np.float32)
    y = rng.integers(0, 3, 8)
    for _ in range(5):
        opt.zero_grad()
        dp.cross_entropy(ours(ctx.tensor(x)), ctx.tensor(y)).backward()
        opt.step()
        topt.zero_grad()
        loss = torch.nn.functional.cross_entropy(theirs(torch.from_numpy(x)), torch.from_numpy(y))
        loss.backward()
        topt.step()
    for (n, p), (_, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        # Adam divides by sqrt(v): where a gradient is near zero, float32 noise in it moves the
        # step by up to ~1e-3 of lr (0.01); 5e-5 is well below a step and above that noise.
        np.testing.assert_allclose(p.numpy(), tp.detach().numpy(), rtol=1e-5, atol=5e-5, err_msg=n)


def test_learning_rate_can_be_read_and_changed(ctx):
    m = dp.Linear(ctx, 2, 2)
    opt = dp.SGD(m, lr=0.5)
    assert opt.lr == 0.5
    opt.lr = 0.25
    assert opt.lr == 0.25
    assert dp.AdamW(m).lr == pytest.approx(1e-3)


def test_optimizer_of_a_data_parallel_trains_its_module(ctx):
    m = dp.Linear(ctx, 2, 1)
    net = dp.DataParallel(m, ["cpu:0", "cpu:1"])
    opt = dp.SGD(net, lr=0.1)
    before = m.weight.numpy()
    net(ctx.full([4, 2], 1.0)).sum().backward()
    opt.step()
    assert not np.array_equal(before, m.weight.numpy())


def test_a_child_named_module_is_not_taken_for_a_data_parallel(ctx, tmp_path):
    # PyTorch's wrapper pattern: a module whose child is called "module". Its optimizer
    # must train every parameter, and its checkpoint hold every entry under its own name.
    class Wrapper(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.module = dp.Linear(ctx, 2, 2)
            self.register_parameter("scale", ctx.full([2], 1.0))

        def forward(self, x):
            return self.module(x) * self.scale

    w = Wrapper(ctx)
    opt = dp.SGD(w, lr=0.1)
    w(ctx.full([3, 2], 1.0)).sum().backward()
    opt.step()
    assert not np.array_equal(w.scale.numpy(), [1.0, 1.0])
    dp.save(w, tmp_path / "w.safetensors")
    dp.save_checkpoint(tmp_path / "c.safetensors", w, opt)
    from safetensors_plain import load_file
    for name in ("w.safetensors", "c.safetensors"):
        keys = {k for k in load_file(tmp_path / name) if k and not k.startswith("optimizer/")}
        assert keys == {"scale", "module.weight", "module.bias"}, (name, keys)
