"""Context: the devices and their worker threads; factories for tensors on them."""
import enum

from . import capi
from ._handle import Handle
from .devices import Device, DeviceType, device as as_device

__all__ = ["Context", "LogLevel"]


class LogLevel(enum.IntEnum):
    """dp_log_level."""

    debug = 0
    info = 1
    warning = 2
    error = 3


class Context(Handle):
    """The library's devices: `cpu_devices` virtual CPU devices (0: DP_CPU_DEVICES, else the
    number of cores), and the CUDA devices when `load_cuda` finds any.

    seed: layers made in the order a PyTorch model makes its own start from the weights
    torch.manual_seed(seed) gives it (the library draws from PyTorch's generator stream).

    log: None (silent) or a callable log(level, message) receiving the library's messages
    at or above log_level; it runs on a Python thread, possibly a little after the event,
    and must not call the library. The library keeps `log` (and what it references) while
    its context lives: tensors, modules and optimizers keep that context alive after this
    object is closed, and `log` is let go when the last of them is.
    """

    __slots__ = ("_h", "__weakref__")

    def __init__(self, cpu_devices=0, load_cuda=True, allow_tf32=False, seed=0, log=None,
                 log_level=LogLevel.warning):
        options = capi.dp_context_options()
        options.cpu_devices = cpu_devices
        options.load_cuda = int(bool(load_cuda))
        options.allow_tf32 = int(bool(allow_tf32))
        options.seed = seed
        options.log_level = int(LogLevel(log_level))
        if log is not None:
            if not callable(log):
                raise TypeError("log must be a callable log(level, message) or None")
            options.set_log(lambda level, message: log(LogLevel(level), message))
        self._h = capi.dp_context_create(options)

    # ---- devices ----
    def device_count(self, type=DeviceType.cpu):
        """Number of devices of `type` ("cpu" or "cuda")."""
        return capi.dp_device_count(self._h, _device_type(type))

    def devices(self, type=None):
        """Every device of `type`; None: the CUDA devices if there are any, else the CPU ones
        (what DataParallel uses by default)."""
        if type is None:
            type = DeviceType.cuda if self.device_count(DeviceType.cuda) else DeviceType.cpu
        t = _device_type(type)
        return [Device(t, i) for i in range(self.device_count(t))]

    def device_name(self, device):
        """E.g. "cpu:1 (virtual CPU device, 1 thread)"."""
        return capi.dp_device_name_string(self._h, as_device(device))

    def device_memory(self, device):
        """(free, total) bytes of a device."""
        free, total = capi.dp_device_memory(self._h, as_device(device))
        return free, total

    def bf16_native(self, device):
        """Whether `device` computes bfloat16 products in hardware (a CPU with AVX512-BF16 or
        AMX, a GPU of compute capability 8.0 or later). Where it does not, bfloat16 and
        autocast still compute correctly (in float32, rounding the results): they save
        memory and bytes moved, not time."""
        return capi.dp_device_bf16_native(self._h, as_device(device))

    def synchronize(self, device=None):
        """Waits for queued work on `device` (None: on every device)."""
        for d in [as_device(device)] if device is not None else \
                self.devices("cpu") + self.devices("cuda"):
            capi.dp_device_synchronize(self._h, d)

    # ---- tensors ----
    def tensor(self, data, dtype=None, device=None):
        """A tensor holding a copy of `data` (array-like). See dataparallel.tensor."""
        from .tensor import tensor
        return tensor(self, data, dtype=dtype, device=device)

    def from_numpy(self, array, copy=True, device=None, dtype=None):
        """See Tensor.from_numpy."""
        from .tensor import Tensor
        return Tensor.from_numpy(self, array, copy=copy, device=device, dtype=dtype)

    def from_dlpack(self, obj):
        """See Tensor.from_dlpack."""
        from .tensor import Tensor
        return Tensor.from_dlpack(self, obj)

    def zeros(self, shape, dtype=None, device=None):
        from .tensor import zeros
        return zeros(self, shape, dtype=dtype, device=device)

    def empty(self, shape, dtype=None, device=None):
        from .tensor import empty
        return empty(self, shape, dtype=dtype, device=device)

    def full(self, shape, value, dtype=None, device=None):
        from .tensor import full
        return full(self, shape, value, dtype=dtype, device=device)

    def __repr__(self):
        if self.closed:
            return "Context(closed)"
        return (f"Context(cpu={self.device_count('cpu')}, "
                f"cuda={self.device_count('cuda')})")


def _device_type(value):
    if isinstance(value, str):
        try:
            return DeviceType[value]
        except KeyError:
            raise ValueError(f"device type \"{value}\" is not cpu or cuda") from None
    return DeviceType(value)

