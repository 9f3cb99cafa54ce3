"""Training checkpoints: module and optimizer state plus metadata."""
import numpy as np
import pytest

import dataparallel as dp
from safetensors_plain import load_file, save_file


def train_step(ctx, model, opt):
    opt.zero_grad()
    dp.mse_loss(model(ctx.full([4, 3], 1.0)), ctx.zeros([4, 2])).backward()
    opt.step()


def test_checkpoint_restores_module_and_optimizer(ctx, tmp_path):
    path = tmp_path / "ckpt.safetensors"
    a = dp.Linear(ctx, 3, 2)
    opt_a = dp.Adam(a, lr=0.1)
    train_step(ctx, a, opt_a)
    long = "".join(chr(0x41 + i % 26) for i in range(1000))  # past the first read's buffer
    dp.save_checkpoint(path, a, opt_a, metadata={"epoch": "3", "note": "éè", "long": long})
    assert dp.checkpoint_metadata(path, "epoch") == "3"
    assert dp.checkpoint_metadata(path, "note") == "éè"
    assert dp.checkpoint_metadata(path, "long") == long
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


@pytest.mark.parametrize("damage,needle", [
    (lambda e: e.pop("optimizer/0/exp_avg_sq"), "1 of the 2 state tensors"),
    (lambda e: e.update({"optimizer/0/step": np.array(-1, np.int64)}), "is -1, not a step count"),
    (lambda e: e.update({"optimizer/0/step": np.array(0, np.int64)}), "has step 0 but state"),
    (lambda e: e.pop("optimizer/0/step"), "has no \"optimizer/0/step\""),
    (lambda e: e.update({"optimizer/9/exp_avg": np.zeros(2, np.float32)}),
     "\"optimizer/9/exp_avg\" that this adam optimizer"),
])
def test_incomplete_optimizer_state_is_refused_and_nothing_changes(ctx, tmp_path, damage, needle):
    """A half-made state would load and then crash or poison the next step (read by it)."""
    a = dp.Linear(ctx, 3, 2)
    opt_a = dp.Adam(a, lr=0.1)
    train_step(ctx, a, opt_a)
    good, bad = tmp_path / "good.safetensors", tmp_path / "bad.safetensors"
    dp.save_checkpoint(good, a, opt_a)
    entries = load_file(good)
    metadata = entries.pop(None)
    damage(entries)
    save_file(entries, bad, metadata)
    b = dp.Linear(ctx, 3, 2)
    opt_b = dp.Adam(b, lr=0.1)
    before = b.weight.numpy().copy()
    with pytest.raises(dp.FormatError, match=needle):
        dp.load_checkpoint(bad, b, opt_b)
    np.testing.assert_array_equal(b.weight.numpy(), before)
    dp.load_checkpoint(good, b, opt_b)  # the undamaged file still loads, and steps alike
    train_step(ctx, a, opt_a)
    train_step(ctx, b, opt_b)
    np.testing.assert_allclose(b.weight.numpy(), a.weight.numpy(), rtol=1e-6)


def test_a_key_twice_in_the_header_is_refused(ctx, tmp_path):
    path = tmp_path / "dup.safetensors"
    header = b'{"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},' \
             b'"weight":{"dtype":"F32","shape":[2,2],"data_offsets":[0,16]},' \
             b'"bias":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}}'
    header += b" " * (-len(header) % 8)
    path.write_bytes(len(header).to_bytes(8, "little") + header + bytes(24))
    with pytest.raises(dp.FormatError, match='key "weight" twice'):
        dp.load(dp.Linear(ctx, 2, 2), path)


def test_metadata_may_repeat_but_not_contradict_the_librarys_own_keys(ctx, tmp_path):
    m = dp.Linear(ctx, 2, 2)
    opt = dp.SGD(m, lr=0.1, momentum=0.9)
    path = tmp_path / "c.safetensors"
    dp.save_checkpoint(path, m, opt, metadata={"optimizer": "sgd", "format": "pt"})  # repeats
    with pytest.raises(dp.InvalidArgumentError, match='"optimizer" = "adam" contradicts'):
        dp.save_checkpoint(path, m, opt, metadata={"optimizer": "adam"})
    with pytest.raises(dp.InvalidArgumentError, match="no optimizer is saved"):
        dp.save_checkpoint(path, m, None, metadata={"optimizer": "sgd"})
    with pytest.raises(dp.InvalidArgumentError, match='"producer"'):
        dp.save_checkpoint(path, m, opt, metadata={"producer": "someone else"})
