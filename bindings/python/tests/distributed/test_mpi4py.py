"""Process groups over mpi4py communicators, run by ctest as a job of 2 ranks (see
test_ddp.py). mpi4py is imported first: it initialises MPI (MPI_THREAD_MULTIPLE) and
finalises it at exit, so the groups here never do; mpi4py's own collectives are the
reference the groups' results are checked against."""
import numpy as np
import pytest

MPI = pytest.importorskip("mpi4py.MPI")

import dataparallel as dp  # noqa: E402 - after mpi4py, which must start MPI

D_IN, CLASSES, ROWS = 6, 3, 4


@pytest.fixture(scope="module")
def ctx():
    c = dp.Context(cpu_devices=2, load_cuda=False, seed=0)
    yield c
    c.close()


@pytest.fixture(scope="module")
def world(ctx):
    with dp.ProcessGroup.from_mpi4py(ctx, MPI.COMM_WORLD) as g:
        yield g


def test_a_group_over_comm_world_reduces_as_mpi4py_does(ctx, world):
    comm = MPI.COMM_WORLD
    assert (world.rank, world.size) == (comm.Get_rank(), comm.Get_size()) and world.size == 2
    mine = np.random.default_rng(comm.Get_rank()).standard_normal(5)
    for op, mpi_op in (("sum", MPI.SUM), ("max", MPI.MAX), ("min", MPI.MIN)):
        want = np.empty_like(mine)
        comm.Allreduce(mine, want, op=mpi_op)
        got = world.allreduce(ctx.tensor(mine, dtype=dp.float64), op).numpy()
        np.testing.assert_array_equal(got, want, err_msg=op)
    total = np.empty_like(mine)
    comm.Allreduce(mine, total, op=MPI.SUM)
    got = world.allreduce(ctx.tensor(mine, dtype=dp.float64), "average").numpy()
    np.testing.assert_array_equal(got, total / 2)
    np.testing.assert_array_equal(world.allgather(ctx.tensor(mine[None], dtype=dp.float64))
                                  .numpy(), np.stack(comm.allgather(mine)))


def test_a_group_over_a_split_communicator_takes_its_ranks(ctx):
    """Ranks reversed by Split's key: the group's rank 0 is world rank 1."""
    comm = MPI.COMM_WORLD.Split(color=0, key=-MPI.COMM_WORLD.Get_rank())
    try:
        with dp.ProcessGroup.from_mpi4py(ctx, comm) as g:
            assert g.rank == comm.Get_rank() == 1 - MPI.COMM_WORLD.Get_rank()
            t = ctx.tensor([float(MPI.COMM_WORLD.Get_rank())])
            g.broadcast(t, root=0)  # the group's rank 0: world rank 1
            assert t.tolist() == [1.0]
        with dp.ProcessGroup.from_mpi(ctx, comm=comm) as g:  # the same through from_mpi
            assert g.rank == comm.Get_rank()
    finally:
        comm.Free()


def test_ddp_over_an_mpi4py_group_averages_what_mpi4py_averages(ctx, world):
    model = dp.Linear(ctx, D_IN, CLASSES)
    ddp = dp.DistributedDataParallel(model, world)
    rng = np.random.default_rng(7 + world.rank)  # each rank its own rows
    x = rng.standard_normal((ROWS, D_IN)).astype(np.float32)
    y = rng.integers(0, CLASSES, ROWS)
    # The reference: this rank's gradients alone, averaged by mpi4py.
    dp.cross_entropy(model(ctx.tensor(x)), ctx.tensor(y)).backward()
    local = [p.grad.numpy() for p in model.parameters()]
    want = [MPI.COMM_WORLD.allreduce(g, op=MPI.SUM) / 2 for g in local]
    model.zero_grad()
    dp.cross_entropy(ddp(ctx.tensor(x)), ctx.tensor(y)).backward()
    for p, w in zip(model.parameters(), want):
        np.testing.assert_allclose(p.grad.numpy(), w, rtol=1e-6, atol=1e-7)
    ddp.close()


def test_a_world_group_leaves_mpi4pys_mpi_running(ctx):
    """from_mpi() inside a program that started MPI through mpi4py uses it and does not
    finalise it on release."""
    with dp.ProcessGroup.from_mpi(ctx) as g:
        assert g.size == 2
    assert not MPI.Is_finalized()
    assert MPI.COMM_WORLD.allreduce(1) == 2


def test_objects_other_than_intracommunicators_are_refused(ctx):
    with pytest.raises(TypeError, match="comm must be an mpi4py communicator .* not Group"):
        dp.ProcessGroup.from_mpi4py(ctx, MPI.COMM_WORLD.Get_group())
    with pytest.raises(TypeError, match="not str"):
        dp.ProcessGroup.from_mpi(ctx, comm="world")
    with pytest.raises(ValueError, match="comm is MPI.COMM_NULL"):
        dp.ProcessGroup.from_mpi4py(ctx, MPI.COMM_NULL)
