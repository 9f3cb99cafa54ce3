"""Several processes training one model, as torch.distributed and
torch.nn.parallel.DistributedDataParallel on the MPI backend: a ProcessGroup is the ranks
of a job started by mpirun (or an mpi4py communicator) and the collectives between them;
DistributedDataParallel runs the module over the rank's devices and, during backward,
averages the gradients over the ranks, so that every rank takes the same optimizer step.

    # mpirun -np 2 python3 train.py
    ctx = dp.Context(load_cuda=False)
    with dp.ProcessGroup.from_mpi(ctx) as group:
        ddp = dp.DistributedDataParallel(model, group)
        opt = dp.SGD(model, lr=0.1)
        loss = dp.cross_entropy(ddp(x_of_this_rank), y_of_this_rank)
        opt.zero_grad(); loss.backward(); opt.step()

MPI starts once per process: when from_mpi() started it, MPI is finalised once the last
such group (and every DDP over it) is released, after which no group can be made; keep
one group for the program's life and release it before the process ends (a with block,
or close()).
"""
import contextlib
import math
import numbers
import sys

from . import capi
from ._handle import Handle, handle_of
from .context import Context
from .devices import device as as_device, from_c
from .dtypes import dtype_of
from .errors import Error
from .nn import Module, _raise_from_forward
from .parallel import _PHASES, _ModuleWrapper, _options as _data_parallel_options
from .tensor import _th, _ths, _wrap

__all__ = ["ProcessGroup", "DistributedDataParallel"]

_REDUCE_OPS = {"sum": 0, "average": 1, "max": 2, "min": 3}  # dp_reduce_op


def _group_options(timeout):
    """dp_process_group_options for `timeout` seconds (None: the library's default)."""
    options = capi.dp_process_group_options()
    if timeout is not None:
        options.timeout_seconds = _positive(timeout, "timeout", "seconds")
    return options


def _positive(value, name, unit):
    """value as a finite float > 0, or a TypeError / ValueError naming `name` and value."""
    if not isinstance(value, numbers.Real) or isinstance(value, bool):
        raise TypeError(f"{name} must be a number of {unit}, not {type(value).__name__}")
    v = float(value)
    if not (math.isfinite(v) and v > 0):
        raise ValueError(f"{name} = {value!r}: expected a number of {unit} > 0")
    return v


def _reduce_op(op):
    code = _REDUCE_OPS.get(op) if isinstance(op, str) else None
    if code is None:
        raise ValueError(f'op = {op!r}: expected "sum", "average", "max" or "min"')
    return code


class ProcessGroup(Handle):
    """The ranks of a multi-process job and the collectives between them. Made by
    ProcessGroup.from_mpi(ctx) inside `mpirun -np N` (every rank calls it), or over an
    mpi4py communicator by ProcessGroup.from_mpi4py(ctx, comm).

    Each collective runs on the group's communication thread, in the order issued; every
    rank must call the same collectives in the same order. A collective that waits longer
    than the group's timeout (DP_DISTRIBUTED_TIMEOUT seconds, else 300) prints what it
    waited for and aborts the whole job, so that a rank that died or went another way
    stops the others instead of hanging them.
    """

    __slots__ = ("_h", "__weakref__")

    def __init__(self, *args, **kwargs):
        raise TypeError("make a ProcessGroup with ProcessGroup.from_mpi(ctx) or "
                        "ProcessGroup.from_mpi4py(ctx, comm)")

    @classmethod
    def _own(cls, handle):
        group = object.__new__(cls)
        group._h = handle
        return group

    @classmethod
    def from_mpi(cls, ctx, timeout=None, comm=None):
        """A group of every rank of the MPI job this process was started in (mpirun,
        mpiexec, srun). MPI is initialised here (MPI_THREAD_MULTIPLE) unless something
        (mpi4py) did it already, and then finalised when the last such group is released.

        timeout: seconds a collective may wait before the job is aborted (None:
        DP_DISTRIBUTED_TIMEOUT, else 300). comm: an mpi4py communicator, as from_mpi4py.
        Collective: every rank calls it. Raises NotSupportedError when the MPI plugin
        cannot be loaded, BackendError when MPI cannot start.
        """
        if comm is not None:
            return cls.from_mpi4py(ctx, comm, timeout)
        return cls._own(capi.dp_process_group_from_mpi(handle_of(ctx, Context, "ctx"),
                                                       _group_options(timeout)))

    @classmethod
    def from_mpi4py(cls, ctx, comm, timeout=None):
        """A group over the ranks of `comm`, an mpi4py communicator (MPI.COMM_WORLD, or one
        made by comm.Split): the group works on its own duplicate of it, so its collectives
        never match the program's. MPI stays mpi4py's: mpi4py initialises it at import
        (with MPI_THREAD_MULTIPLE; the group needs SERIALIZED or more) and finalises it at
        exit, so release the group before then. Collective over comm."""
        # Without mpi4py loaded, comm cannot be one of its communicators (and this module
        # does not load it: mpi4py starts MPI when imported).
        mpi = sys.modules.get("mpi4py.MPI")
        if mpi is not None and isinstance(comm, mpi.Comm) and comm == mpi.COMM_NULL:
            raise ValueError("comm is MPI.COMM_NULL, which has no ranks")
        if mpi is None or not isinstance(comm, mpi.Intracomm):
            raise TypeError("comm must be an mpi4py communicator (mpi4py.MPI.Intracomm), "
                            f"not {type(comm).__name__}")
        return cls._own(capi.dp_process_group_from_mpi_comm(handle_of(ctx, Context, "ctx"),
                                                            comm.py2f(), _group_options(timeout)))

    @property
    def rank(self):
        """This process's rank, 0 .. size - 1."""
        return capi.dp_process_group_rank(self._h)

    @property
    def size(self):
        """The number of ranks."""
        return capi.dp_process_group_size(self._h)

    @property
    def local_rank(self):
        """This process's rank among the group's ranks on this machine."""
        return capi.dp_process_group_local_rank(self._h)

    @property
    def local_size(self):
        """The number of the group's ranks on this machine."""
        return capi.dp_process_group_local_size(self._h)

    def allreduce(self, tensor, op="sum"):
        """In place: every rank's tensor (the same shape and dtype on all) becomes the
        reduction over the ranks; op is "sum", "average" (the sum divided by size, floating
        tensors only), "max" or "min". Returns tensor."""
        code = _reduce_op(op)
        capi.dp_process_group_allreduce(self._h, _th(tensor, "tensor"), code)
        return tensor

    def broadcast(self, tensor, root=0):
        """In place: every rank's tensor becomes rank root's. Returns tensor."""
        capi.dp_process_group_broadcast(self._h, _th(tensor, "tensor"), root)
        return tensor

    def allgather(self, tensor):
        """Every rank's tensor (the same shape on all) concatenated along dim 0 in rank
        order, as a new tensor on tensor's device (a 0-dim tensor gives a vector)."""
        return _wrap(capi.dp_process_group_allgather(self._h, _th(tensor, "tensor")),
                     tensor._ctx)

    def barrier(self):
        """Returns when every rank has called it."""
        capi.dp_process_group_barrier(self._h)

    def __repr__(self):
        if self.closed:
            return "ProcessGroup(closed)"
        return f"ProcessGroup(rank={self.rank}, size={self.size})"


class DistributedDataParallel(_ModuleWrapper):
    """Wraps `module` for training over the ranks of `group`, as PyTorch's
    DistributedDataParallel: each rank calls it on its own share of the global batch, and
    backward leaves in the module's parameters the gradients averaged over the ranks (the
    gradients of the whole global batch for a mean loss); then each rank's optimizer takes
    the same step.

    Creating it is collective: every rank checks that the models agree (parameter and
    buffer names, shapes, dtypes; else every rank raises InvalidArgumentError naming the
    first difference) and takes rank 0's parameters and buffers.

    device_ids: this rank's devices (None: the GPU of its local rank where CUDA devices
    exist, else its share of the CPU devices); with several, the module runs as a
    DataParallel over them inside the rank. output_device, dim: as DataParallel's.
    bucket_cap_mb: the size of the gradient buckets whose allreduce starts as soon as
    backward has produced their last gradient; first_bucket_mb: the first bucket's.
    broadcast_buffers: rank 0's buffers (BatchNorm statistics) reach every rank before
    each forward. allreduce_dtype: what float32 gradient buckets travel between the ranks
    in: "float32" (default), or "bfloat16" as PyTorch DDP's bf16_compress_hook (each
    rank's gradient divided by the ranks and rounded, summed in bfloat16, widened back):
    half the bytes, each average within ranks * 2^-8 times the mean of the ranks'
    gradient magnitudes of the float32 one. Every rank passes the same value.

    The DataParallel inside the rank takes DataParallel's options, under the same names:
    chunk_sizes (rows per device of this rank's batch, summing to it; None: equal
    chunks), cache_replicas, buffer_sync ("none" or "average": over the rank's replicas;
    broadcast_buffers then makes rank 0's the job's), alias_cpu, and grad_reduce_dtype
    (float32, or bfloat16 to move and sum the rank's replicas' gradients in bfloat16
    before the float32 average over the ranks). broadcast_bucket_bytes is DataParallel's
    bucket_bytes, renamed beside bucket_cap_mb: the bucket size of the broadcast that
    replicates the module onto the rank's devices (0: 10 MiB), not a gradient bucket.
    DataParallel's gather is not offered: the rank's output is always gathered on
    output_device, as PyTorch's DDP does. The options are copied at creation; a bad value
    raises ValueError (InvalidArgumentError from the library) naming it.
    """

    __slots__ = ("_h", "_module", "_group", "_grad_sync", "__weakref__")

    def __init__(self, module, group, device_ids=None, output_device=None, dim=0, *,
                 bucket_cap_mb=25, first_bucket_mb=1, broadcast_buffers=True, chunk_sizes=None,
                 cache_replicas=False, buffer_sync="none", alias_cpu=True,
                 broadcast_bucket_bytes=0, grad_reduce_dtype="float32",
                 allreduce_dtype="float32"):
        options = capi.dp_ddp_options()
        options.bucket_bytes = _bucket_bytes(bucket_cap_mb, "bucket_cap_mb")
        options.first_bucket_bytes = _bucket_bytes(first_bucket_mb, "first_bucket_mb")
        options.broadcast_buffers = int(bool(broadcast_buffers))
        options.allreduce_dtype = int(dtype_of(allreduce_dtype))  # the library checks it
        # set_local copies them (chunk_sizes included) into `options`.
        options.set_local(_data_parallel_options(
            chunk_sizes, cache_replicas, buffer_sync, alias_cpu, broadcast_bucket_bytes,
            "broadcast_bucket_bytes", grad_reduce_dtype))
        devices = None if device_ids is None else [as_device(d) for d in device_ids]
        output = None if output_device is None else as_device(output_device)
        self._h = capi.dp_ddp_create(handle_of(module, Module, "module"),
                                     handle_of(group, ProcessGroup, "group"), devices, output,
                                     dim, options)
        self._module = module  # a Python module's forward is held weakly by its handle
        self._group = group
        self._grad_sync = True

    def __call__(self, *inputs, broadcast=None):
        """One forward of this rank's batch; `broadcast` (one flag per input) copies inputs
        whole to each of the rank's devices instead of splitting them. Returns the output
        (a list when the module returns several)."""
        try:
            outs = capi.dp_ddp_forward(self._h, _ths(inputs, "input {}"), broadcast)
        except Error as e:
            _raise_from_forward(e)
        ctx = self._module._ctx
        return _wrap(outs[0], ctx) if len(outs) == 1 else [_wrap(h, ctx) for h in outs]

    forward = __call__

    @property
    def module(self):
        """The wrapped module (the object passed in)."""
        self._h
        return self._module

    @property
    def group(self):
        """The process group (the object passed in)."""
        self._h
        return self._group

    @property
    def devices(self):
        """This rank's devices."""
        return [from_c(d) for d in capi.dp_ddp_devices(self._h)]

    @property
    def bucket_count(self):
        """The number of gradient buckets."""
        return capi.dp_ddp_bucket_count(self._h)

    def stats(self):
        """Seconds of a step by part: {"last": {...}, "total": {...}, "calls": forwards}, each
        part dict holding the rank's DataParallel phases (scatter ... reduce, as
        DataParallel.stats) and buffer_broadcast (rank 0's buffers before the forward),
        allreduce (the gradient buckets' allreduce, summed over the buckets, on the
        communication thread: it overlaps backward) and sync_wait (backward's wait for it)."""
        last, total, calls = capi.dp_ddp_stats(self._h)

        def parts(t):
            d = {p: getattr(t.local, p) for p in _PHASES}
            d.update(buffer_broadcast=t.buffer_broadcast, allreduce=t.allreduce,
                     sync_wait=t.sync_wait)
            return d

        return {"last": parts(last), "total": parts(total), "calls": calls}

    def reset_stats(self):
        capi.dp_ddp_reset_stats(self._h)

    @property
    def grad_sync(self):
        """Whether the next backward averages the gradients over the ranks (see no_sync)."""
        self._h
        return self._grad_sync

    @grad_sync.setter
    def grad_sync(self, sync):
        capi.dp_ddp_set_grad_sync(self._h, int(bool(sync)))
        self._grad_sync = bool(sync)

    @contextlib.contextmanager
    def no_sync(self):
        """Inside the block, backward only accumulates each rank's own gradients (gradient
        accumulation); the first backward after it averages what accumulated. The previous
        setting returns at the end of the block."""
        previous = self.grad_sync
        self.grad_sync = False
        try:
            yield self
        finally:
            if not self.closed:
                self.grad_sync = previous

    @contextlib.contextmanager
    def join(self, enable=True):
        """Training with uneven inputs (PyTorch's join()): inside the block every forward
        first counts the ranks still training, and at its end a rank that ran out of
        batches takes part in the others' gradient averaging (with zero gradients) until
        every rank has finished; then every rank takes the parameters and buffers of the
        rank that ran the most forwards. Every rank enters the block before its first
        forward, and each forward with grad mode on is followed by one backward. An
        exception leaves the block without joining (the other ranks' collectives then
        time out, aborting the job). enable=False: an ordinary block."""
        if not enable:
            yield self
            return
        capi.dp_ddp_set_uneven_inputs(self._h, 1)
        try:
            yield self
            capi.dp_ddp_join(self._h)
        finally:
            if not self.closed:
                capi.dp_ddp_set_uneven_inputs(self._h, 0)

    def __repr__(self):
        if self.closed:
            return "DistributedDataParallel(closed)"
        devices = ", ".join(str(d) for d in self.devices)
        return (f"DistributedDataParallel(group={self._group!r}, devices=[{devices}], "
                f"module={self._module!r})")


def _bucket_bytes(mb, name):
    """A bucket size in MiB as bytes (at least 1)."""
    return max(1, int(_positive(mb, name, "MiB") * (1 << 20)))
