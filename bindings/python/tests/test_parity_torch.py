"""Parity with PyTorch on the benchmark's models (bench/torch_reference.py's
make_model: the MLP 784-512-256-10 and the CNN): with identical weights, the same outputs
and gradients to 1e-5 relative, alone and under DataParallel over two CPU devices; and a
state saved by either side loads in the other through safetensors."""
import numpy as np
import pytest
import torch

import dataparallel as dp
from safetensors_plain import load_file, save_file

TOL = 1e-5


def torch_model(name):
    """torch_reference.make_model."""
    nn = torch.nn
    if name == "mlp":
        return nn.Sequential(nn.Linear(784, 512), nn.ReLU(),
                             nn.Linear(512, 256), nn.ReLU(), nn.Linear(256, 10))
    return nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                         nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10))


def our_model(ctx, name):
    if name == "mlp":
        return dp.Sequential(ctx, dp.Linear(ctx, 784, 512), dp.ReLU(ctx),
                             dp.Linear(ctx, 512, 256), dp.ReLU(ctx), dp.Linear(ctx, 256, 10))
    return dp.Sequential(ctx, dp.Conv2d(ctx, 1, 32, 3, padding=1), dp.ReLU(ctx),
                         dp.MaxPool2d(ctx, 2), dp.Conv2d(ctx, 32, 64, 3, padding=1), dp.ReLU(ctx),
                         dp.MaxPool2d(ctx, 2),
                         dp.Flatten(ctx), dp.Linear(ctx, 3136, 128), dp.ReLU(ctx),
                         dp.Linear(ctx, 128, 10))


def batch(name, n=32):
    rng = np.random.default_rng(1)
    x = rng.uniform(0, 1, (n, 784)).astype(np.float32)  # pixels / 255, as the benchmark
    if name == "cnn":
        x = x.reshape(n, 1, 28, 28)
    return x, rng.integers(0, 10, n)


def assert_relative(got, want, what):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
    assert err <= TOL, f"{what}: relative error {err:.2e} > {TOL:.0e}"


def torch_reference(name, x, y):
    torch.manual_seed(0)
    theirs = torch_model(name)
    out = theirs(torch.from_numpy(x))
    torch.nn.functional.cross_entropy(out, torch.from_numpy(y)).backward()
    return theirs, out.detach().numpy()


@pytest.mark.parametrize("name", ["mlp", "cnn"])
@pytest.mark.parametrize("devices", [None, ["cpu:0", "cpu:1"]], ids=["module", "data_parallel"])
def test_outputs_and_gradients_match_torch(ctx, name, devices):
    x, y = batch(name)
    theirs, want = torch_reference(name, x, y)
    ours = our_model(ctx, name)
    ours.load_state_dict(theirs.state_dict())
    run = ours if devices is None else dp.DataParallel(ours, devices)
    out = run(ctx.tensor(x))
    assert_relative(out.numpy(), want, "output")
    dp.cross_entropy(out, ctx.tensor(y)).backward()
    for (n, p), (tn, tp) in zip(ours.named_parameters(), theirs.named_parameters()):
        assert n == tn
        assert_relative(p.grad.numpy(), tp.grad.numpy(), f"gradient of {n}")


@pytest.mark.parametrize("name", ["mlp", "cnn"])
def test_state_saved_by_torch_loads_here_and_back(ctx, tmp_path, name):
    x, y = batch(name, 8)
    theirs, want = torch_reference(name, x, y)
    save_file({k: v.numpy() for k, v in theirs.state_dict().items()},
              tmp_path / "torch.safetensors")
    ours = our_model(ctx, name)
    ours.load(tmp_path / "torch.safetensors")
    assert_relative(ours(ctx.tensor(x)).numpy(), want, "output after loading torch's file")

    for p in ours.parameters():  # change ours, save, and load into a fresh torch model
        p.copy_(p.numpy() * 0.5)
    ours.save(tmp_path / "ours.safetensors")
    state = load_file(tmp_path / "ours.safetensors")
    state.pop(None)
    torch.manual_seed(1)
    fresh = torch_model(name)
    fresh.load_state_dict({k: torch.from_numpy(v) for k, v in state.items()})
    assert_relative(ours(ctx.tensor(x)).numpy(), fresh(torch.from_numpy(x)).detach().numpy(),
                    "output after torch loaded our file")


@pytest.mark.parametrize("name", ["mlp", "cnn"])
@pytest.mark.parametrize("seed", [0, 5, 2**40 + 7])  # manual_seed keeps the low 32 bits
def test_the_same_seed_gives_pytorchs_initial_weights_bit_for_bit(name, seed):
    # Layers made in PyTorch's order from a context of seed s start where PyTorch's start
    # after torch.manual_seed(s): each draws from one stream as PyTorch's do.
    with dp.Context(cpu_devices=1, seed=seed) as ctx:
        ours = our_model(ctx, name)
        torch.manual_seed(seed)
        theirs = torch_model(name)
        got = ours.state_dict()  # NumPy arrays
        want = {n: t.detach().numpy() for n, t in theirs.state_dict().items()}
        assert got.keys() == want.keys()
        for n in want:
            np.testing.assert_array_equal(got[n], want[n], err_msg=n)


def test_an_embedding_draws_as_pytorchs_and_the_next_layer_starts_where_pytorchs_does():
    # normal_ over 16 values or more: PyTorch computes float32 Box-Muller with vectorised
    # log and cos, so values agree to ~2e-6; the stream stays in step, so the
    # Linear made next is bit for bit PyTorch's. Fewer than 16 values: exact.
    with dp.Context(cpu_devices=1, seed=3) as ctx:
        big, small = dp.Embedding(ctx, 10, 7), dp.Embedding(ctx, 3, 1)
        small2, lin = dp.Embedding(ctx, 5, 1), dp.Linear(ctx, 6, 4)
        torch.manual_seed(3)
        tbig, tsmall = torch.nn.Embedding(10, 7), torch.nn.Embedding(3, 1)
        tsmall2, tlin = torch.nn.Embedding(5, 1), torch.nn.Linear(6, 4)
        np.testing.assert_allclose(big.weight.numpy(), tbig.weight.detach().numpy(),
                                   rtol=1e-6, atol=3e-6)
        np.testing.assert_array_equal(small.weight.numpy(), tsmall.weight.detach().numpy())
        np.testing.assert_array_equal(small2.weight.numpy(), tsmall2.weight.detach().numpy())
        np.testing.assert_array_equal(lin.weight.numpy(), tlin.weight.detach().numpy())
        np.testing.assert_array_equal(lin.bias.numpy(), tlin.bias.detach().numpy())
