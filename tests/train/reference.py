"""What the dp-train tests (and bench/torch_divergence.py) share: the Fashion-MNIST files,
dp-train's checkpoints, and bench/torch_reference.py's two models and training loop
in PyTorch."""
import functools
import gzip
import json
import os
import struct

import numpy as np

DATA = "/usr/share/datasets/fashion-mnist"


def read_idx(name, limit=None):
    """IDX file `name` of DATA (or a path) as a uint8 array; its first `limit` entries if given."""
    with gzip.open(os.path.join(DATA, name)) as f:
        raw = f.read()
    ndim = raw[3]
    dims = struct.unpack(">" + "I" * ndim, raw[4:4 + 4 * ndim])
    a = np.frombuffer(raw, np.uint8, offset=4 + 4 * ndim).reshape(dims)
    return a if limit is None else a[:limit]


def torch_model(model):
    """torch_reference.make_model: "mlp" or "cnn", and the shape its input is viewed as."""
    import torch  # only the tests that compare with PyTorch need it
    nn = torch.nn
    if model == "mlp":
        return (nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                              nn.Linear(256, 10)), (-1, 784))
    return (nn.Sequential(nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Flatten(), nn.Linear(3136, 128), nn.ReLU(), nn.Linear(128, 10)),
            (-1, 1, 28, 28))


def bf16_rounded_forward(m, x, float32_linear_grads=True):
    """The forward of Sequential `m` with torch.autocast's bfloat16 rounding points made
    explicit: each Linear and Conv2d rounds its input, weight and bias to bfloat16, computes
    in float32 and rounds its output to bfloat16; ReLU, MaxPool2d and Flatten run on the
    bfloat16 values. Autograd then rounds each product's gradient to bfloat16 where the
    forward rounded, and widens it again for the float32 parameters, as autocast's casts
    do; with float32_linear_grads, except a Linear's weight and bias, whose gradients stay
    the float32 sums, as libdataparallel's linear gives them on CPU devices
    (docs/autocast.md). Unlike PyTorch 1.13's own bfloat16 products on a CPU without
    AVX-512 (its generic BLAS, which sums in bfloat16), every product sums in float32, as
    oneDNN's and libdataparallel's do."""
    import torch
    f = torch.nn.functional

    def r(t):  # to bfloat16 and back: rounds forward, and rounds the gradient backward
        return t.bfloat16().float()

    def rounded_forward_only(t):  # rounds forward; the gradient passes unrounded
        return t + (r(t) - t).detach()

    param = rounded_forward_only if float32_linear_grads else r
    for layer in m:
        if isinstance(layer, torch.nn.Linear):
            x = f.linear(r(x), param(layer.weight), param(layer.bias)).bfloat16()
        elif isinstance(layer, torch.nn.Conv2d):
            x = f.conv2d(r(x), r(layer.weight), r(layer.bias), layer.stride,
                         layer.padding).bfloat16()
        else:
            x = layer(x)
    return x.float()


@functools.lru_cache(maxsize=None)
def _float32_grad_linear():
    """A torch.autograd.Function (made once, on first use): PyTorch's bfloat16 linear (the
    oneDNN products autocast runs: the output and the input's gradient in bfloat16) whose
    weight and bias gradients are the float32 sums of the bfloat16 products, not rounded to
    bfloat16, as libdataparallel's linear gives a float32 parameter its gradient on CPU
    devices."""
    import torch

    class Float32GradLinear(torch.autograd.Function):
        @staticmethod
        def forward(ctx, x, weight, bias):
            with torch.autocast("cpu", enabled=False):
                xb, wb = x.bfloat16(), weight.bfloat16()
                ctx.save_for_backward(xb, wb)
                return torch.nn.functional.linear(xb, wb, bias.bfloat16())

        @staticmethod
        def backward(ctx, g):
            xb, wb = ctx.saved_tensors
            with torch.autocast("cpu", enabled=False):
                g = g.bfloat16()
                return g @ wb, g.float().t() @ xb.float(), g.float().sum(0)

    return Float32GradLinear


def torch_autocast_forward(m, x, float32_linear_grads=True):
    """The forward of Sequential `m` under PyTorch's own torch.autocast("cpu",
    torch.bfloat16), as float32; with float32_linear_grads each Linear goes through
    _float32_grad_linear (its weight's and bias's gradients unrounded), else it is
    PyTorch's autocast unchanged. One autocast region per call: leaving it drops autocast's
    cache of bfloat16 weight copies, so each piece of a batch casts the weights itself and
    its weight gradients are computed on their own and summed in float32, as DataParallel's
    replicas do (a shared cast would sum the pieces' gradients in bfloat16)."""
    import torch
    linear = _float32_grad_linear()
    with torch.autocast("cpu", dtype=torch.bfloat16):
        for layer in m:
            if float32_linear_grads and isinstance(layer, torch.nn.Linear):
                x = linear.apply(x, layer.weight, layer.bias)
            else:
                x = layer(x)
        return x.float()


def torch_train(model, limit, epochs, batch, lr, seed, dtype=None, autocast=None, chunks=1,
                float32_linear_grads=True):
    """torch_reference.py's training loop (SGD, momentum 0.9) over the first `limit` training
    samples, in `dtype` (default float32) from its float32 initial weights and inputs.
    autocast: None (float32), "torch" (the forward under torch.autocast("cpu",
    torch.bfloat16): torch_autocast_forward) or "rounded" (bf16_rounded_forward), either on
    each of `chunks` equal pieces of the batch as DataParallel's replicas run them: each
    replica rounds its own gradients; float32_linear_grads as theirs. The loss is float32
    in every mode, as autocast's policy computes it. Returns the trained module
    and the shape of its input."""
    import torch
    torch.manual_seed(seed)
    x = torch.from_numpy(read_idx("train-images-idx3-ubyte.gz", limit).astype(np.float32) / 255)
    y = torch.from_numpy(read_idx("train-labels-idx1-ubyte.gz", limit).astype(np.int64))
    m, shape = torch_model(model)
    if dtype is not None:
        m, x = m.to(dtype), x.to(dtype)
    opt = torch.optim.SGD(m.parameters(), lr=lr, momentum=0.9)
    for epoch in range(epochs):
        g = torch.Generator()
        g.manual_seed(seed + epoch)
        perm = torch.randperm(len(x), generator=g)
        for start in range(0, len(x) - batch + 1, batch):
            idx = perm[start:start + batch]
            opt.zero_grad()
            xb = x[idx].view(shape)
            if autocast == "rounded":
                out = torch.cat([bf16_rounded_forward(m, c, float32_linear_grads)
                                 for c in xb.chunk(chunks)])
            elif autocast == "torch":
                out = torch.cat([torch_autocast_forward(m, c, float32_linear_grads)
                                 for c in xb.chunk(chunks)])
            else:
                out = m(xb)
            loss = torch.nn.functional.cross_entropy(out, y[idx])
            loss.backward()
            opt.step()
    return m, shape


def read_safetensors(path):
    """The float32 tensors of safetensors file `path` (a pathlib.Path), by name, as arrays."""
    raw = path.read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    out = {}
    for name, info in header.items():
        if name == "__metadata__" or info["dtype"] != "F32":
            continue
        begin, end = info["data_offsets"]
        out[name] = np.frombuffer(raw[8 + n + begin:8 + n + end],
                                  dtype="<f4").reshape(info["shape"])
    return out
