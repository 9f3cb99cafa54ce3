"""Tensor: a library tensor (float32, float64, int64 or bfloat16, on a CPU or CUDA device),
with NumPy and DLPack exchange, autograd and the ops as methods; the factories; grad mode."""
import functools
import numbers
import operator

import numpy as np

from . import capi
from ._handle import Handle, handle_of
from .devices import DeviceType, device as as_device, from_c
from .dtypes import (DType, bfloat16, bfloat16_bits_of, bfloat16_to_float32, dtype_of, float32,
                     storage_dtype)
from .errors import InvalidArgumentError

__all__ = ["Tensor", "tensor", "zeros", "empty", "full", "from_numpy", "from_dlpack",
           "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "backward"]

_new = object.__new__
_DLPACK_CPU = 1  # kDLCPU


def _wrap(handle, ctx):
    """A Tensor owning `handle` (a low-level proxy), made in context `ctx` (a Context or
    None when unknown)."""
    t = _new(Tensor)
    t._h = handle
    t._ctx = ctx
    return t


def _pair(value, name):
    if isinstance(value, int):
        return value, value
    if len(value) != 2:
        raise ValueError(f"{name} must be an int or a pair of ints, not {value!r}")
    return int(value[0]), int(value[1])


class Tensor(Handle):
    """A tensor. Made by dataparallel.tensor(ctx, data), Tensor.from_numpy, ctx.zeros and
    the like, or returned by ops and modules. Its memory is released when the object goes
    (or at close(), or at the end of a with block) unless other tensors share it."""

    __slots__ = ("_h", "_ctx", "__weakref__")

    # NumPy's +, -, * and / with a Tensor operand are the Tensor's own operators
    # (np.float32(2) * t is t.__rmul__, which keeps autograd); every other ufunc (np.sqrt,
    # np.isfinite, ...) works on the Tensor's values as an array, as before (a bfloat16
    # tensor's as float32: its NumPy form may be bits).
    _UFUNC_OPERATORS = {np.add: ("__add__", "__radd__"), np.subtract: ("__sub__", "__rsub__"),
                        np.multiply: ("__mul__", "__rmul__"),
                        np.true_divide: ("__truediv__", "__rtruediv__")}

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        ops = Tensor._UFUNC_OPERATORS.get(ufunc)
        if ops and method == "__call__" and not kwargs and len(inputs) == 2:
            a, b = inputs
            return getattr(a, ops[0])(b) if isinstance(a, Tensor) else getattr(b, ops[1])(a)
        arrays = [x._values() if isinstance(x, Tensor) else x for x in inputs]
        return getattr(ufunc, method)(*arrays, **kwargs)

    def __init__(self, *args, **kwargs):
        raise TypeError("make tensors with dataparallel.tensor(ctx, data), "
                        "Tensor.from_numpy(ctx, array), ctx.zeros(shape), ...")

    # ---- creation from NumPy and DLPack ----
    @classmethod
    def from_numpy(cls, ctx, array, copy=True, device=None, dtype=None):
        """A tensor with the contents of a NumPy array.

        copy=True: the data is copied (any dtype NumPy can convert: integers and booleans
        become int64, other floating types float32, ml_dtypes.bfloat16 stays bfloat16), onto
        `device` (default cpu:0), converted to `dtype` if given. dtype=bfloat16 rounds
        values to nearest even, except from an np.uint16 array, which it takes as the raw
        bits (the form bfloat16 tensors come back in without ml_dtypes).
        copy=False: the tensor borrows the array's memory on a CPU device: no copy, writes
        by either side are seen by the other, and the array stays alive (even after `del`)
        until the library no longer uses the memory. Needs a writable, C-contiguous,
        aligned float32, float64, int64 or ml_dtypes.bfloat16 array, or np.uint16 bits
        with dtype=bfloat16.
        """
        if copy:
            dt = storage_dtype(np.asarray(array).dtype) if dtype is None else dtype_of(dtype)
            return tensor(ctx, array, dtype=dt, device=device)
        if not isinstance(array, np.ndarray):
            raise InvalidArgumentError("from_numpy(copy=False) needs a NumPy array, "
                                       f"not {type(array).__name__}")
        d = as_device(device)
        if d.type != DeviceType.cpu:
            raise InvalidArgumentError(f"from_numpy(copy=False): device {d} is not a CPU "
                                       "device (borrowing works on host memory only)")
        bits = dtype is not None and dtype_of(dtype) == bfloat16 and array.dtype == np.uint16
        dt = bfloat16 if bits else storage_dtype(array.dtype)
        if dtype is not None and dtype_of(dtype) != dt:
            raise InvalidArgumentError(f"from_numpy(copy=False): array dtype {array.dtype} is "
                                       f"not {dtype_of(dtype).name} (borrowing does not "
                                       "convert; copy it instead)")
        if not bits and dt.numpy != array.dtype:
            raise InvalidArgumentError(f"from_numpy(copy=False): array dtype {array.dtype} is "
                                       "not float32, float64, int64 or bfloat16 (copy it "
                                       "instead)")
        if not array.flags.aligned:
            raise InvalidArgumentError("from_numpy(copy=False): the array is not aligned")
        return _wrap(capi.dp_py_tensor_borrow(ctx._h, dt, array.shape, array, d.index), ctx)

    @classmethod
    def from_dlpack(cls, ctx, obj):
        """A tensor sharing the memory of `obj`: an object with __dlpack__ (a NumPy array, a
        torch tensor, a Tensor) or an unconsumed DLPack capsule. CPU memory becomes CPU
        device 0's; CUDA memory needs the context's CUDA devices, and the import waits
        until the producer's work on that GPU has finished."""
        capsule = obj.__dlpack__() if hasattr(obj, "__dlpack__") else obj
        return _wrap(capi.dp_tensor_from_dlpack(ctx._h, capsule), ctx)

    # ---- metadata ----
    @property
    def shape(self):
        """The sizes, as a tuple."""
        return capi.dp_tensor_shape(self._h)

    @property
    def ndim(self):
        return capi.dp_tensor_ndim(self._h)

    def dim(self):
        return capi.dp_tensor_ndim(self._h)

    def size(self, dim=None):
        """The shape, or the size of dimension `dim` (negative counts from the end)."""
        return self.shape if dim is None else capi.dp_tensor_dim(self._h, dim)

    def numel(self):
        return capi.dp_tensor_numel(self._h)

    @property
    def nbytes(self):
        return capi.dp_tensor_nbytes(self._h)

    @property
    def dtype(self):
        return DType(capi.dp_tensor_dtype(self._h))

    @property
    def device(self):
        return from_c(capi.dp_tensor_device(self._h))

    @property
    def version(self):
        """Bumped by every in-place write to the tensor's memory."""
        return capi.dp_tensor_version(self._h)

    @property
    def context(self):
        """The Context this tensor was made in (None when not known)."""
        return self._ctx

    def data_ptr(self):
        """The address of the first element (CPU tensors only). Writes through it bypass the
        version counter, so autocast keeps no bfloat16 cast of this memory from then on."""
        return capi.dp_tensor_data(self._h)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    # ---- contents ----
    def numpy(self, copy=True):
        """The contents as a NumPy array of self.dtype.numpy: a copy (any device), or with
        copy=False a writable view of a CPU tensor's memory (which the view keeps alive;
        autocast then keeps no bfloat16 cast of the memory, docs/autocast.md).
        numpy.from_dlpack(t) shares the memory too, read-only as NumPy makes every DLPack
        import (NumPy takes no bfloat16 that way). A bfloat16 tensor gives
        ml_dtypes.bfloat16 values when ml_dtypes is installed, else np.uint16 bits
        (dataparallel.bfloat16_to_float32 reads them; t.to(dtype=float32).numpy() too)."""
        if not copy:
            return np.asarray(_HostMemory(self)).view(self.dtype.numpy)
        out = np.empty(self.shape, self.dtype.numpy)
        capi.dp_tensor_to_host(self._h, out)
        return out

    def _values(self):
        """The contents as a NumPy array of numbers: bfloat16 widened to float32 (exact)."""
        a = self.numpy()
        return bfloat16_to_float32(a) if self.dtype == bfloat16 else a

    def __array__(self, dtype=None, copy=None):
        """numpy() (a copy: the library may change the tensor in place), or its values as
        `dtype` (a bfloat16 tensor's values, never its bits)."""
        if dtype is None:
            return self.numpy()
        return self._values().astype(dtype, copy=False)

    def tolist(self):
        """Nested lists of Python numbers (bfloat16 values as floats, never bits)."""
        return self._values().tolist()

    def item(self):
        """The value of a one-element tensor as a Python number."""
        if self.numel() != 1:
            raise ValueError(f"item() needs one element, the tensor has {self.numel()}")
        return self._values().reshape(()).item()

    def __float__(self):
        return float(self.item())

    def __int__(self):
        return int(self.item())

    def copy_(self, src):
        """Overwrites the contents from `src` (array-like or Tensor, same number of elements),
        in place (bumps the version). Returns self."""
        if isinstance(src, Tensor):
            src = _contents_for(src, self.dtype)
        capi.dp_tensor_copy_from_host(self._h, _array_for(src, self.dtype))
        return self

    def to(self, device=None, dtype=None):
        """A copy on `device` and/or converted to `dtype` (differentiable across devices)."""
        t = self
        if device is not None:
            t = _wrap(capi.dp_tensor_to_device(t._h, as_device(device)), self._ctx)
        if dtype is not None:
            t = _wrap(capi.dp_tensor_to_dtype(t._h, dtype_of(dtype)), self._ctx)
        return t if t is not self else self.clone()

    def cpu(self, index=0):
        return self.to(device=(DeviceType.cpu, index))

    def clone(self):
        """A copy on the same device."""
        return _wrap(capi.dp_tensor_to_device(self._h, capi.dp_tensor_device(self._h)), self._ctx)

    # ---- DLPack ----
    def __dlpack__(self, stream=None):
        """A DLPack capsule sharing this tensor's memory (numpy.from_dlpack and
        torch.from_dlpack take it). CUDA work on the tensor is finished first (by the
        library's export)."""
        return capi.dp_tensor_to_dlpack(self._h)

    def __dlpack_device__(self):
        if capi.dp_tensor_device(self._h)[0] == DeviceType.cpu:
            return (_DLPACK_CPU, 0)
        return capi.dp_py_dlpack_device(capi.dp_tensor_to_dlpack(self._h))

    # ---- autograd ----
    @property
    def requires_grad(self):
        return capi.dp_tensor_requires_grad(self._h)

    @requires_grad.setter
    def requires_grad(self, value):
        capi.dp_tensor_set_requires_grad(self._h, int(bool(value)))

    def requires_grad_(self, value=True):
        self.requires_grad = value
        return self

    @property
    def grad(self):
        """The accumulated gradient of a leaf, or None."""
        h = capi.dp_tensor_grad(self._h)
        return None if h is None else _wrap(h, self._ctx)

    def zero_grad(self):
        """Drops the accumulated gradient."""
        capi.dp_tensor_zero_grad(self._h)

    def detach(self):
        """A tensor sharing this memory, outside the graph."""
        return _wrap(capi.dp_tensor_detach(self._h), self._ctx)

    def backward(self, grad=None, retain_graph=False):
        """Accumulates d(self)/d(leaf) into each leaf's grad (grad: d(loss)/d(self), None
        for a one-element tensor). The GIL is released meanwhile."""
        capi.dp_backward(self._h, _th_or_none(grad, "grad"), int(bool(retain_graph)))

    # ---- ops ----
    def _like(self, data):
        """`data` (array-like) as a tensor of this dtype on this device, made in this
        tensor's context (which the tensor keeps alive, also once its Context is closed)."""
        dt = self.dtype
        a = _array_for(data, dt)
        h = capi.dp_tensor_from_data(capi.dp_tensor_context(self._h), dt, a.shape, a,
                                     capi.dp_tensor_device(self._h))
        return _wrap(h, self._ctx)

    def _binary(self, other, op):
        if not isinstance(other, Tensor):
            other = self._like(other)
        return _wrap(op(self._h, other._h), self._ctx)

    def _scalar(self, other):
        """Whether `other` goes to a scalar op (add_scalar, scale: float tensors only).
        With an integer tensor an integer goes as a 0-d tensor of its dtype through the
        elementwise op instead, and any other number is refused: there is no type
        promotion."""
        if not (type(other) in (int, float) or isinstance(other, numbers.Real)):
            return False
        dt = self.dtype
        if dt != DType.int64:
            return True
        if not isinstance(other, numbers.Integral):
            raise TypeError(f"a {dt.name} tensor and {other!r}: no type promotion; make one "
                            "the other's dtype first (Tensor.to(dtype=...))")
        return False

    def __add__(self, other):
        if self._scalar(other):
            return _wrap(capi.dp_op_add_scalar(self._h, float(other)), self._ctx)
        return self._binary(other, capi.dp_op_add)

    __radd__ = __add__

    def __sub__(self, other):
        if self._scalar(other):
            return _wrap(capi.dp_op_add_scalar(self._h, -float(other)), self._ctx)
        return self._binary(other, capi.dp_op_sub)

    def __rsub__(self, other):
        if self._scalar(other):
            return _wrap(capi.dp_op_add_scalar(capi.dp_op_neg(self._h), float(other)), self._ctx)
        return self._like(other) - self

    def __mul__(self, other):
        if self._scalar(other):
            return _wrap(capi.dp_op_scale(self._h, float(other)), self._ctx)
        return self._binary(other, capi.dp_op_mul)

    __rmul__ = __mul__

    def __truediv__(self, other):
        # A true division also for a Python number (x * (1 / s) would overflow for a tiny
        # s and raise for 0): the number as a 0-d tensor of this dtype, as PyTorch's.
        return self._binary(other, capi.dp_op_div)

    def __rtruediv__(self, other):
        return self._like(other) / self  # the division broadcasts, as NumPy's would

    def __neg__(self):
        return _wrap(capi.dp_op_neg(self._h), self._ctx)

    def __matmul__(self, other):
        return self._binary(other, capi.dp_op_matmul)

    def __rmatmul__(self, other):
        return self._like(other) @ self

    def relu(self):
        return _wrap(capi.dp_op_relu(self._h), self._ctx)

    def gelu(self):
        """The exact (erf) GELU."""
        return _wrap(capi.dp_op_gelu(self._h), self._ctx)

    def tanh(self):
        return _wrap(capi.dp_op_tanh(self._h), self._ctx)

    def sigmoid(self):
        return _wrap(capi.dp_op_sigmoid(self._h), self._ctx)

    def exp(self):
        return _wrap(capi.dp_op_exp(self._h), self._ctx)

    def log(self):
        return _wrap(capi.dp_op_log(self._h), self._ctx)

    def sum(self, dim=None, keepdim=False):
        if dim is None:
            return _wrap(capi.dp_op_sum(self._h), self._ctx)
        return _wrap(capi.dp_op_sum_dim(self._h, dim, int(keepdim)), self._ctx)

    def mean(self, dim=None, keepdim=False):
        if dim is None:
            return _wrap(capi.dp_op_mean(self._h), self._ctx)
        return _wrap(capi.dp_op_mean_dim(self._h, dim, int(keepdim)), self._ctx)

    def argmax(self, dim):
        """Index of the largest element along dim (int64; not differentiable)."""
        return _wrap(capi.dp_op_argmax(self._h, dim), self._ctx)

    def matmul(self, other):
        return self @ other

    def softmax(self, dim):
        return _wrap(capi.dp_op_softmax(self._h, dim), self._ctx)

    def log_softmax(self, dim):
        return _wrap(capi.dp_op_log_softmax(self._h, dim), self._ctx)

    def reshape(self, *shape):
        """A view with another shape (one size may be -1)."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = tuple(shape[0])
        return _wrap(capi.dp_op_reshape(self._h, shape), self._ctx)

    view = reshape

    def flatten(self, start_dim=0, end_dim=-1):
        return _wrap(capi.dp_op_flatten(self._h, start_dim, end_dim), self._ctx)

    def split(self, sizes, dim=0):
        """Pieces of sizes[i] along dim (a list of sizes summing to the size there)."""
        return [_wrap(h, self._ctx) for h in capi.dp_op_split(self._h, list(sizes), dim)]

    # ---- printing ----
    def __repr__(self):
        try:
            h = self._h
        except Exception:
            return "Tensor(closed)"
        extra = f", dtype={self.dtype.name}" if self.dtype != float32 else ""
        extra += f", device='{self.device}'" if not self.device.is_cpu or self.device.index else ""
        extra += ", requires_grad=True" if capi.dp_tensor_requires_grad(h) else ""
        if self.numel() <= 1000:
            body = np.array2string(self._values(), separator=", ", prefix="tensor(")
        else:
            body = f"<shape {self.shape}>"
        return f"tensor({body}{extra})"


class _HostMemory:
    """A CPU tensor's memory as NumPy sees it (__array_interface__). The array made from it
    keeps this object, and so a handle on the memory, alive."""

    __slots__ = ("_tensor", "__array_interface__")

    def __init__(self, t):
        self._tensor = t.detach()  # its own handle: closing `t` does not free the memory
        # bfloat16 as uint16 (ml_dtypes' type has no type string of its own: "<V2"); the
        # caller views it as the dtype's NumPy type.
        typestr = np.dtype(np.uint16).str if t.dtype == bfloat16 else t.dtype.numpy.str
        self.__array_interface__ = {"version": 3, "shape": t.shape, "typestr": typestr,
                                    "data": (capi.dp_tensor_data(t._h), False)}


# ---- factories -------------------------------------------------------------------------
def tensor(ctx, data, dtype=None, device=None):
    """A tensor on `device` (default cpu:0) holding a copy of `data` (array-like: nested
    lists, NumPy arrays, numbers, Tensors). Without dtype: NumPy arrays keep theirs (other
    integer types, np.uint16 included, become int64; ml_dtypes.bfloat16 is bfloat16),
    Python floats become float32, Python ints int64. dtype=bfloat16 rounds values to
    nearest even, but takes an np.uint16 array as the raw bits."""
    if isinstance(data, Tensor):
        if dtype is None:
            dtype = data.dtype
        data = _contents_for(data, dtype_of(dtype))
    if dtype is None:
        a = np.asarray(data)
        dt = storage_dtype(a.dtype)
        if not isinstance(data, np.ndarray) and a.dtype.kind == "f":
            dt = float32
    else:
        dt = dtype_of(dtype)
    a = _array_for(data, dt)
    return _wrap(capi.dp_tensor_from_data(ctx._h, dt, a.shape, a, as_device(device)), ctx)


def _th(x, what):
    """x's handle when x is a Tensor, else a TypeError naming `what`."""
    return handle_of(x, Tensor, what)


def _th_or_none(x, what):
    """_th for an optional tensor: None stays None."""
    return None if x is None else _th(x, what)


def _ths(tensors, what):
    """_th of each tensor; `what` names tensor i by what.format(i) ("input {}")."""
    return [_th(t, what.format(i)) for i, t in enumerate(tensors)]


def _contents_for(t, dt):
    """Tensor t's contents as NumPy, for a tensor of DType dt: its own elements when the
    dtypes match (a bfloat16 tensor's bits stay bits), else its values (bfloat16 widened to
    float32, exactly), never its bits read as numbers."""
    return t.numpy() if t.dtype == dt else t._values()


def _array_for(data, dt):
    """`data` as a C-contiguous NumPy array of DType dt's elements, refusing unsigned values
    that int64 cannot hold (NumPy would wrap them to negative numbers). For bfloat16: the
    bits (uint16 arrays are taken as bits, anything else as values and rounded)."""
    source = np.asarray(data)
    # None, strings, bytes: NumPy would cast them to numbers (ml_dtypes' bfloat16 is "V" too)
    if source.dtype.kind in "OUSV" and source.dtype != DType.bfloat16.numpy:
        raise TypeError(f"cannot make a {dt.name} tensor from {type(data).__name__} "
                        f"{data!r:.60} (a {source.dtype} array), only from numbers")
    if dt == bfloat16:
        return bfloat16_bits_of(source)
    if source.dtype.kind == "u" and dt == DType.int64 and source.size and \
            int(source.max()) > np.iinfo(np.int64).max:
        raise OverflowError(f"{source.dtype} value {source.max()} does not fit in int64")
    if source.dtype.kind == "f" and dt == DType.int64:
        return _floats_to_int64(source)
    return np.asarray(source, dtype=dt.numpy, order="C")  # (ascontiguousarray makes 0-d 1-d)


def _floats_to_int64(source):
    """Floats as int64 by the library's rule (dp_tensor_to_dtype; Java's Tensor.of alike):
    truncated toward zero, saturating at int64's limits, NaN as 0. NumPy's own cast leaves
    NaN and out-of-range values undefined (INT64_MIN on x86)."""
    f = np.trunc(np.nan_to_num(np.asarray(source, np.float64), nan=0.0))
    out = np.empty(f.shape, np.int64)
    high, low = f >= 2.0**63, f <= -(2.0**63)
    mid = ~(high | low)
    out[mid] = f[mid].astype(np.int64)
    out[high], out[low] = np.iinfo(np.int64).max, np.iinfo(np.int64).min
    return out


def from_numpy(ctx, array, copy=True, device=None, dtype=None):
    """See Tensor.from_numpy."""
    return Tensor.from_numpy(ctx, array, copy=copy, device=device, dtype=dtype)


def from_dlpack(ctx, obj):
    """See Tensor.from_dlpack."""
    return Tensor.from_dlpack(ctx, obj)


def _shape(shape):
    """A size or a sequence of sizes (any integers, NumPy's too) as a tuple of ints."""
    try:
        return (operator.index(shape),)
    except TypeError:
        return tuple(operator.index(s) for s in shape)


def zeros(ctx, shape, dtype=None, device=None):
    dt = float32 if dtype is None else dtype_of(dtype)
    return _wrap(capi.dp_tensor_zeros(ctx._h, dt, _shape(shape), as_device(device)), ctx)


def empty(ctx, shape, dtype=None, device=None):
    """Contents unspecified."""
    dt = float32 if dtype is None else dtype_of(dtype)
    return _wrap(capi.dp_tensor_empty(ctx._h, dt, _shape(shape), as_device(device)), ctx)


def full(ctx, shape, value, dtype=None, device=None):
    dt = float32 if dtype is None else dtype_of(dtype)
    return _wrap(capi.dp_tensor_full(ctx._h, dt, _shape(shape), float(value), as_device(device)),
                 ctx)


# ---- autograd --------------------------------------------------------------------------
def backward(t, grad=None, retain_graph=False):
    """t.backward(grad, retain_graph)."""
    t.backward(grad, retain_graph)


def is_grad_enabled():
    """Whether ops record the graph on this thread."""
    return bool(capi.dp_is_grad_enabled())


class set_grad_enabled:
    """Switches graph recording for this thread now; as a context manager, restores the
    previous setting at the end of the block. The setting follows the thread's calls onto
    the device workers."""

    def __init__(self, enabled):
        self._previous = capi.dp_set_grad_enabled(int(bool(enabled)))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        capi.dp_set_grad_enabled(self._previous)
        return False


class _GradMode:
    _enabled = 1

    def __init__(self):
        self._previous = []

    def __enter__(self):
        self._previous.append(capi.dp_set_grad_enabled(self._enabled))
        return self

    def __exit__(self, *exc):
        capi.dp_set_grad_enabled(self._previous.pop())
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):
    """Context manager (and decorator): ops record no graph inside."""

    _enabled = 0


class enable_grad(_GradMode):
    """Context manager (and decorator): ops record the graph inside."""

    _enabled = 1
