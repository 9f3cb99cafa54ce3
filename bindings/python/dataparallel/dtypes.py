"""Element types: float32 (the default), float64 and int64, and their NumPy equivalents."""
import enum

import numpy as np

__all__ = ["DType", "float32", "float64", "int64", "dtype_of"]


class DType(enum.IntEnum):
    """dp_dtype. Values are the C enum's."""

    float32 = 0
    float64 = 1
    int64 = 2

    @property
    def numpy(self):
        """The NumPy dtype with the same layout."""
        return _NUMPY[self]

    @property
    def itemsize(self):
        return _NUMPY[self].itemsize

    def __repr__(self):
        return f"dataparallel.{self.name}"

    __str__ = __repr__


float32 = DType.float32
float64 = DType.float64
int64 = DType.int64

_NUMPY = {DType.float32: np.dtype(np.float32), DType.float64: np.dtype(np.float64),
          DType.int64: np.dtype(np.int64)}
_FROM_NUMPY = {v: k for k, v in _NUMPY.items()}


def dtype_of(value):
    """A DType from a DType, a name ("float32"), a NumPy dtype or type, or a torch dtype."""
    if isinstance(value, DType):
        return value
    if isinstance(value, str) and value in DType.__members__:
        return DType[value]
    if type(value).__module__ == "torch":  # torch.float32 and friends, without importing torch
        value = str(value).replace("torch.", "")
    try:
        return _FROM_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        raise TypeError(f"dtype {value!r} is not float32, float64 or int64") from None


def storage_dtype(np_dtype):
    """The DType a NumPy array of np_dtype is stored as: itself when supported, else int64 for
    integers and booleans, float32 for other floating types. Byte order does not matter
    (a big-endian float64 array is float64; the copy converts it)."""
    np_dtype = np.dtype(np_dtype)
    if np_dtype.byteorder not in "=|":
        np_dtype = np_dtype.newbyteorder("=")
    if np_dtype in _FROM_NUMPY:
        return _FROM_NUMPY[np_dtype]
    if np_dtype.kind in "iub":
        return DType.int64
    if np_dtype.kind == "f":
        return DType.float32
    raise TypeError(f"NumPy dtype {np_dtype} has no library equivalent "
                    "(float32, float64 or int64)")
