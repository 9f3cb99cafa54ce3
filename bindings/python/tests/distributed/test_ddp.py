"""ProcessGroup.from_mpi and DistributedDataParallel, run by ctest as a job of 2 ranks
(`mpirun -np 2 python3 -m pytest -x test_ddp.py`); every rank runs every test, in the same
order, so their collectives match. pytest's -x ends a rank at its first failure, and the
launcher then ends the job (a rank left waiting in a collective is aborted by
DP_DISTRIBUTED_TIMEOUT).

The equivalence bound: DDP over 2 ranks and one process on the whole global batch compute
the same float32 arithmetic in different orders (per-rank partial sums, then an average),
so their parameters differ by rounding only. After the steps below (SGD, lr 0.1, momentum
0.9) on an MLP whose parameters are O(0.1 .. 1) they stay within BOUND = 1e-6 absolute
(measured: at most 3e-8 in every test here). A gradient summed over the ranks instead of
averaged, or a rank's gradients left out, moves them by more than 1e-2 after one step
(measured: 0.014 and 0.029), four orders of magnitude past the bound;
test_training_moves_the_parameters_far_past_the_bound checks that they move that far.
"""
import gc
import os
import sys
import weakref

import numpy as np
import pytest

import dataparallel as dp

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from wrapper_checks import assert_passes_through_to  # noqa: E402 (the directory above)

BOUND = 1e-6
D_IN, HIDDEN, CLASSES = 12, 16, 4
RANK_ROWS = 4  # each rank's share of a batch


@pytest.fixture(scope="module")
def ctx():
    c = dp.Context(cpu_devices=2, load_cuda=False, seed=0)
    yield c
    c.close()


@pytest.fixture(scope="module")
def group(ctx):
    """One group for the whole file: MPI starts once per process, and this group's release
    (at the end) finalises it."""
    with dp.ProcessGroup.from_mpi(ctx) as g:
        yield g


def make_model(ctx, hidden=HIDDEN):
    return dp.Sequential(ctx, dp.Linear(ctx, D_IN, hidden), dp.ReLU(ctx),
                         dp.Linear(ctx, hidden, CLASSES))


def global_batch(step, rows):
    """Step `step`'s global batch: the same on every rank (each takes its own rows)."""
    rng = np.random.default_rng(1000 + step)
    return (rng.standard_normal((rows, D_IN)).astype(np.float32),
            rng.integers(0, CLASSES, rows))


def rows_of(rank, x, y, first=0):
    """Rank `rank`'s RANK_ROWS rows of (x, y), from row `first` on."""
    lo = first + rank * RANK_ROWS
    return x[lo:lo + RANK_ROWS], y[lo:lo + RANK_ROWS]


def sgd(module):
    return dp.SGD(module, lr=0.1, momentum=0.9)


def step(ctx, opt, net, x, y, scale=1.0):
    out = net(ctx.tensor(x))
    loss = dp.cross_entropy(out, ctx.tensor(y))
    if scale != 1.0:
        loss = loss * scale
    opt.zero_grad()
    loss.backward()
    opt.step()


def max_diff(a, b):
    """max |a - b| over the parameters of two modules of the same architecture."""
    return max(float(np.abs(p.numpy() - q.numpy()).max())
               for p, q in zip(a.parameters(), b.parameters()))


def flat(tensors):
    return np.concatenate([t.numpy().ravel() for t in tensors])


def every_rank(group, ctx, values):
    """[each rank's `values`] (a float32 vector), through the group's allgather."""
    gathered = group.allgather(ctx.tensor(np.asarray(values, np.float32))).numpy()
    return gathered.reshape(group.size, -1)


# --- the process group ------------------------------------------------------------------

def test_rank_and_sizes_describe_a_two_rank_job_on_one_machine(group):
    assert group.size == 2 and group.rank in (0, 1)
    assert (group.local_rank, group.local_size) == (group.rank, group.size)
    assert repr(group) == f"ProcessGroup(rank={group.rank}, size=2)"


def test_collectives_match_hand_computed_values(ctx, group):
    r = group.rank
    for op, want in (("sum", [3, 6]), ("average", [1.5, 3]), ("max", [2, 4]), ("min", [1, 2])):
        t = ctx.tensor([r + 1.0, 2.0 * (r + 1)], dtype=dp.float64)
        assert group.allreduce(t, op) is t
        assert t.tolist() == want, op
    t = ctx.tensor([10 * r, 10 * r + 1])
    group.broadcast(t, root=1)
    assert t.tolist() == [10, 11]
    gathered = group.allgather(ctx.tensor([[r, 100 + r]]))
    assert gathered.shape == (2, 2) and gathered.tolist() == [[0, 100], [1, 101]]
    assert group.allgather(ctx.tensor(7.0 + r)).tolist() == [7.0, 8.0]  # 0-dim: a vector
    group.barrier()


# --- training equivalence ---------------------------------------------------------------

@pytest.mark.parametrize("devices", [["cpu:0"], ["cpu:0", "cpu:1"]])
def test_two_rank_training_equals_one_process_on_the_global_batch(ctx, group, devices):
    model = make_model(ctx)
    ddp = dp.DistributedDataParallel(model, group, device_ids=devices, bucket_cap_mb=0.0005,
                                     first_bucket_mb=0.0001)
    assert ddp.bucket_count >= 2  # the small buckets: several allreduces per backward
    assert ddp.devices == [dp.device(d) for d in devices] and ddp.module is model
    ref = make_model(ctx)
    ref.load_state_dict(model.state_dict())  # rank 0's weights, which DDP broadcast
    opt, ref_opt = sgd(model), sgd(ref)
    for s in range(5):
        x, y = global_batch(s, 2 * RANK_ROWS)
        step(ctx, opt, ddp, *rows_of(group.rank, x, y))
        step(ctx, ref_opt, ref, x, y)
    diff = max_diff(model, ref)
    assert diff <= BOUND, f"rank {group.rank}: DDP and the single process differ by {diff:.3g}"
    mine = flat(model.parameters())
    both = every_rank(group, ctx, mine)
    np.testing.assert_array_equal(both[0], both[1])  # every rank took the same steps
    ddp.close()


def test_training_moves_the_parameters_far_past_the_bound(ctx, group):
    """The equivalence above is not met by parameters that hardly move: one step of one
    rank's rows alone, or of the summed gradient, lands more than 1e-2 away."""
    start = make_model(ctx)
    x, y = global_batch(0, 2 * RANK_ROWS)
    moved = {}
    for name, rows, scale in (("global", (x, y), 1.0), ("one rank", rows_of(0, x, y), 1.0),
                              ("summed", (x, y), 2.0)):
        m = make_model(ctx)
        m.load_state_dict(start.state_dict())
        step(ctx, sgd(m), m, *rows, scale=scale)
        moved[name] = m
    assert max_diff(moved["global"], start) > 1e-2
    assert max_diff(moved["global"], moved["one rank"]) > 1e-2
    assert max_diff(moved["global"], moved["summed"]) > 1e-2


def test_no_sync_accumulation_equals_one_step_on_the_k_fold_batch(ctx, group):
    k = 3
    model = make_model(ctx)
    ddp = dp.DistributedDataParallel(model, group)
    assert ddp.devices == [dp.cpu(0)]  # by default each of the 2 local ranks takes 1 of 2
    ref = make_model(ctx)
    ref.load_state_dict(model.state_dict())
    opt, ref_opt = sgd(model), sgd(ref)
    for s in range(2):
        x, y = global_batch(10 + s, k * 2 * RANK_ROWS)  # k micro-batches of 2 ranks' rows
        opt.zero_grad()
        with ddp.no_sync():
            assert not ddp.grad_sync
            for i in range(k - 1):
                xr, yr = rows_of(group.rank, x, y, first=i * 2 * RANK_ROWS)
                (dp.cross_entropy(ddp(ctx.tensor(xr)), ctx.tensor(yr)) * (1 / k)).backward()
                last = ddp.stats()["last"]  # a no_sync step: no allreduce, no wait
                assert last["allreduce"] == 0 and last["sync_wait"] == 0, last
                assert last["apply"] > 0, last
            local = every_rank(group, ctx, flat(p.grad for p in model.parameters()))
            assert np.abs(local[0] - local[1]).max() > 1e-3  # each rank's own gradients
        assert ddp.grad_sync
        xr, yr = rows_of(group.rank, x, y, first=(k - 1) * 2 * RANK_ROWS)
        (dp.cross_entropy(ddp(ctx.tensor(xr)), ctx.tensor(yr)) * (1 / k)).backward()
        synced = every_rank(group, ctx, flat(p.grad for p in model.parameters()))
        np.testing.assert_array_equal(synced[0], synced[1])  # averaged, what accumulated too
        stats = ddp.stats()  # the synced step allreduced; k forwards per step counted
        assert stats["last"]["allreduce"] > 0 and stats["calls"] == k * (s + 1), stats
        assert stats["total"]["allreduce"] == stats["last"]["allreduce"] or s > 0, stats
        opt.step()
        step(ctx, ref_opt, ref, x, y)
    diff = max_diff(model, ref)
    assert diff <= BOUND, f"rank {group.rank}: no_sync accumulation differs by {diff:.3g}"


def test_join_trains_uneven_inputs_as_zero_gradients_of_the_rank_that_ran_out(ctx, group):
    """Rank 0 has 3 batches, rank 1 has 2: the third step averages rank 0's gradient with
    rank 1's zeros, i.e. half of rank 0's gradient, and both end with rank 0's state."""
    model = make_model(ctx)
    ddp = dp.DistributedDataParallel(model, group)
    ref = make_model(ctx)
    ref.load_state_dict(model.state_dict())
    opt, ref_opt = sgd(model), sgd(ref)
    batches = 3 if group.rank == 0 else 2
    with ddp.join():
        for s in range(batches):
            x, y = global_batch(20 + s, 2 * RANK_ROWS)
            step(ctx, opt, ddp, *rows_of(group.rank, x, y))
    for s in range(3):
        x, y = global_batch(20 + s, 2 * RANK_ROWS)
        if s < 2:
            step(ctx, ref_opt, ref, x, y)
        else:
            step(ctx, ref_opt, ref, *rows_of(0, x, y), scale=0.5)
    diff = max_diff(model, ref)
    assert diff <= BOUND, f"rank {group.rank}: join's training differs by {diff:.3g}"
    # Even training goes on after the block (uneven inputs are off again on both ranks).
    # Only rank 0's optimizer saw every step: rank 1's momentum lacks the third, as with
    # PyTorch's join, which syncs the model but not the optimizers.
    x, y = global_batch(30, 2 * RANK_ROWS)
    step(ctx, opt, ddp, *rows_of(group.rank, x, y))
    step(ctx, ref_opt, ref, x, y)
    if group.rank == 0:
        assert max_diff(model, ref) <= BOUND


# --- the DataParallel inside each rank --------------------------------------------------

TWO_DEVICES = ["cpu:0", "cpu:1"]


def grads_after_one_backward(ctx, net, model, x, y):
    """model's gradients, flattened, after one backward of net's mean loss on (x, y)."""
    model.zero_grad()
    dp.cross_entropy(net(ctx.tensor(x)), ctx.tensor(y)).backward()
    return flat(p.grad for p in model.parameters())


def test_bfloat16_grad_reduce_inside_ddp_stays_within_the_bf16_bound_of_float32(ctx, group):
    """2 ranks x 2 CPU devices. Each rank sums its replicas' gradients g0 + g1 in bfloat16,
    within 2^-8 (|g0| + |g1|) of the float32 sum (dp_data_parallel_options'
    grad_reduce_dtype, n = 2); the ranks then average in float32, so the result is within
    the mean of the two ranks' bounds (plus 1e-6 for float32 rounding) of the float32 run,
    and not equal to it (the option reached the rank's DataParallel)."""
    first = make_model(ctx)
    grads = {}
    for dtype in ("float32", "bfloat16"):
        model = make_model(ctx)
        model.load_state_dict(first.state_dict())
        ddp = dp.DistributedDataParallel(model, group, device_ids=TWO_DEVICES,
                                         grad_reduce_dtype=dtype)
        x, y = global_batch(60, 2 * RANK_ROWS)
        grads[dtype] = grads_after_one_backward(ctx, ddp, model, *rows_of(group.rank, x, y))
        ddp.close()
    # g0, g1: this rank's replicas' own gradients (each device's 2 rows, weighted 2/4 as in
    # the mean over the rank's 4), through a plain copy of rank 0's model.
    ref = make_model(ctx)
    ref.load_state_dict(model.state_dict())
    xr, yr = rows_of(group.rank, x, y)
    half = RANK_ROWS // 2
    magnitude = 0
    for rows in (slice(0, half), slice(half, RANK_ROWS)):
        ref.zero_grad()
        (dp.cross_entropy(ref(ctx.tensor(xr[rows])), ctx.tensor(yr[rows])) * 0.5).backward()
        magnitude = magnitude + np.abs(flat(p.grad for p in ref.parameters()))
    bound = 2.0 ** -8 * every_rank(group, ctx, magnitude).mean(axis=0) + 1e-6
    diff = np.abs(grads["bfloat16"] - grads["float32"])
    worst = int(np.argmax(diff - bound))
    assert (diff <= bound).all(), (f"rank {group.rank}: gradient {worst} differs by "
                                   f"{diff[worst]:.3g}, past the bound {bound[worst]:.3g}")
    assert diff.max() > 0, "bfloat16 gave exactly the float32 gradients: the option was lost"
    both = every_rank(group, ctx, grads["bfloat16"])
    np.testing.assert_array_equal(both[0], both[1])  # still averaged over the ranks


def test_bfloat16_allreduce_gives_bfloat16_averages_within_the_bound_of_float32(ctx, group):
    """allreduce_dtype="bfloat16": each averaged gradient travelled as bfloat16 (its float32
    bits end in 16 zeros), every rank has the same, and each is within
    ranks * (1.01 * 2^-8 + 2^-24) * mean_r |g_r| of the float32 average: the bfloat16
    roundings (1.01 for their second order) and the float32 average's own, g_r being rank
    r's own gradient (a plain copy of the model on the rank's rows)."""
    first = make_model(ctx)
    grads = {}
    for dtype in ("float32", "bfloat16"):
        model = make_model(ctx)
        model.load_state_dict(first.state_dict())
        ddp = dp.DistributedDataParallel(model, group, device_ids=["cpu:0"],
                                         first_bucket_mb=1e-4, allreduce_dtype=dtype)
        x, y = global_batch(61, group.size * RANK_ROWS)
        grads[dtype] = grads_after_one_backward(ctx, ddp, model, *rows_of(group.rank, x, y))
        ddp.close()
    ref = make_model(ctx)
    ref.load_state_dict(model.state_dict())
    own = grads_after_one_backward(ctx, ref, ref, *rows_of(group.rank, x, y))
    bound = (group.size * (1.01 * 2.0 ** -8 + 2.0 ** -24)
             * np.abs(every_rank(group, ctx, own)).mean(axis=0))
    got = grads["bfloat16"]
    assert (got.view(np.uint32) & 0xFFFF == 0).all(), "an average is not a bfloat16 value"
    diff = np.abs(got - grads["float32"])
    worst = int(np.argmax(diff - bound))
    assert (diff <= bound).all(), (f"rank {group.rank}: gradient {worst} differs by "
                                   f"{diff[worst]:.3g}, past the bound {bound[worst]:.3g}")
    every = every_rank(group, ctx, got)
    np.testing.assert_array_equal(every[0], every[-1])


def test_bfloat16_parameters_are_averaged_in_bfloat16(ctx, group):
    """A bfloat16 parameter's bucket is bfloat16 and travels so. The loss sum(w * c_r) gives
    rank r the gradient c_r (bfloat16 values); it enters the bucket halved (exact: a power
    of two) and the plugin's bfloat16 sum adds the two halves in float32 and rounds once:
    bit for bit what NumPy computes from the same values."""
    if group.size != 2:
        pytest.skip("the expected bits are worked out for 2 ranks")

    class Weighted(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.register_parameter("w", ctx.tensor(np.ones(16), dtype="bfloat16"))

        def forward(self, c):
            return (self.w * c).sum()

    def c_of(rank):  # bfloat16 bits of rank's c
        return dp.dtypes.float32_to_bfloat16(np.linspace(-1, 1, 16) * (0.37 + 0.41 * rank))

    model = Weighted(ctx)
    ddp = dp.DistributedDataParallel(model, group, device_ids=["cpu:0"])
    c = ctx.tensor(dp.dtypes.bfloat16_to_float32(c_of(group.rank)), dtype="bfloat16")
    ddp(c).backward()
    got = dp.dtypes.bfloat16_bits_of(model.w.grad.numpy())
    halves = [dp.dtypes.bfloat16_to_float32(c_of(r)) / np.float32(2) for r in (0, 1)]
    expected = dp.dtypes.float32_to_bfloat16(halves[0] + halves[1])
    np.testing.assert_array_equal(got, expected)
    assert not np.array_equal(expected, c_of(group.rank)), "the gradient was not averaged"
    ddp.close()


def test_chunk_sizes_reach_each_rank_data_parallel_and_keep_the_averaged_gradients(ctx, group):
    """chunk_sizes=[1, 3] runs 1 of the rank's 4 rows on cpu:0 and 3 on cpu:1 (a Python
    module records what each replica gets); the averaged gradients equal those of equal
    chunks within float32 rounding (1e-6: gradients here are O(0.1))."""
    seen = []

    class Recorded(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.net = make_model(ctx)

        def forward(self, x):
            seen.append((str(x.device), x.shape[0]))
            return self.net(x)

    first = Recorded(ctx)
    x, y = global_batch(70, 2 * RANK_ROWS)
    xr, yr = rows_of(group.rank, x, y)
    grads, chunks = {}, {}
    for sizes in (None, [1, 3]):
        model = Recorded(ctx)
        model.load_state_dict(first.state_dict())
        ddp = dp.DistributedDataParallel(model, group, device_ids=TWO_DEVICES,
                                         chunk_sizes=sizes)
        seen.clear()
        grads[str(sizes)] = grads_after_one_backward(ctx, ddp, model, xr, yr)
        chunks[str(sizes)] = sorted(seen)
        ddp.close()
    assert chunks == {"None": [("cpu:0", 2), ("cpu:1", 2)],
                      "[1, 3]": [("cpu:0", 1), ("cpu:1", 3)]}
    diff = float(np.abs(grads["[1, 3]"] - grads["None"]).max())
    assert diff <= 1e-6, f"rank {group.rank}: uneven chunks change the gradients by {diff:.3g}"
    assert np.abs(grads["None"]).max() > 1e-2  # gradients that are not all zeros
    # Chunks that do not add up to the batch fail at the forward, naming them.
    ddp = dp.DistributedDataParallel(make_model(ctx), group, device_ids=TWO_DEVICES,
                                     chunk_sizes=[1, 2])
    with pytest.raises(dp.Error, match="chunk_sizes"):
        ddp(ctx.tensor(xr))
    ddp.close()


def test_the_other_local_options_train_as_the_defaults(ctx, group):
    """cache_replicas, buffer_sync="average", alias_cpu=False and a small
    broadcast_bucket_bytes change how each rank replicates, not what it computes: 3 steps
    of 2 ranks x 2 devices equal the defaults' within BOUND."""
    first = make_model(ctx)
    trained = []
    for options in ({}, dict(cache_replicas=True, buffer_sync="average", alias_cpu=False,
                             broadcast_bucket_bytes=256)):
        model = make_model(ctx)
        model.load_state_dict(first.state_dict())
        with dp.DistributedDataParallel(model, group, device_ids=TWO_DEVICES, **options) as ddp:
            opt = sgd(model)
            for s in range(3):
                x, y = global_batch(80 + s, 2 * RANK_ROWS)
                step(ctx, opt, ddp, *rows_of(group.rank, x, y))
        trained.append(model)
    assert max_diff(trained[0], first) > 1e-2
    diff = max_diff(trained[0], trained[1])
    assert diff <= BOUND, f"rank {group.rank}: the local options change training by {diff:.3g}"


# --- ownership --------------------------------------------------------------------------

def test_ddp_keeps_its_python_module_and_its_group_alive(ctx, group):
    class Scaled(dp.Module):
        def __init__(self, ctx):
            super().__init__(ctx)
            self.fc = dp.Linear(ctx, D_IN, CLASSES)

        def forward(self, x):
            return self.fc(x) * 0.5

    second = dp.ProcessGroup.from_mpi(ctx)  # a second group over the same ranks
    model = Scaled(ctx)
    ddp = dp.DistributedDataParallel(model, second, device_ids=["cpu:0", "cpu:1"])
    assert ddp.group is second
    alive = weakref.ref(model)
    del model
    second.close()  # the DDP still uses the group
    gc.collect()
    assert alive() is not None
    x, y = global_batch(40, 2 * RANK_ROWS)
    xr, yr = rows_of(group.rank, x, y)
    dp.cross_entropy(ddp(ctx.tensor(xr)), ctx.tensor(yr)).backward()
    grads = every_rank(group, ctx, flat(p.grad for p in ddp.parameters()))
    np.testing.assert_array_equal(grads[0], grads[1])  # the closed group's allreduce ran
    with pytest.raises(dp.StateError, match="ProcessGroup is closed"):
        second.rank
    assert "closed" in repr(second) and "Scaled" in repr(ddp)
    ddp.close()
    with pytest.raises(dp.StateError, match="DistributedDataParallel is closed"):
        ddp(ctx.tensor(xr))
    ddp.close()  # twice is safe
    del ddp
    gc.collect()
    dp.capi.dp_py_run_pending()
    assert alive() is None


def test_an_optimizer_and_a_checkpoint_take_the_ddp_for_its_module(ctx, group, tmp_path):
    model = make_model(ctx)
    with dp.DistributedDataParallel(model, group) as ddp:
        opt = dp.SGD(ddp, lr=0.1)  # trains ddp.module
        x, y = global_batch(50, 2 * RANK_ROWS)
        before = flat(model.parameters())
        step(ctx, opt, ddp, *rows_of(group.rank, x, y))
        assert np.abs(flat(model.parameters()) - before).max() > 1e-3
        path = tmp_path / f"rank{group.rank}.safetensors"
        dp.save(ddp, path)
        other = make_model(ctx)
        dp.load(other, path)
        assert max_diff(other, model) == 0


def test_the_module_methods_pass_through_to_the_wrapped_module(ctx, group):
    model = make_model(ctx)
    with dp.DistributedDataParallel(model, group) as ddp:
        x, _ = global_batch(55, 2 * RANK_ROWS)
        assert_passes_through_to(ddp, model, ctx.tensor(rows_of(group.rank, x, x)[0]))


# --- bad arguments ----------------------------------------------------------------------

def test_bad_arguments_raise_naming_the_argument_and_its_value(ctx, group):
    t = ctx.tensor([1.0, 2.0])
    with pytest.raises(ValueError, match="op = 'prod': expected \"sum\", \"average\""):
        group.allreduce(t, "prod")
    with pytest.raises(TypeError, match="tensor must be a dataparallel Tensor, not ndarray"):
        group.allreduce(np.zeros(2, np.float32))
    with pytest.raises(dp.OutOfRangeError, match="root"):
        group.broadcast(t, root=2)
    with pytest.raises(dp.DtypeMismatchError, match="int64"):
        group.allreduce(ctx.tensor([1, 2]), "average")
    with pytest.raises(ValueError, match="timeout = -1: expected a number of seconds > 0"):
        dp.ProcessGroup.from_mpi(ctx, timeout=-1)
    with pytest.raises(TypeError, match="timeout must be a number of seconds, not str"):
        dp.ProcessGroup.from_mpi(ctx, timeout="60")
    with pytest.raises(TypeError, match="ctx must be a dataparallel Context, not NoneType"):
        dp.ProcessGroup.from_mpi(None)
    with pytest.raises(TypeError, match=r"ProcessGroup\.from_mpi\(ctx\)"):
        dp.ProcessGroup()
    with pytest.raises(TypeError, match="comm must be an mpi4py communicator .* not int"):
        dp.ProcessGroup.from_mpi4py(ctx, 0)

    model = make_model(ctx)
    with pytest.raises(TypeError, match="group must be a dataparallel ProcessGroup, not NoneType"):
        dp.DistributedDataParallel(model, None)
    with pytest.raises(TypeError, match="module must be a dataparallel Module, not DataParallel"):
        dp.DistributedDataParallel(dp.DataParallel(model, ["cpu:0"]), group)
    with pytest.raises(ValueError, match="bucket_cap_mb = 0: expected a number of MiB > 0"):
        dp.DistributedDataParallel(model, group, bucket_cap_mb=0)
    with pytest.raises(ValueError, match="first_bucket_mb = nan"):
        dp.DistributedDataParallel(model, group, first_bucket_mb=float("nan"))
    with pytest.raises(dp.InvalidArgumentError, match="device"):
        dp.DistributedDataParallel(model, group, device_ids=["cpu:0", "cuda:0"])
    # The DataParallel inside the rank: each bad value named.
    with pytest.raises(ValueError, match="buffer_sync = 'sum': expected \"none\" or \"average\""):
        dp.DistributedDataParallel(model, group, buffer_sync="sum")
    with pytest.raises(ValueError, match="broadcast_bucket_bytes = -1: expected a whole number"):
        dp.DistributedDataParallel(model, group, broadcast_bucket_bytes=-1)
    with pytest.raises(ValueError, match="broadcast_bucket_bytes = 1.5"):
        dp.DistributedDataParallel(model, group, broadcast_bucket_bytes=1.5)
    with pytest.raises(dp.InvalidArgumentError,
                       match=r"options->local->grad_reduce_dtype = 2 is neither DP_FLOAT32"):
        dp.DistributedDataParallel(model, group, grad_reduce_dtype="int64")
    with pytest.raises(TypeError, match="dtype 'float16' is not"):
        dp.DistributedDataParallel(model, group, grad_reduce_dtype="float16")
    with pytest.raises(dp.InvalidArgumentError,
                       match=r"options->allreduce_dtype = 2 is neither DP_FLOAT32"):
        dp.DistributedDataParallel(model, group, allreduce_dtype="int64")
    with pytest.raises(dp.InvalidArgumentError,
                       match="chunk_sizes has 3 entries but there are 2 devices"):
        dp.DistributedDataParallel(model, group, device_ids=TWO_DEVICES, chunk_sizes=[1, 1, 2])
    with pytest.raises(dp.InvalidArgumentError, match=r"chunk_sizes\[0\] = -1 is negative"):
        dp.DistributedDataParallel(model, group, device_ids=TWO_DEVICES, chunk_sizes=[-1, 5])
    with pytest.raises(TypeError, match="gather"):  # no gather inside a rank: always gathered
        dp.DistributedDataParallel(model, group, gather=False)

    ddp = dp.DistributedDataParallel(model, group)
    with pytest.raises(dp.InvalidArgumentError, match="broadcast has 1 flags but there are 2"):
        ddp(t, t, broadcast=[True])
    with pytest.raises(TypeError, match="input 0 must be a dataparallel Tensor"):
        ddp([[1.0] * D_IN])
    ddp.close()


def test_models_that_differ_between_ranks_fail_on_every_rank_naming_the_difference(ctx, group):
    model = make_model(ctx, hidden=HIDDEN + group.rank)
    with pytest.raises(dp.InvalidArgumentError,
                       match=r"the ranks' models differ: rank 0 has parameter '0\.weight' "
                             r"\(float32, \[16, 12\]\) where rank 1 has parameter '0\.weight' "
                             r"\(float32, \[17, 12\]\)"):
        dp.DistributedDataParallel(model, group)
