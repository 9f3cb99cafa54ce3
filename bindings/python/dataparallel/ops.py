"""The library's ops as functions (most are also Tensor methods). Each returns a new
tensor; inputs must share a device and dtype; with grad mode on, the result records how
to backpropagate. Errors name the op, the argument and its value."""
from . import capi
from .tensor import _pair, _th, _th_or_none, _ths, _wrap

__all__ = ["add", "sub", "mul", "div", "neg", "scale", "add_scalar", "relu", "gelu", "tanh",
           "sigmoid", "exp", "log", "sum", "mean", "argmax", "matmul", "linear", "softmax",
           "log_softmax", "conv2d", "max_pool2d", "avg_pool2d", "batch_norm", "dropout",
           "embedding", "cross_entropy", "nll_loss", "mse_loss", "reshape", "flatten", "cat",
           "split"]


def add(a, b):
    """a + b with NumPy broadcasting."""
    return _wrap(capi.dp_op_add(_th(a, "a"), _th(b, "b")), a._ctx)


def sub(a, b):
    return _wrap(capi.dp_op_sub(_th(a, "a"), _th(b, "b")), a._ctx)


def mul(a, b):
    return _wrap(capi.dp_op_mul(_th(a, "a"), _th(b, "b")), a._ctx)


def div(a, b):
    return _wrap(capi.dp_op_div(_th(a, "a"), _th(b, "b")), a._ctx)


def neg(x):
    return _wrap(capi.dp_op_neg(_th(x, "x")), x._ctx)


def scale(x, factor):
    """x * factor."""
    return _wrap(capi.dp_op_scale(_th(x, "x"), factor), x._ctx)


def add_scalar(x, value):
    """x + value."""
    return _wrap(capi.dp_op_add_scalar(_th(x, "x"), value), x._ctx)


def relu(x):
    return x.relu()


def gelu(x):
    """The exact (erf) GELU, as torch.nn.GELU()."""
    return x.gelu()


def tanh(x):
    return x.tanh()


def sigmoid(x):
    return x.sigmoid()


def exp(x):
    return x.exp()


def log(x):
    return x.log()


def sum(x, dim=None, keepdim=False):  # noqa: A001 - torch's name
    return x.sum(dim, keepdim)


def mean(x, dim=None, keepdim=False):
    return x.mean(dim, keepdim)


def argmax(x, dim):
    return x.argmax(dim)


def matmul(a, b):
    """[M, K] @ [K, N], or batched [B, M, K] @ [B, K, N]."""
    return _wrap(capi.dp_op_matmul(_th(a, "a"), _th(b, "b")), a._ctx)


def linear(x, weight, bias=None):
    """x [..., in] @ weight[out, in]^T + bias[out]."""
    return _wrap(capi.dp_op_linear(_th(x, "x"), _th(weight, "weight"), _th_or_none(bias, "bias")),
                 x._ctx)


def softmax(x, dim):
    return x.softmax(dim)


def log_softmax(x, dim):
    return x.log_softmax(dim)


def conv2d(x, weight, bias=None, stride=1, padding=0):
    """x [N, C, H, W], weight [O, C, KH, KW], bias [O] or None -> [N, O, OH, OW]."""
    sh, sw = _pair(stride, "stride")
    ph, pw = _pair(padding, "padding")
    return _wrap(capi.dp_op_conv2d(_th(x, "x"), _th(weight, "weight"), _th_or_none(bias, "bias"),
                                   sh, sw, ph, pw), x._ctx)


def max_pool2d(x, kernel_size, stride=None, padding=0):
    """Floor mode; stride defaults to the kernel size, as in PyTorch."""
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(kernel_size if stride is None else stride, "stride")
    ph, pw = _pair(padding, "padding")
    return _wrap(capi.dp_op_max_pool2d(_th(x, "x"), kh, kw, sh, sw, ph, pw), x._ctx)


def avg_pool2d(x, kernel_size, stride=None, padding=0):
    """Floor mode; divides by the full window, padding included."""
    kh, kw = _pair(kernel_size, "kernel_size")
    sh, sw = _pair(kernel_size if stride is None else stride, "stride")
    ph, pw = _pair(padding, "padding")
    return _wrap(capi.dp_op_avg_pool2d(_th(x, "x"), kh, kw, sh, sw, ph, pw), x._ctx)


def batch_norm(x, running_mean=None, running_var=None, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """As torch.nn.functional.batch_norm: training normalises with the batch statistics and
    updates the running ones in place."""
    return _wrap(capi.dp_op_batch_norm(_th(x, "x"), _th_or_none(weight, "weight"),
                                       _th_or_none(bias, "bias"),
                                       _th_or_none(running_mean, "running_mean"),
                                       _th_or_none(running_var, "running_var"),
                                       int(bool(training)), momentum, eps),
                 x._ctx)


def dropout(x, p=0.5, training=True, seed=0):
    """Zeroes elements with probability p and scales the rest by 1/(1-p) when training; the
    same seed gives the same mask."""
    return _wrap(capi.dp_op_dropout(_th(x, "x"), p, int(bool(training)), seed), x._ctx)


def embedding(indices, weight):
    """Rows of weight [num, dim] selected by int64 indices -> [..., dim]."""
    return _wrap(capi.dp_op_embedding(_th(indices, "indices"), _th(weight, "weight")), weight._ctx)


def cross_entropy(logits, target):
    """Mean over N of -log_softmax(logits)[target]; logits [N, C], target [N] int64."""
    return _wrap(capi.dp_op_cross_entropy(_th(logits, "logits"), _th(target, "target")),
                 logits._ctx)


def nll_loss(log_probs, target):
    return _wrap(capi.dp_op_nll_loss(_th(log_probs, "log_probs"), _th(target, "target")),
                 log_probs._ctx)


def mse_loss(input, target):  # noqa: A002 - torch's name
    """Mean of (input - target)^2."""
    return _wrap(capi.dp_op_mse_loss(_th(input, "input"), _th(target, "target")), input._ctx)


def reshape(x, shape):
    return x.reshape(shape)


def flatten(x, start_dim=0, end_dim=-1):
    return x.flatten(start_dim, end_dim)


def cat(tensors, dim=0):
    """Concatenates along dim onto the device of tensors[0]."""
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat needs at least one tensor")
    return _wrap(capi.dp_op_cat(_ths(tensors, "tensors[{}]"), dim), tensors[0]._ctx)


def split(x, sizes, dim=0):
    return x.split(sizes, dim)

