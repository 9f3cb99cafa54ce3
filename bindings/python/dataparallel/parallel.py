"""DataParallel, as torch.nn.DataParallel: forward scatters the inputs along `dim` over
the devices, replicates the module, runs the replicas in parallel and gathers the outputs;
backward is the ordinary Tensor.backward on a loss computed from them, which leaves the
SUM of the replicas' gradients in the module's parameters. Also the four stages on their
own (scatter, replicate, parallel_apply, gather) and the functional data_parallel."""
import numbers
import os

from . import capi
from ._handle import Handle, handle_of
from .devices import device as as_device, from_c
from .dtypes import dtype_of
from .errors import Error
from .nn import Module, _Replica, _raise_from_forward
from .tensor import Tensor, _th, _ths, _wrap

__all__ = ["DataParallel", "scatter", "gather", "replicate", "parallel_apply", "data_parallel"]

_BUFFER_SYNC = {"none": 0, "average": 1}
_PHASES = ("scatter", "replicate", "apply", "gather", "backward", "reduce")


def _devices(device_ids):
    return None if device_ids is None else [as_device(d) for d in device_ids]


def _options(chunk_sizes, cache_replicas, buffer_sync, alias_cpu, bucket_bytes, bucket_name,
             grad_reduce_dtype):
    """dp_data_parallel_options, for DataParallel and for the one inside each rank of a
    DistributedDataParallel (which names bucket_bytes `bucket_name`). The library checks
    chunk_sizes and grad_reduce_dtype and names them and their values."""
    options = capi.dp_data_parallel_options()
    if chunk_sizes is not None:
        options.set_chunk_sizes([int(c) for c in chunk_sizes])
    options.cache_replicas = int(bool(cache_replicas))
    if not isinstance(buffer_sync, str) or buffer_sync not in _BUFFER_SYNC:
        raise ValueError(f"buffer_sync = {buffer_sync!r}: expected \"none\" or \"average\"")
    options.buffer_sync = _BUFFER_SYNC[buffer_sync]
    options.alias_cpu = int(bool(alias_cpu))
    if (not isinstance(bucket_bytes, numbers.Integral) or isinstance(bucket_bytes, bool)
            or bucket_bytes < 0):
        raise ValueError(f"{bucket_name} = {bucket_bytes!r}: expected a whole number of bytes "
                         ">= 0 (0: 10 MiB)")
    options.bucket_bytes = int(bucket_bytes)
    options.grad_reduce_dtype = int(dtype_of(grad_reduce_dtype))
    return options


class _ModuleWrapper(Handle):
    """What DataParallel and DistributedDataParallel pass through to the module they wrap
    (in `_module`), so that a training loop treats the wrapper as the module."""

    __slots__ = ()

    def parameters(self):
        return self._module.parameters()

    def named_parameters(self):
        return self._module.named_parameters()

    def train(self, mode=True):
        self._module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self):
        self._module.zero_grad()

    def state_dict(self):
        return self._module.state_dict()

    def load_state_dict(self, state, strict=True):
        self._module.load_state_dict(state, strict)


class DataParallel(_ModuleWrapper):
    """Wraps `module` for data-parallel forwards.

    device_ids: the devices (None: every CUDA device, else every CPU device); the module
    must be on device_ids[0] (with one device it is moved there now). output_device: where
    outputs are gathered (None: device_ids[0]). dim: the batch dimension.
    chunk_sizes: rows per device (None: equal chunks as torch.chunk). gather=False: forward
    returns every replica's outputs on its own device. cache_replicas: keep replicas across
    forwards while grad mode is off and nothing changed. buffer_sync: "none" (PyTorch:
    replica 0's buffer updates) or "average". alias_cpu: CPU replicas share parameter
    memory instead of copying it. bucket_bytes: broadcast bucket size (0: 10 MiB).
    grad_reduce_dtype: float32 (default), or bfloat16 to move and sum the replicas'
    float32 gradients in bfloat16, as PyTorch DDP's bf16_compress_hook (docs/autocast.md).
    """

    __slots__ = ("_h", "_module", "_gather", "__weakref__")

    def __init__(self, module, device_ids=None, output_device=None, dim=0, *, chunk_sizes=None,
                 gather=True, cache_replicas=False, buffer_sync="none", alias_cpu=True,
                 bucket_bytes=0, grad_reduce_dtype="float32"):
        options = _options(chunk_sizes, cache_replicas, buffer_sync, alias_cpu,
                           bucket_bytes, "bucket_bytes", grad_reduce_dtype)
        options.no_gather = int(not gather)
        output = None if output_device is None else as_device(output_device)
        self._h = capi.dp_data_parallel_create(handle_of(module, Module, "module"),
                                               _devices(device_ids), output, dim, options)
        self._module = module
        self._gather = gather

    def __call__(self, *inputs, broadcast=None):
        """One forward; `broadcast` (one flag per input) copies inputs whole to every device
        instead of splitting them. Returns the gathered output (a list when the module
        returns several), or with gather=False the list of every replica's outputs."""
        try:
            outs = capi.dp_data_parallel_forward(self._h, _ths(inputs, "input {}"), broadcast)
        except Error as e:
            _raise_from_forward(e)
        ctx = self._module._ctx
        if self._gather and len(outs) == 1:
            return _wrap(outs[0], ctx)
        return [_wrap(h, ctx) for h in outs]

    forward = __call__

    @property
    def module(self):
        """The wrapped module (the object passed in)."""
        self._h
        return self._module

    @property
    def devices(self):
        return [from_c(d) for d in capi.dp_data_parallel_devices(self._h)]

    def save(self, path):
        """The module's state under its own names (no "module." prefix), as safetensors."""
        capi.dp_data_parallel_save(self._h, os.fspath(path))

    def load(self, path):
        capi.dp_data_parallel_load(self._h, os.fspath(path))

    def stats(self):
        """Seconds per phase: {"last": {...}, "total": {...}, "calls": forwards}."""
        last, total, calls = capi.dp_data_parallel_stats(self._h)
        return {"last": {p: getattr(last, p) for p in _PHASES},
                "total": {p: getattr(total, p) for p in _PHASES}, "calls": calls}

    def reset_stats(self):
        capi.dp_data_parallel_reset_stats(self._h)

    def __repr__(self):
        if self.closed:
            return "DataParallel(closed)"
        devices = ", ".join(str(d) for d in self.devices)
        return f"DataParallel(devices=[{devices}], module={self._module!r})"


def scatter(x, devices, chunk_sizes=None, dim=0):
    """Splits x along dim over the devices (chunk_sizes: one per device, or None for
    torch.chunk's). Fewer pieces than devices when x is small. Differentiable."""
    sizes = None if chunk_sizes is None else [int(c) for c in chunk_sizes]
    return [_wrap(h, x._ctx) for h in capi.dp_scatter(_th(x, "x"), _devices(devices), sizes, dim)]


def gather(tensors, output_device, dim=0):
    """Concatenates tensors (any devices) along dim on output_device. Differentiable."""
    tensors = list(tensors)
    handles = _ths(tensors, "tensor {}")
    return _wrap(capi.dp_gather(handles, as_device(output_device), dim),
                 tensors[0]._ctx if tensors else None)


def replicate(module, devices):
    """Replicas of module (on devices[0]) for each device: replicas[0] is the module
    itself; the others hold broadcast copies of the parameters (gradients flow back)."""
    handle = handle_of(module, Module, "module")
    replicas = [_Replica(module._ctx, h) for h in capi.dp_replicate(handle, _devices(devices))]
    for r in replicas:
        # A Python module's forward is held weakly by its handle: each replica keeps the
        # module alive for as long as the replica may run it.
        r.__dict__["_source"] = module
    return replicas


def parallel_apply(replicas, inputs, devices):
    """Runs replicas[i] on inputs[i] (a Tensor or a sequence of them, the same count for
    each replica) on devices[i], all at once. Each replica must return one output."""
    per_replica = [[i] if isinstance(i, Tensor) else list(i) for i in inputs]
    counts = sorted({len(group) for group in per_replica})
    if len(counts) > 1:
        raise ValueError(f"parallel_apply: each replica needs the same number of inputs, not "
                         f"{[len(group) for group in per_replica]}")
    flat = [_th(t, f"input {k} of replica {i}") for i, group in enumerate(per_replica)
            for k, t in enumerate(group)]
    modules = [handle_of(r, Module, f"replica {i}") for i, r in enumerate(replicas)]
    try:
        outs = capi.dp_parallel_apply(modules, flat, _devices(devices))
    except Error as e:
        _raise_from_forward(e)
    ctx = replicas[0]._ctx if replicas else None
    return [_wrap(h, ctx) for h in outs]


def data_parallel(module, inputs, device_ids, output_device=None, dim=0, broadcast=None):
    """One DataParallel forward without a wrapper (and without moving the module).
    `broadcast` (one flag per input) copies inputs whole to every device instead of
    splitting them, as in DataParallel.__call__."""
    inputs = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    output = None if output_device is None else as_device(output_device)
    handle, handles = handle_of(module, Module, "module"), _ths(inputs, "input {}")
    try:
        outs = capi.dp_data_parallel_apply(handle, handles, broadcast,
                                           _devices(device_ids), output, dim)
    except Error as e:
        _raise_from_forward(e)
    return _wrap(outs[0], module._ctx) if len(outs) == 1 else [_wrap(h, module._ctx)
                                                               for h in outs]


def _unwrapped(module):
    """The module a DataParallel or DistributedDataParallel wraps, or the module itself (an
    optimizer trains, and a checkpoint holds, the wrapper's module; a child that happens to
    be called `module` is not one)."""
    from .distributed import DistributedDataParallel  # it imports this module
    return module.module if isinstance(module, (DataParallel, DistributedDataParallel)) \
        else module
