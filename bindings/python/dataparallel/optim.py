"""Optimizers over a module's parameters, with PyTorch's update rules (torch.optim.SGD,
Adam, AdamW). Create them after moving the module; they keep the parameters alive."""
from . import capi
from ._handle import Handle, handle_of
from .nn import Module
from .parallel import _unwrapped

__all__ = ["Optimizer", "SGD", "Adam", "AdamW"]


def _module_handle(module):
    return handle_of(_unwrapped(module), Module, "module")


class Optimizer(Handle):
    """Base of the optimizers: step(), zero_grad(), lr."""

    __slots__ = ("_h", "__weakref__")

    def step(self):
        """One update of every parameter that has a gradient (the GIL is released)."""
        capi.dp_optimizer_step(self._h)

    def zero_grad(self):
        """Sets every parameter's gradient to none."""
        capi.dp_optimizer_zero_grad(self._h)

    @property
    def lr(self):
        return capi.dp_optimizer_lr(self._h)

    @lr.setter
    def lr(self, value):
        capi.dp_optimizer_set_lr(self._h, value)


class SGD(Optimizer):
    """torch.optim.SGD."""

    def __init__(self, module, lr=0.01, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False):
        o = capi.dp_sgd_options()
        o.lr, o.momentum, o.dampening, o.weight_decay = lr, momentum, dampening, weight_decay
        o.nesterov = int(bool(nesterov))
        self._h = capi.dp_optimizer_sgd(_module_handle(module), o)


class Adam(Optimizer):
    """torch.optim.Adam."""

    _defaults = staticmethod(capi.dp_adam_options)
    _make = staticmethod(capi.dp_optimizer_adam)

    def __init__(self, module, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=None):
        o = type(self)._defaults()
        o.lr, o.beta1, o.beta2, o.eps = lr, betas[0], betas[1], eps
        if weight_decay is not None:
            o.weight_decay = weight_decay
        self._h = type(self)._make(_module_handle(module), o)


class AdamW(Adam):
    """torch.optim.AdamW (default weight_decay 0.01)."""

    _defaults = staticmethod(capi.dp_adamw_default_options)
    _make = staticmethod(capi.dp_optimizer_adamw)
