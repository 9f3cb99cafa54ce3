"""What the dp-train tests share: the Fashion-MNIST files, dp-train's checkpoints and
shared/bench/torch_reference.py's two models in PyTorch."""
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
