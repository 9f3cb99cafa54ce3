"""Element types: float32 (the default), float64, int64 and bfloat16, their NumPy
equivalents, and bfloat16's bits for NumPy users without ml_dtypes.

NumPy has no bfloat16 of its own. When the package ml_dtypes is importable, a bfloat16
tensor's NumPy array has dtype ml_dtypes.bfloat16 (values, 2 bytes each); otherwise it is
an np.uint16 array of the raw bits (float32's upper half), which bfloat16_to_float32()
reads and float32_to_bfloat16() makes. Which one this process uses: DType.bfloat16.numpy.
"""
import enum

import numpy as np

try:  # optional: a real NumPy bfloat16 when it is installed
    import ml_dtypes as _ml_dtypes
except ImportError:
    _ml_dtypes = None

__all__ = ["DType", "float32", "float64", "int64", "bfloat16", "dtype_of",
           "float32_to_bfloat16", "bfloat16_to_float32"]


class DType(enum.IntEnum):
    """dp_dtype. Values are the C enum's."""

    float32 = 0
    float64 = 1
    int64 = 2
    bfloat16 = 3

    @property
    def numpy(self):
        """The NumPy dtype with the same layout (bfloat16: ml_dtypes.bfloat16 when that
        package is installed, else np.uint16 holding the bits)."""
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
bfloat16 = DType.bfloat16

# The NumPy dtype holding bfloat16 elements, and whether its elements are values (ml_dtypes)
# or raw bits (uint16).
_BF16_NUMPY = np.dtype(_ml_dtypes.bfloat16) if _ml_dtypes is not None else np.dtype(np.uint16)
_NUMPY = {DType.float32: np.dtype(np.float32), DType.float64: np.dtype(np.float64),
          DType.int64: np.dtype(np.int64), DType.bfloat16: _BF16_NUMPY}
# uint16 never means bfloat16 by itself: only ml_dtypes' type does (an explicit
# dtype=bfloat16 with a uint16 array reads it as bits, see bfloat16_bits_of).
_FROM_NUMPY = {v: k for k, v in _NUMPY.items() if v != np.dtype(np.uint16)}


def bfloat16_numpy_is_bits():
    """Whether bfloat16 tensors come to NumPy as np.uint16 bits (ml_dtypes not installed)."""
    return _NUMPY[DType.bfloat16] == np.dtype(np.uint16)


def dtype_of(value):
    """A DType from a DType, a name ("bfloat16"), a NumPy dtype or type (ml_dtypes.bfloat16
    included), or a torch dtype (torch.bfloat16 included)."""
    if isinstance(value, DType):
        return value
    if type(value).__module__ == "torch":  # torch.float32 and friends, without importing torch
        value = str(value).replace("torch.", "")
    if isinstance(value, str) and value in DType.__members__:
        return DType[value]
    try:
        return _FROM_NUMPY[np.dtype(value)]
    except (TypeError, KeyError):
        raise TypeError(f"dtype {value!r} is not float32, float64, int64 or bfloat16") from None


def storage_dtype(np_dtype):
    """The DType a NumPy array of np_dtype is stored as: itself when supported (bfloat16 for
    ml_dtypes.bfloat16), else int64 for integers and booleans (np.uint16 too: it becomes
    bfloat16 only when asked for by dtype=bfloat16), float32 for other floating types.
    Byte order does not matter (a big-endian float64 array is float64; the copy converts
    it)."""
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
                    "(float32, float64, int64 or bfloat16)")


# ---- bfloat16 bits -----------------------------------------------------------------------
def float32_to_bfloat16(values):
    """The bfloat16 bits (np.uint16 array) of `values` (array-like, converted to float32
    first), rounded to nearest with ties to even, as the library, PyTorch and ml_dtypes
    round: NaN stays a quiet NaN with its sign, values past the largest finite bfloat16
    (3.3895e38) become infinities."""
    bits = np.asarray(values, dtype=np.float32, order="C").view(np.uint32)
    u32 = np.uint32  # constants of the array's type: a 0-d array would otherwise widen
    nan = (bits & u32(0x7FFFFFFF)) > u32(0x7F800000)
    # Below 2**32 for every non-NaN (-inf is 0xFF800000); NaNs take the other branch.
    rounded = (bits + (u32(0x7FFF) + ((bits >> u32(16)) & u32(1)))) >> u32(16)
    return np.asarray(np.where(nan, (bits >> u32(16)) | u32(0x0040), rounded), np.uint16)


def bfloat16_to_float32(bits):
    """The float32 values of bfloat16 bits (an array-like of np.uint16, or of
    ml_dtypes.bfloat16 values): exact, every bfloat16 is a float32."""
    bits = np.asarray(bits)
    if bits.dtype == _BF16_NUMPY:
        bits = bits.view(np.uint16)
    elif bits.dtype != np.dtype(np.uint16):
        raise TypeError(f"bfloat16_to_float32 takes uint16 bits or bfloat16 values, "
                        f"not a {bits.dtype} array")
    return np.asarray(bits.astype(np.uint32) << np.uint32(16)).view(np.float32)


def bfloat16_bits_of(source):
    """A NumPy array (any dtype) as bfloat16 bits for the library: np.uint16 and
    ml_dtypes.bfloat16 arrays are bits already; anything else holds values, converted to
    float32 and rounded (as the library converts: through float32)."""
    if source.dtype == np.dtype(np.uint16) or source.dtype == _BF16_NUMPY:
        return np.asarray(source, order="C").view(np.uint16)  # (ascontiguousarray: 0-d to 1-d)
    if source.dtype.kind not in "fiub":
        raise TypeError(f"cannot make bfloat16 elements from a {source.dtype} array")
    return float32_to_bfloat16(source)
