"""Exceptions: one class per dp_result code, all subclasses of Error.

The low-level module raises them (through from_code) when a C call fails; the message is
the library's dp_last_error() text, which names the argument and its value.
"""

__all__ = [
    "Error", "InvalidArgumentError", "OutOfRangeError", "ShapeMismatchError",
    "DtypeMismatchError", "DeviceMismatchError", "OutOfMemoryError", "NotSupportedError",
    "IOError", "FormatError", "StateError", "BackendError", "CallbackError", "InternalError",
]


class Error(Exception):
    """A failed library call. `code` is the dp_result value, `message` the library's text."""

    code = 13

    def __init__(self, message="", code=None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code


class InvalidArgumentError(Error, ValueError):
    """NULL where a value is needed, a bad enum or option (DP_ERR_INVALID_ARGUMENT)."""
    code = 1


class OutOfRangeError(Error, IndexError):
    """An index or size outside what exists (DP_ERR_OUT_OF_RANGE)."""
    code = 2


class ShapeMismatchError(Error, ValueError):
    """Shapes do not fit the operation (DP_ERR_SHAPE_MISMATCH)."""
    code = 3


class DtypeMismatchError(Error, TypeError):
    """Element types do not fit the operation (DP_ERR_DTYPE_MISMATCH)."""
    code = 4


class DeviceMismatchError(Error, ValueError):
    """Tensors or modules on the wrong device (DP_ERR_DEVICE_MISMATCH)."""
    code = 5


class OutOfMemoryError(Error, MemoryError):
    """An allocation failed (DP_ERR_OUT_OF_MEMORY)."""
    code = 6


class NotSupportedError(Error, NotImplementedError):
    """A valid request the library cannot do (DP_ERR_NOT_SUPPORTED)."""
    code = 7


class IOError(Error, OSError):  # noqa: A001 - the library's name for DP_ERR_IO
    """A file could not be opened, read or written (DP_ERR_IO)."""
    code = 8


class FormatError(Error, ValueError):
    """A file or buffer is corrupt or of another model (DP_ERR_FORMAT)."""
    code = 9


class StateError(Error, RuntimeError):
    """An object is not in a state that allows the call, e.g. closed (DP_ERR_STATE)."""
    code = 10


class BackendError(Error, RuntimeError):
    """A device runtime failed (DP_ERR_BACKEND)."""
    code = 11


class CallbackError(Error, RuntimeError):
    """A callback (a Python module's forward) failed (DP_ERR_CALLBACK)."""
    code = 12


class InternalError(Error, RuntimeError):
    """A bug in the library (DP_ERR_INTERNAL)."""
    code = 13


_BY_CODE = {cls.code: cls for cls in (
    InvalidArgumentError, OutOfRangeError, ShapeMismatchError, DtypeMismatchError,
    DeviceMismatchError, OutOfMemoryError, NotSupportedError, IOError, FormatError,
    StateError, BackendError, CallbackError, InternalError)}


def from_code(code, message):
    """The exception for dp_result `code` carrying `message`."""
    cls = _BY_CODE.get(code)
    return cls(message) if cls else Error(message, code)
