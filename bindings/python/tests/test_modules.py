"""Modules: every layer against PyTorch, Sequential, Python-defined modules (alone, nested,
under DataParallel), parameters, buffers, modes, devices, files."""
import numpy as np
import pytest
import torch

import dataparallel as dp


def copy_weights(ours, theirs):
    ours.load_state_dict({k: v for k, v in theirs.state_dict().items()})


def close(got, want, tol=1e-5):
    want = want.detach().numpy() if hasattr(want, "detach") else want
    np.testing.assert_allclose(got.numpy(), want, rtol=tol, atol=tol)


LAYERS = [
    ("Linear", lambda c: dp.Linear(c, 5, 3), lambda: torch.nn.Linear(5, 3), (4, 5)),
    ("Linear no bias", lambda c: dp.Linear(c, 5, 3, bias=False),
     lambda: torch.nn.Linear(5, 3, bias=False), (4, 5)),
    ("Conv2d", lambda c: dp.Conv2d(c, 2, 4, 3, stride=2, padding=1),
     lambda: torch.nn.Conv2d(2, 4, 3, stride=2, padding=1), (2, 2, 7, 7)),
    ("ReLU", dp.ReLU, torch.nn.ReLU, (3, 4)),
    ("GELU", dp.GELU, torch.nn.GELU, (3, 4)),
    ("Tanh", dp.Tanh, torch.nn.Tanh, (3, 4)),
    ("Sigmoid", dp.Sigmoid, torch.nn.Sigmoid, (3, 4)),
    ("BatchNorm1d", lambda c: dp.BatchNorm1d(c, 4), lambda: torch.nn.BatchNorm1d(4), (6, 4)),
    ("BatchNorm2d", lambda c: dp.BatchNorm2d(c, 3), lambda: torch.nn.BatchNorm2d(3), (2, 3, 4, 4)),
    ("MaxPool2d", lambda c: dp.MaxPool2d(c, 2), lambda: torch.nn.MaxPool2d(2), (2, 3, 6, 6)),
    ("AvgPool2d", lambda c: dp.AvgPool2d(c, 3, stride=1, padding=1),
     lambda: torch.nn.AvgPool2d(3, stride=1, padding=1), (2, 3, 5, 5)),
    ("Flatten", dp.Flatten, torch.nn.Flatten, (2, 3, 4)),
]


@pytest.mark.parametrize("name,make,make_torch,shape", LAYERS, ids=[c[0] for c in LAYERS])
def test_layer_forward_and_backward_match_torch(ctx, rng, name, make, make_torch, shape):
    ours, theirs = make(ctx), make_torch()
    copy_weights(ours, theirs)
    x = rng.standard_normal(shape).astype(np.float32)
    tx = torch.from_numpy(x).requires_grad_()
    dx = ctx.tensor(x).requires_grad_()
    y, ty = ours(dx), theirs(tx)
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(dx.grad, tx.grad)
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn
        close(p.grad, tp.grad)
    for (n, b), (tn, tb) in zip(ours.named_buffers(), theirs.named_buffers()):
        assert n == tn
        close(b, tb)


def test_embedding_and_dropout(ctx):
    emb = dp.Embedding(ctx, 10, 3)
    idx = ctx.tensor([[1, 2], [9, 0]])
    assert emb(idx).shape == (2, 2, 3)
    np.testing.assert_array_equal(emb(idx).numpy()[1, 0], emb.weight.numpy()[9])
    drop = dp.Dropout(ctx, 0.5)
    x = ctx.full([2000], 1.0)
    y = drop(x).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0} and 0.4 < (y == 0).mean() < 0.6
    drop.eval()
    assert drop(x).numpy().min() == 1.0
    assert repr(drop) == "Dropout(p=0.5)" and repr(emb) == "Embedding(10, 3)"


def test_dropouts_in_a_python_forward_draw_their_own_masks_from_the_context_seed():
    # Two Dropout layers in one Python forward: each draws a fresh mask from the context's
    # seed sequence, as the library's own Dropout modules do; the same seed repeats them.
    def masks(seed):
        with dp.Context(cpu_devices=2, load_cuda=False, seed=seed) as ctx:
            class Twice(dp.Module):
                def __init__(self, ctx):
                    super().__init__(ctx)
                    self.d1 = dp.Dropout(ctx, 0.5)
                    self.d2 = dp.Dropout(ctx, 0.5)

                def forward(self, x):
                    return dp.cat([self.d1(x), self.d2(x)])

            x = ctx.full([64], 1.0)
            y = Twice(ctx)(x).numpy()
            under_dp = dp.DataParallel(Twice(ctx), ["cpu:0", "cpu:1"])(ctx.full([64], 1.0))
            return y[:64], y[64:], under_dp.numpy()

    a1, a2, a_dp = masks(0)
    assert not np.array_equal(a1, a2)
    assert set(np.unique(np.concatenate([a1, a2, a_dp]))) == {0.0, 2.0}
    b1, b2, _ = masks(0)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)
    c1, _, _ = masks(123)
    assert not np.array_equal(a1, c1)


def test_sequential_names_indexing_and_repr(ctx):
    seq = dp.Sequential(ctx, dp.Linear(ctx, 4, 8), dp.ReLU(ctx))
    seq.append(dp.Linear(ctx, 8, 2))
    assert len(seq) == 3 and isinstance(seq[1], dp.ReLU) and isinstance(list(seq)[2], dp.Linear)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert seq.type_name == "Sequential"
    assert "(2): Linear(in_features=8, out_features=2, bias=True)" in repr(seq)
    assert seq(ctx.zeros([5, 4])).shape == (5, 2)


def test_parameters_buffers_state_dict_and_get(ctx):
    bn = dp.BatchNorm1d(ctx, 3)
    assert [n for n, _ in bn.named_buffers()] == ["running_mean", "running_var",
                                                  "num_batches_tracked"]
    assert len(bn.parameters()) == 2 and len(bn.buffers()) == 3
    state = bn.state_dict()
    assert set(state) == {"weight", "bias", "running_mean", "running_var", "num_batches_tracked"}
    state["weight"] = np.full(3, 2.0, np.float32)
    bn.load_state_dict(state)
    assert bn.get("weight").tolist() == [2, 2, 2] and bn.weight.tolist() == [2, 2, 2]
    with pytest.raises(KeyError, match="missing"):
        bn.load_state_dict({"weight": np.zeros(3)})
    with pytest.raises(ValueError, match="shape"):
        bn.load_state_dict({**state, "bias": np.zeros(4)})
    with pytest.raises(dp.OutOfRangeError, match="nope"):
        bn.get("nope")


def test_train_eval_to_and_zero_grad(ctx):
    m = dp.Sequential(ctx, dp.Linear(ctx, 2, 2), dp.Dropout(ctx, 0.1))
    assert m.training and m[1].training
    assert m.eval() is m and not m.training and not m[1].training
    m.train()
    assert m.to("cpu:1") is m
    assert all(p.device == dp.cpu(1) for p in m.parameters())
    y = m(ctx.zeros([1, 2], device="cpu:1")).sum()
    y.backward()
    assert m[0].weight.grad is not None
    m.zero_grad()
    assert m[0].weight.grad is None


def test_save_and_load_round_trip(ctx, tmp_path):
    a, b = dp.Linear(ctx, 3, 2), dp.Linear(ctx, 3, 2)
    a.save(tmp_path / "a.safetensors")
    b.load(tmp_path / "a.safetensors")
    np.testing.assert_array_equal(a.weight.numpy(), b.weight.numpy())
    with pytest.raises(dp.FormatError, match="weight"):
        dp.Linear(ctx, 4, 2).load(tmp_path / "a.safetensors")


class Block(dp.Module):
    """fc -> relu -> * scale + shift (a parameter and a buffer)."""

    def __init__(self, ctx, n):
        super().__init__(ctx)
        self.fc = dp.Linear(ctx, n, n)
        self.register_parameter("scale", ctx.full([n], 0.5))
        self.register_buffer("shift", ctx.full([n], 0.25))

    def forward(self, x):
        return self.fc(x).relu() * self.scale + self.shift


class TorchBlock(torch.nn.Module):
    def __init__(self, n):
        super().__init__()
        self.fc = torch.nn.Linear(n, n)
        self.scale = torch.nn.Parameter(torch.full((n,), 0.5))
        self.register_buffer("shift", torch.full((n,), 0.25))

    def forward(self, x):
        return torch.relu(self.fc(x)) * self.scale + self.shift


def test_python_module_forward_parameters_and_gradients_match_torch(ctx, rng):
    ours, theirs = Block(ctx, 4), TorchBlock(4)
    copy_weights(ours, theirs)
    assert [n for n, _ in ours.named_parameters()] == ["scale", "fc.weight", "fc.bias"]
    assert [n for n, _ in ours.named_buffers()] == ["shift"]
    assert ours.type_name == "Block" and "(fc): Linear" in repr(ours)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    y, ty = ours(ctx.tensor(x)), theirs(torch.from_numpy(x))
    close(y, ty)
    y.sum().backward()
    ty.sum().backward()
    close(ours.scale.grad, theirs.scale.grad)
    close(ours.fc.weight.grad, theirs.fc.weight.grad)
    assert ours.children() == [ours.fc] and ours.named_children() == [("fc", ours.fc)]


def test_python_module_under_data_parallel_uses_each_replicas_parameters(ctx, rng):
    ours, theirs = Block(ctx, 4), TorchBlock(4)
    copy_weights(ours, theirs)
    net = dp.DataParallel(ours, ["cpu:0", "cpu:1"])
    x = rng.standard_normal((8, 4)).astype(np.float32)
    y, ty = net(ctx.tensor(x)), theirs(torch.from_numpy(x))
    close(y, ty)
    (y * y).mean().backward()
    (ty * ty).mean().backward()
    close(ours.fc.weight.grad, theirs.fc.weight.grad)
    close(ours.scale.grad, theirs.scale.grad)


def test_python_modules_nest_in_sequential_and_in_each_other(ctx, rng):
    class Outer(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.body = dp.Sequential(ctx, Block(ctx, 4), dp.Linear(ctx, 4, 2))
            self.head = Block(ctx, 2)

        def forward(self, x):
            return self.head(self.body(x))

    m = Outer(ctx)
    names = [n for n, _ in m.named_parameters()]
    assert "body.0.fc.weight" in names and "head.scale" in names
    x = ctx.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    direct = m(x).numpy()
    net = dp.DataParallel(m, ["cpu:0", "cpu:1"])
    np.testing.assert_allclose(net(x).numpy(), direct, rtol=1e-6)
    seq = dp.Sequential(ctx, Block(ctx, 4), dp.ReLU(ctx))  # a Python module inside a library one
    assert dp.DataParallel(seq, ["cpu:0", "cpu:1"])(x).shape == (6, 4)


def test_python_module_with_several_inputs_and_outputs(ctx):
    class Pair(dp.Module):
        def forward(self, a, b):
            return a + b, a * b

    s, p = Pair(ctx)(ctx.tensor([1.0, 2.0]), ctx.tensor([3.0, 4.0]))
    assert s.tolist() == [4, 6] and p.tolist() == [3, 8]


def test_module_attribute_rules(ctx):
    m = Block(ctx, 2)
    with pytest.raises(AttributeError, match="in place"):
        m.scale = ctx.zeros([2])
    m.note = "plain attributes are fine"
    assert m.note.startswith("plain")

    class Forgot(dp.Module):
        def __init__(self, ctx):
            self.fc = dp.Linear(ctx, 2, 2)

    with pytest.raises(dp.StateError, match="super"):
        Forgot(ctx)
    with pytest.raises(dp.CallbackError, match="NotImplementedError"):
        dp.Module(ctx)(ctx.zeros([1]))
