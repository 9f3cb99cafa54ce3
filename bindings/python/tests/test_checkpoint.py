"""Training checkpoints: module and optimizer state plus metadata."""
import numpy as np
import pytest

import dataparallel as dp
from safetensors_plain import load_file


def train_step(ctx, model, opt):
    opt.zero_grad()
    dp.mse_loss(model(ctx.full([4, 3], 1.0)), ctx.zeros([4, 2])).backward()
    opt.step()


def test_checkpoint_restores_module_and_optimizer(ctx, tmp_path):
    path = tmp_path / "ckpt.safetensors"
    a = dp.Linear(ctx, 3, 2)
    opt_a = dp.Adam(a, lr=0.1)
    train_step(ctx, a, opt_a)
    dp.save_checkpoint(path, a, opt_a, metadata={"epoch": "3", "note": "éè"})
    assert dp.checkpoint_metadata(path, "epoch") == "3"
    assert dp.checkpoint_metadata(path, "note") == "éè"
    with pytest.raises(dp.OutOfRangeError, match="missing"):
        dp.checkpoint_metadata(path, "missing")
    entries = load_file(path)
    assert "weight" in entries and any(k.startswith("optimizer/") for k in entries if k)

    b = dp.Linear(ctx, 3, 2)
    opt_b = dp.Adam(b, lr=0.1)
    dp.load_checkpoint(path, b, opt_b)
    train_step(ctx, a, opt_a)
    train_step(ctx, b, opt_b)  # the same Adam moments: the same step
    np.testing.assert_allclose(b.weight.numpy(), a.weight.numpy(), rtol=1e-6)


def test_module_files_via_functions_and_data_parallel(ctx, tmp_path):
    m = dp.Linear(ctx, 2, 2)
    dp.save(dp.DataParallel(m, ["cpu:0"]), tmp_path / "m.safetensors")
    n = dp.Linear(ctx, 2, 2)
    dp.load(n, tmp_path / "m.safetensors")
    np.testing.assert_array_equal(n.weight.numpy(), m.weight.numpy())
    dp.save_checkpoint(tmp_path / "plain.safetensors", m)
    dp.load_checkpoint(tmp_path / "plain.safetensors", n)
    with pytest.raises(TypeError):
        dp.save_checkpoint(tmp_path / "bad.safetensors", m, metadata={"k": 1})
