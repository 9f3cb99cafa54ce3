"""safetensors read and written with the standard library (Debian has no safetensors
package): an 8-byte little-endian header length, a JSON header {name: {dtype, shape,
data_offsets}} (plus optional "__metadata__"), then the raw little-endian data. BF16 is read
and written as np.uint16 arrays of the bits (NumPy has no bfloat16 of its own)."""
import json
import struct

import numpy as np

_DTYPES = {"F32": np.float32, "F64": np.float64, "I64": np.int64, "BF16": np.uint16}
_NAMES = {np.dtype(v): k for k, v in _DTYPES.items()}


def save_file(tensors, path, metadata=None):
    """tensors: {name: array-like} (float32, float64, int64, or uint16 bfloat16 bits)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        a = np.asarray(tensors[name], order="C")  # (ascontiguousarray makes 0-d 1-d)
        data = a.astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
        header[name] = {"dtype": _NAMES[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    if metadata:
        header["__metadata__"] = dict(metadata)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text)
        for b in blobs:
            f.write(b)


def load_file(path):
    """{name: NumPy array}, and the metadata dict under the key None."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {None: header.pop("__metadata__", {})}
    for name, entry in header.items():
        start, end = entry["data_offsets"]
        dtype = np.dtype(_DTYPES[entry["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(data[start:end], dtype=dtype).reshape(entry["shape"]).copy()
    return out
