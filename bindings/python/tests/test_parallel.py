"""DataParallel and its stages on two CPU devices."""
import gc

import numpy as np
import pytest

import dataparallel as dp
from wrapper_checks import assert_passes_through_to


@pytest.fixture
def model(ctx):
    return dp.Sequential(ctx, dp.Linear(ctx, 4, 8), dp.ReLU(ctx), dp.Linear(ctx, 8, 3))


def test_forward_matches_the_module_and_reports_devices(ctx, model, rng):
    x = ctx.tensor(rng.standard_normal((10, 4)).astype(np.float32))
    net = dp.DataParallel(model, ["cpu:0", "cpu:1"])
    np.testing.assert_allclose(net(x).numpy(), model(x).numpy(), rtol=1e-6)
    assert net.devices == [dp.cpu(0), dp.cpu(1)] and net.module is model
    assert net.forward(x).shape == (10, 3)
    assert "cpu:0, cpu:1" in repr(net)


def test_default_devices_are_every_cpu_device(ctx, model):
    assert dp.DataParallel(model).devices == [dp.cpu(0), dp.cpu(1)]


def test_gradients_are_the_full_batch_gradients(ctx, model, rng):
    x = rng.standard_normal((10, 4)).astype(np.float32)
    y = rng.integers(0, 3, 10)
    dp.cross_entropy(model(ctx.tensor(x)), ctx.tensor(y)).backward()
    want = [p.grad.numpy() for p in model.parameters()]
    model.zero_grad()
    net = dp.DataParallel(model, ["cpu:0", "cpu:1"], output_device="cpu:1")
    out = net(ctx.tensor(x))
    assert out.device == dp.cpu(1)
    dp.cross_entropy(out, ctx.tensor(y, device="cpu:1")).backward()
    for w, p in zip(want, model.parameters()):
        np.testing.assert_allclose(p.grad.numpy(), w, rtol=1e-5, atol=1e-7)


def test_options_chunk_sizes_no_gather_broadcast_and_stats(ctx, rng):
    class AddBias(dp.Module):
        def forward(self, x, b):
            return x + b

    m = dp.Sequential(ctx, dp.Linear(ctx, 4, 2))
    net = dp.DataParallel(m, ["cpu:0", "cpu:1"], chunk_sizes=[3, 1], gather=False,
                          buffer_sync="average", alias_cpu=False, cache_replicas=True,
                          bucket_bytes=1 << 16)
    outs = net(ctx.zeros([4, 4]))
    assert [o.shape for o in outs] == [(3, 2), (1, 2)]
    assert [o.device for o in outs] == [dp.cpu(0), dp.cpu(1)]
    stats = net.stats()
    assert stats["calls"] == 1 and set(stats["last"]) == {"scatter", "replicate", "apply", "gather",
                                                          "backward", "reduce"}
    net.reset_stats()
    assert net.stats()["calls"] == 0
    both = dp.DataParallel(AddBias(ctx), ["cpu:0", "cpu:1"])
    y = both(ctx.zeros([4, 2]), ctx.tensor([1.0, 2.0]), broadcast=[False, True])
    assert y.tolist() == [[1, 2]] * 4
    with pytest.raises(dp.InvalidArgumentError, match="broadcast has 1 flags"):
        both(ctx.zeros([4, 2]), ctx.zeros([2]), broadcast=[True])
    with pytest.raises(ValueError, match="truth value"):  # the flag's own error, as raised
        both(ctx.zeros([4, 2]), ctx.zeros([2]), broadcast=[False, np.array([True, False])])
    with pytest.raises(ValueError, match="buffer_sync"):
        dp.DataParallel(m, buffer_sync="sum")


def test_functional_data_parallel_broadcasts_flagged_inputs(ctx):
    class AddBias(dp.Module):
        def forward(self, x, b):
            return x + b

    x = ctx.tensor(np.arange(8, dtype=np.float32).reshape(4, 2))
    devices = ["cpu:0", "cpu:1"]
    y = dp.data_parallel(AddBias(ctx), [x, ctx.tensor([10.0, -20.0])], devices,
                         broadcast=[False, True])
    assert y.tolist() == [[10 + 2 * i, -19 + 2 * i] for i in range(4)]
    with pytest.raises(dp.InvalidArgumentError, match="broadcast has 1 flags but there are 2"):
        dp.data_parallel(AddBias(ctx), [x, ctx.zeros([2])], devices, broadcast=[True])


def test_missing_devices_are_out_of_range_and_repeats_invalid(ctx, model):
    with pytest.raises(dp.OutOfRangeError, match="device_ids\\[1\\] = cpu:5"):
        dp.DataParallel(model, ["cpu:0", "cpu:5"])
    with pytest.raises(dp.InvalidArgumentError):
        dp.DataParallel(model, ["cpu:0", "cpu:0"])


def test_module_on_another_device_is_a_device_mismatch(ctx, model):
    net = dp.DataParallel(model, ["cpu:1", "cpu:0"])
    with pytest.raises(dp.DeviceMismatchError, match="cpu:1"):
        net(ctx.zeros([2, 4]))


def test_save_load_and_passthroughs(ctx, model, tmp_path):
    net = dp.DataParallel(model, ["cpu:0", "cpu:1"])
    net.save(tmp_path / "m.safetensors")
    other = dp.Sequential(ctx, dp.Linear(ctx, 4, 8), dp.ReLU(ctx), dp.Linear(ctx, 8, 3))
    dp.DataParallel(other, ["cpu:0"]).load(tmp_path / "m.safetensors")
    np.testing.assert_array_equal(other[0].weight.numpy(), model[0].weight.numpy())
    assert_passes_through_to(net, model, ctx.tensor(np.ones((4, 4), np.float32)))



def test_stages_refuse_what_is_not_theirs_by_name(ctx, model, tmp_path):
    devices = ["cpu:0", "cpu:1"]
    with pytest.raises(TypeError, match="x must be a dataparallel Tensor, not NoneType"):
        dp.scatter(None, devices)
    with pytest.raises(TypeError, match="tensor 1 must be a dataparallel Tensor, not ndarray"):
        dp.gather([ctx.zeros([1, 4]), np.zeros((1, 4))], "cpu:0")
    with pytest.raises(TypeError, match="module must be a dataparallel Module, not ndarray"):
        dp.replicate(np.zeros(3), devices)
    with pytest.raises(TypeError, match="input 0 must be a dataparallel Tensor, not list"):
        dp.data_parallel(model, [[1.0]], devices)
    replicas = dp.replicate(model, devices)
    x = ctx.zeros([2, 4])
    with pytest.raises(ValueError, match=r"the same number of inputs, not \[1, 2\]"):
        dp.parallel_apply(replicas, [[x], [x, x]], devices)
    with pytest.raises(TypeError, match="replica 1 must be a dataparallel Module, not str"):
        dp.parallel_apply([replicas[0], "m"], [x, x], devices)
    with pytest.raises(TypeError, match="module must be a dataparallel Module, not NoneType"):
        dp.save_checkpoint(tmp_path / "c.safetensors", None)
    with pytest.raises(TypeError, match="optimizer must be a dataparallel Optimizer, not str"):
        dp.load_checkpoint(tmp_path / "c.safetensors", model, optimizer="sgd")


def test_stages_scatter_replicate_parallel_apply_gather(ctx, model, rng):
    devices = ["cpu:0", "cpu:1"]
    x = ctx.tensor(rng.standard_normal((6, 4)).astype(np.float32))
    chunks = dp.scatter(x, devices)
    assert [c.shape for c in chunks] == [(3, 4), (3, 4)]
    assert [c.device for c in dp.scatter(x, devices, chunk_sizes=[1, 5])] == [dp.cpu(0), dp.cpu(1)]
    assert [c.shape[0] for c in dp.scatter(x, devices, chunk_sizes=np.array([2, 4]))] == [2, 4]
    replicas = dp.replicate(model, devices)
    assert len(replicas) == 2 and replicas[1].type_name == "Sequential"
    outs = dp.parallel_apply(replicas, chunks, devices)
    y = dp.gather(outs, "cpu:0")
    np.testing.assert_allclose(y.numpy(), model(x).numpy(), rtol=1e-6)
    np.testing.assert_allclose(dp.data_parallel(model, x, devices).numpy(), y.numpy(), rtol=1e-6)
    with pytest.raises(dp.InvalidArgumentError, match="2 replicas, 1 devices"):
        dp.parallel_apply(replicas, chunks, ["cpu:0"])


def test_replicas_keep_their_python_module_alive(ctx):
    class Block(dp.Module):
        def forward(self, x):
            return x * 2

    reps = dp.replicate(Block(ctx), ["cpu:0", "cpu:1"])  # no other reference to the Block
    gc.collect()
    outs = dp.parallel_apply(reps, [ctx.full([2], 1.0), ctx.full([2], 3.0, device="cpu:1")],
                             ["cpu:0", "cpu:1"])
    assert [o.numpy().tolist() for o in outs] == [[2.0, 2.0], [6.0, 6.0]]
