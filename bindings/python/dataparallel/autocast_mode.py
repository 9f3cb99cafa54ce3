"""Autocast: mixed precision for the calling thread, as torch.autocast("cpu",
dtype=torch.bfloat16). The library applies the policy inside each op (dp_set_autocast);
this module switches it for a block or a function."""
import functools
import threading

from . import capi
from .dtypes import DType, bfloat16, dtype_of, float32
from .errors import InvalidArgumentError

__all__ = ["autocast", "autocast_dtype", "is_autocast_enabled"]


class autocast:
    """Context manager (and decorator): inside, this thread's ops follow PyTorch's autocast
    policy in `dtype` (bfloat16, the one lower-precision dtype):

    - linear, matmul, conv2d and the Conv2d-ReLU-pool block of a Sequential cast float32
      inputs to bfloat16 and return bfloat16 (they accumulate in float32);
    - softmax, log_softmax, cross_entropy, nll_loss, mse_loss, sum, mean and batch_norm
      cast bfloat16 inputs to float32 and return float32;
    - add, sub, mul and div of a bfloat16 and a float32 tensor return float32;
    - every other op runs in its input's dtype; float64 is never cast.

    docs/autocast.md has the list beside PyTorch's. The casts are differentiable:
    parameters stay float32 and their gradients arrive in float32. enabled=False turns
    autocast off inside (a float32 region within an autocast one). At the end of the
    block the previous setting returns, also when the block raises. The setting belongs to
    the thread and follows its calls onto the device workers (DataParallel's replicas run
    under it); another Python thread starts with it off. Backward runs with it off, as
    PyTorch's does.

        with dp.autocast():
            loss = dp.cross_entropy(model(x), y)   # linear in bfloat16, the loss in float32
        loss.backward()                            # parameters' grads are float32
    """

    def __init__(self, dtype=bfloat16, enabled=True):
        dt = dtype_of(dtype)
        if dt != bfloat16:
            raise InvalidArgumentError(f"autocast: dtype {dt.name} is not a lower-precision "
                                       "dtype (bfloat16 is the one autocast runs in)")
        self.dtype = dt
        self.enabled = bool(enabled)
        self._local = threading.local()  # one instance may be entered on several threads

    def __enter__(self):
        stack = self._local.__dict__.setdefault("previous", [])
        stack.append(capi.dp_set_autocast(self.dtype if self.enabled else float32))
        return self

    def __exit__(self, *exc):
        capi.dp_set_autocast(self._local.previous.pop())
        return False

    def __call__(self, fn):
        """fn run under this setting at every call."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return wrapper

    def __repr__(self):
        return f"autocast(dtype={self.dtype!r}, enabled={self.enabled})"


def autocast_dtype():
    """This thread's autocast dtype: bfloat16 inside autocast(), float32 outside."""
    return DType(capi.dp_autocast_dtype())


def is_autocast_enabled():
    """Whether this thread's ops follow the autocast policy now."""
    return capi.dp_autocast_dtype() != float32
