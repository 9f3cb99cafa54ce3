"""Modules: the library's layers, Sequential, and Module, the base of modules whose
forward is Python code composing library ops.

A Python module's forward runs inside the library (on the worker thread of the module's
device, holding the GIL), so DataParallel replicates and runs it like any layer. Under
DataParallel each replica has its own parameters: inside forward, `self.weight` (a
registered parameter or buffer) and `self.child(x)` (a registered child module) resolve
to the replica being run, which is why parameters are read through attributes rather than
kept in Python variables.
"""
import collections
import os
import re
import threading
import weakref

from . import capi, ops
from ._handle import Handle, handle_of
from .devices import device as as_device, from_c
from .errors import Error, ShapeMismatchError, StateError
from .tensor import Tensor, _pair, _th, _ths, _wrap

__all__ = ["Module", "Linear", "Conv2d", "ReLU", "GELU", "Tanh", "Sigmoid", "Dropout",
           "BatchNorm1d", "BatchNorm2d", "MaxPool2d", "AvgPool2d", "Flatten", "Embedding",
           "Sequential"]

# While a Python forward runs for a module (or a replica of it) on this thread: for each
# module object reached from it, the handle its parameters are read from (the module or
# replica the library passed in) and its dotted prefix there.
_local = threading.local()

# The exceptions Python forwards raised, each beside the message the library was given for
# it, oldest first. A forward runs on a worker thread and its failure reaches the caller
# as a library error whose message contains that text, so the caller finds its own
# exception by message: concurrent failures on other threads, and a second replica's
# failure that the library does not report (it names the lowest failing replica), cannot
# lend it theirs. Failures never reported age out; the bound keeps the few tracebacks they
# hold from accumulating.
_forward_failures = collections.deque(maxlen=16)
_forward_failures_lock = threading.Lock()


_REPLICA_PREFIX = re.compile(r"in replica \d+ on device (\S+): ")


def _record_forward_failure(message, exc, input_handles):
    """Keeps a forward's exception with its message and the device it ran on (its first
    input's), worked out here: only a failure pays for it."""
    device = str(from_c(capi.dp_tensor_device(input_handles[0]))) if input_handles else None
    with _forward_failures_lock:
        _forward_failures.append((message, exc, device))


def _raise_from_forward(error):
    """Re-raises a library error from a forward, chained to the Python exception behind it:
    the one whose message the error's message contains (the longest such message; of equal
    ones, first the one that ran on the device the error names, then the newest)."""
    text = str(error)
    named = _REPLICA_PREFIX.search(text)
    device = named.group(1) if named else None
    cause = None
    with _forward_failures_lock:
        best, best_key = -1, None
        for i, (message, _, where) in enumerate(_forward_failures):
            if message and message in text:
                key = (len(message), where == device)
                if best_key is None or key >= best_key:
                    best, best_key = i, key
        if best >= 0:
            cause = _forward_failures[best][1]
            del _forward_failures[best]
    if isinstance(cause, BaseException) and not isinstance(cause, Exception):
        raise cause  # KeyboardInterrupt, SystemExit: the caller's own, not a library error
    if cause is not None and cause is not error:
        raise error from cause
    raise error


def _utf8(text):
    """`text` with what UTF-8 cannot hold (lone surrogates) escaped: the library's messages
    are UTF-8, and one that does not convert would be lost."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


class _ForwardTrampoline:
    """What the library calls to run a Python module's forward: (module handle, input
    handles) -> output handles, or (code, message) on failure. Holds the module weakly so
    that the handle (which holds this) and the module do not keep each other alive."""

    __slots__ = ("_module",)

    def __init__(self, module):
        self._module = weakref.ref(module)

    def __call__(self, handle, input_handles):
        module = self._module()
        if module is None:
            return (12, "its Python object is gone: keep a reference to the Python module "
                        "while the library uses it")
        ctx = module._ctx
        previous = getattr(_local, "scope", None)
        _local.scope = {id(module): (handle, "")}
        try:
            out = module.forward(*[_wrap(h, ctx) for h in input_handles])
            if isinstance(out, Tensor):
                return [out._h]
            return [t._h for t in out]
        except Error as e:
            message = _utf8(str(e))
            _record_forward_failure(message, e, input_handles)
            return (e.code, message)
        except BaseException as e:  # noqa: B902 - every failure must go back as a code
            message = _utf8(f"{type(e).__name__}: {e}")
            _record_forward_failure(message, e, input_handles)
            return (12, message)
        finally:
            _local.scope = previous


class Module(Handle):
    """Base of the modules. Subclass it, call super().__init__(ctx) first, assign child
    modules as attributes, register tensors with register_parameter / register_buffer, and
    write forward(self, *inputs) with library ops; it returns a Tensor or a sequence of
    them (at most 16).

        class Block(dataparallel.Module):
            def __init__(self, ctx):
                super().__init__(ctx)
                self.fc = dataparallel.Linear(ctx, 8, 8)
                self.register_parameter("scale", ctx.full([8], 0.5))

            def forward(self, x):
                return self.fc(x).relu() * self.scale
    """

    def __init__(self, ctx, type_name=None):
        self._init(ctx, None)
        self.__dict__["_h"] = capi.dp_py_module_custom(ctx._h, type_name or type(self).__name__,
                                                       _ForwardTrampoline(self))

    def _init(self, ctx, handle):
        d = self.__dict__
        d["_ctx"] = ctx
        d["_modules"] = {}
        d["_tensor_names"] = set()
        if handle is not None:
            d["_h"] = handle

    def forward(self, *inputs):
        raise NotImplementedError(f"{type(self).__name__} must define forward(self, *inputs)")

    # ---- calling ----
    def __call__(self, *inputs):
        """Runs the module: through the library (on its device's worker, the GIL released),
        or, inside another Python module's forward, as part of the replica being run."""
        scope = getattr(_local, "scope", None)
        if scope is not None:
            entry = scope.get(id(self))
            if entry is not None:
                return self._forward_in(entry[0], entry[1], inputs)
        return self._run(inputs)

    def _run(self, inputs):
        """Forward through this module's handle."""
        try:
            outs = capi.dp_module_forward(self._h, _ths(inputs, "input {}"))
        except Error as e:
            _raise_from_forward(e)
        ctx = self._ctx
        return _wrap(outs[0], ctx) if len(outs) == 1 else [_wrap(h, ctx) for h in outs]

    def _forward_in(self, handle, prefix, inputs):
        """Forward as the module at `prefix` of the module `handle` (a replica)."""
        return self.forward(*inputs)

    # ---- children, parameters, buffers ----
    def __setattr__(self, name, value):
        d = self.__dict__
        if isinstance(value, Module) and not name.startswith("_"):
            if "_modules" not in d:
                raise StateError(f"{type(self).__name__}.__init__ must call "
                                 "super().__init__(ctx) before assigning modules")
            capi.dp_module_register_child(self._h, name, value._h)
            d["_modules"][name] = value
        elif name in d.get("_tensor_names", ()):
            raise AttributeError(f"{name} is a registered tensor of {type(self).__name__}: "
                                 f"change it in place with {name}.copy_(...)")
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        d = self.__dict__
        modules = d.get("_modules")
        if modules is not None:
            child = modules.get(name)
            if child is not None:
                scope = getattr(_local, "scope", None)
                entry = scope.get(id(self)) if scope is not None else None
                if entry is not None:
                    scope[id(child)] = (entry[0], f"{entry[1]}{name}.")
                return child
            if name in d["_tensor_names"]:
                return self._tensor(name)
        elif name == "_h" and "_ctx" not in d:
            raise StateError(f"{type(self).__name__}.__init__ must call super().__init__(ctx)")
        return Handle.__getattr__(self, name)

    def _tensor(self, name):
        """Parameter or buffer `name` of this module, of the replica being run if any."""
        scope = getattr(_local, "scope", None)
        entry = scope.get(id(self)) if scope is not None else None
        if entry is None:
            return _wrap(capi.dp_module_get(self._h, name), self._ctx)
        return _wrap(capi.dp_module_get(entry[0], entry[1] + name), self._ctx)

    def register_parameter(self, name, tensor):
        """Adds a trained tensor (float32/float64; it then requires grad) under `name`; read
        it in forward as self.<name>. Returns the tensor."""
        capi.dp_module_register_parameter(self._h, name, _th(tensor, "tensor"))
        self._tensor_names.add(name)
        return tensor

    def register_buffer(self, name, tensor):
        """Adds state that is saved and broadcast to replicas but not trained."""
        capi.dp_module_register_buffer(self._h, name, _th(tensor, "tensor"))
        self._tensor_names.add(name)
        return tensor

    def register_module(self, name, module):
        """Adds a child module (as assigning self.<name> = module does)."""
        setattr(self, name, module)
        return module

    add_module = register_module

    def named_children(self):
        return list(self._modules.items())

    def children(self):
        return list(self._modules.values())

    def _entries(self, count, entry):
        h = self._h
        return [(name, _wrap(t, self._ctx)) for name, t in (entry(h, i) for i in range(count(h)))]

    def named_parameters(self):
        """[(dotted name, Tensor)] of every distinct parameter, recursively."""
        return self._entries(capi.dp_module_parameter_count, capi.dp_module_parameter)

    def parameters(self):
        return [t for _, t in self.named_parameters()]

    def named_buffers(self):
        return self._entries(capi.dp_module_buffer_count, capi.dp_module_buffer)

    def buffers(self):
        return [t for _, t in self.named_buffers()]

    def get(self, name):
        """A parameter or buffer by dotted name ("0.weight")."""
        return _wrap(capi.dp_module_get(self._h, name), self._ctx)

    def state_dict(self):
        """{dotted name: NumPy copy} of every parameter and buffer."""
        return {name: t.numpy() for name, t in self.named_parameters() + self.named_buffers()}

    def load_state_dict(self, state, strict=True):
        """Copies values (arrays, Tensors, torch tensors) into the parameters and buffers of
        the same names. strict: the names must match exactly."""
        mine = dict(self.named_parameters() + self.named_buffers())
        if strict:
            missing = sorted(set(mine) - set(state))
            extra = sorted(set(state) - set(mine))
            if missing or extra:
                raise KeyError(f"state_dict names differ: missing {missing}, unexpected {extra}")
        for name, t in mine.items():
            if name in state:
                value = state[name]
                if type(value).__module__.startswith("torch"):  # a torch tensor
                    value = value.detach().cpu()
                    if str(value.dtype) == "torch.bfloat16":
                        value = value.float()  # NumPy has no bfloat16: widened, exactly
                    value = value.numpy()
                if tuple(getattr(value, "shape", t.shape)) != t.shape:
                    raise ValueError(f"state_dict[\"{name}\"] has shape {value.shape}, the "
                                     f"module's has {t.shape}")
                t.copy_(value)

    # ---- modes, devices, gradients, files ----
    @property
    def type_name(self):
        return capi.dp_module_type_name(self._h)

    @property
    def training(self):
        return capi.dp_module_is_training(self._h)

    def train(self, mode=True):
        """Train (or evaluation) mode for the module and its children. Returns self."""
        capi.dp_module_train(self._h, int(bool(mode)))
        return self

    def eval(self):
        return self.train(False)

    def to(self, device):
        """Moves every parameter and buffer to `device` (gradients are dropped). Returns
        self. Optimizers must be created after moving."""
        capi.dp_module_to(self._h, as_device(device))
        return self

    def zero_grad(self):
        capi.dp_module_zero_grad(self._h)

    def save(self, path):
        """Every parameter and buffer under its dotted name, as safetensors."""
        capi.dp_module_save(self._h, os.fspath(path))

    def load(self, path):
        """Loads a safetensors file; every name, dtype and shape must match."""
        capi.dp_module_load(self._h, os.fspath(path))

    def __repr__(self):
        try:
            self._h
        except StateError:
            return f"{type(self).__name__}(closed)"
        children = "".join(f"\n  ({name}): " + repr(m).replace("\n", "\n  ")
                           for name, m in self._modules.items())
        return f"{type(self).__name__}({self._extra_repr()}{children}{chr(10) if children else ''})"

    def _extra_repr(self):
        return ""


class _Layer(Module):
    """A module the library implements. Outside Python forwards it runs through its handle;
    inside one, _functional computes the same with ops on the replica's tensors."""

    _tensors = ()  # the library's names for its parameters and buffers (self.weight, ...)

    def __init__(self, ctx, handle):
        self._init(ctx, handle)
        self._tensor_names.update(name for name in self._tensors if self._has(name))

    def _has(self, name):
        try:
            capi.dp_module_get(self._h, name)
        except Error:
            return False
        return True

    def forward(self, *inputs):
        return self(*inputs)

    def _run(self, inputs):
        if len(inputs) != 1:
            return Module._run(self, inputs)
        try:
            return _wrap(capi.dp_module_forward1(self._h, _th(inputs[0], "input 0")), self._ctx)
        except Error as e:
            _raise_from_forward(e)

    def _forward_in(self, handle, prefix, inputs):
        if len(inputs) != 1:
            raise TypeError(f"{type(self).__name__} takes one input, got {len(inputs)}")

        def param(name):
            return _wrap(capi.dp_module_get(handle, prefix + name), self._ctx)
        return self._functional(param, inputs[0])

    def _functional(self, param, x):
        raise NotImplementedError


class _Replica(_Layer):
    """A module handle from the library (a replica from replicate()), run through it."""

    def _forward_in(self, handle, prefix, inputs):
        return self._run(inputs)

    def _extra_repr(self):
        return self.type_name


def _device(device):
    return as_device(device)


class Linear(_Layer):
    """y = x W^T + b; weight [out, in], bias [out], PyTorch's initialisation."""

    _tensors = ("weight", "bias")

    def __init__(self, ctx, in_features, out_features, bias=True, device=None):
        super().__init__(ctx, capi.dp_module_linear(ctx._h, in_features, out_features,
                                                    int(bool(bias)), _device(device)))
        self.in_features, self.out_features, self.bias_enabled = in_features, out_features, bias

    def _functional(self, param, x):
        return ops.linear(x, param("weight"), param("bias") if self.bias_enabled else None)

    def _extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, " \
               f"bias={bool(self.bias_enabled)}"


class Conv2d(_Layer):
    """2-D convolution, weight [out, in, kh, kw], bias [out]."""

    _tensors = ("weight", "bias")

    def __init__(self, ctx, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 bias=True, device=None):
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(stride, "stride")
        ph, pw = _pair(padding, "padding")
        super().__init__(ctx, capi.dp_module_conv2d(ctx._h, in_channels, out_channels, kh, kw, sh,
                                                    sw, ph, pw, int(bool(bias)), _device(device)))
        self.in_channels, self.out_channels = in_channels, out_channels
        self.kernel_size, self.stride, self.padding = (kh, kw), (sh, sw), (ph, pw)
        self.bias_enabled = bias

    def _functional(self, param, x):
        return ops.conv2d(x, param("weight"), param("bias") if self.bias_enabled else None,
                          self.stride, self.padding)

    def _extra_repr(self):
        return f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, " \
               f"stride={self.stride}, padding={self.padding}"


class _Activation(_Layer):
    _make = None
    _op = None

    def __init__(self, ctx):
        super().__init__(ctx, type(self)._make(ctx._h))

    def _functional(self, param, x):
        return type(self)._op(x)


class ReLU(_Activation):
    _make = capi.dp_module_relu
    _op = ops.relu


class GELU(_Activation):
    """The exact (erf) GELU."""
    _make = capi.dp_module_gelu
    _op = ops.gelu


class Tanh(_Activation):
    _make = capi.dp_module_tanh
    _op = ops.tanh


class Sigmoid(_Activation):
    _make = capi.dp_module_sigmoid
    _op = ops.sigmoid


class Dropout(_Layer):
    """Zeroes elements with probability p in train mode, drawing each mask from the
    context's seed (a sequence per device), also inside a Python module's forward: it has
    no tensors, so every replica runs this module itself."""

    def __init__(self, ctx, p=0.5):
        super().__init__(ctx, capi.dp_module_dropout(ctx._h, p))
        self.p = p

    def _forward_in(self, handle, prefix, inputs):
        return self._run(inputs)

    def _extra_repr(self):
        return f"p={self.p}"


class _BatchNorm(_Layer):
    _make = None
    _tensors = ("weight", "bias", "running_mean", "running_var", "num_batches_tracked")

    def __init__(self, ctx, num_features, eps=1e-5, momentum=0.1, device=None):
        super().__init__(ctx, type(self)._make(ctx._h, num_features, eps, momentum,
                                               _device(device)))
        self.num_features, self.eps, self.momentum = num_features, eps, momentum

    _ranks = ()  # the input ranks the layer takes, and their description
    _expects = ""

    def _functional(self, param, x):
        # The library's layer, with the replica's tensors: the same input checks, [N, C, L]
        # as [N, C, L, 1], and num_batches_tracked counted in training.
        if x.ndim not in self._ranks:
            raise ShapeMismatchError(f"{type(self).__name__} expects {self._expects} input, "
                                     f"got {list(x.shape)}")
        if self.training:
            count = param("num_batches_tracked")
            count.copy_(count.numpy() + 1)
        n, c = x.shape[0], x.shape[1]
        inp = x.reshape([n, c, x.shape[2], 1]) if x.ndim == 3 else x
        y = ops.batch_norm(inp, param("running_mean"), param("running_var"), param("weight"),
                           param("bias"), self.training, self.momentum, self.eps)
        return y.reshape(list(x.shape)) if x.ndim == 3 else y

    def _extra_repr(self):
        return f"{self.num_features}, eps={self.eps}, momentum={self.momentum}"


class BatchNorm1d(_BatchNorm):
    """Over [N, C] or [N, C, L]; buffers running_mean, running_var, num_batches_tracked."""
    _make = capi.dp_module_batchnorm1d
    _ranks = (2, 3)
    _expects = "[N, C] or [N, C, L]"


class BatchNorm2d(_BatchNorm):
    """Over [N, C, H, W]; buffers running_mean, running_var, num_batches_tracked."""
    _make = capi.dp_module_batchnorm2d
    _ranks = (4,)
    _expects = "[N, C, H, W]"


class _Pool2d(_Layer):
    _make = None
    _op = None

    def __init__(self, ctx, kernel_size, stride=None, padding=0):
        kh, kw = _pair(kernel_size, "kernel_size")
        sh, sw = _pair(kernel_size if stride is None else stride, "stride")
        ph, pw = _pair(padding, "padding")
        super().__init__(ctx, type(self)._make(ctx._h, kh, kw, sh, sw, ph, pw))
        self.kernel_size, self.stride, self.padding = (kh, kw), (sh, sw), (ph, pw)

    def _functional(self, param, x):
        return type(self)._op(x, self.kernel_size, self.stride, self.padding)

    def _extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxPool2d(_Pool2d):
    """Floor mode; stride defaults to the kernel size."""
    _make = capi.dp_module_maxpool2d
    _op = ops.max_pool2d


class AvgPool2d(_Pool2d):
    """Floor mode; padding counts in the divisor (PyTorch's default)."""
    _make = capi.dp_module_avgpool2d
    _op = ops.avg_pool2d


class Flatten(_Layer):
    """Flattens dims start_dim..end_dim (PyTorch's defaults: 1, -1)."""

    def __init__(self, ctx, start_dim=1, end_dim=-1):
        super().__init__(ctx, capi.dp_module_flatten(ctx._h, start_dim, end_dim))
        self.start_dim, self.end_dim = start_dim, end_dim

    def _functional(self, param, x):
        return ops.flatten(x, self.start_dim, self.end_dim)

    def _extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Embedding(_Layer):
    """Rows of weight [num_embeddings, embedding_dim] selected by int64 indices."""

    _tensors = ("weight",)

    def __init__(self, ctx, num_embeddings, embedding_dim, device=None):
        super().__init__(ctx, capi.dp_module_embedding(ctx._h, num_embeddings, embedding_dim,
                                                       _device(device)))
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim

    def _functional(self, param, x):
        return ops.embedding(x, param("weight"))

    def _extra_repr(self):
        return f"{self.num_embeddings}, {self.embedding_dim}"


class Sequential(_Layer):
    """Runs its children in order; they are named "0", "1", ... (as in PyTorch)."""

    def __init__(self, ctx, *modules):
        super().__init__(ctx, capi.dp_module_sequential(ctx._h))
        for m in modules:
            self.append(m)

    _run = Module._run  # its last child may return several outputs

    def append(self, module):
        """Adds a child at the end. Returns self."""
        capi.dp_module_append(self._h, handle_of(module, Module, "module"))
        self._modules[str(len(self._modules))] = module
        return self

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(list(self._modules.values()))

    def __getitem__(self, index):
        return list(self._modules.values())[index]

    def _forward_in(self, handle, prefix, inputs):
        scope = _local.scope
        out = inputs[0] if len(inputs) == 1 else inputs
        for name, child in self._modules.items():
            scope[id(child)] = (handle, f"{prefix}{name}.")
            out = child(*out) if isinstance(out, (list, tuple)) else child(out)
        return out
