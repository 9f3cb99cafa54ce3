"""What every object that owns a library handle shares: the handle is released when the
object goes (CPython frees it at once when the last reference drops), or earlier by
close() or at the end of a with block. Using a closed object raises StateError."""
from .errors import StateError


def handle_of(obj, cls, what):
    """obj's handle; a TypeError naming `what` when obj is not a `cls` (a NumPy array passed
    for a tensor would otherwise fail as an AttributeError about '_h')."""
    if not isinstance(obj, cls):
        raise TypeError(f"{what} must be a dataparallel {cls.__name__}, "
                        f"not {type(obj).__name__}")
    return obj._h


class Handle:
    """Base of the classes that own one handle in `_h` (a low-level proxy)."""

    __slots__ = ()

    def __getattr__(self, name):
        # Only reached when normal lookup fails, i.e. `_h` after close(): no cost otherwise.
        if name == "_h":
            raise StateError(f"the {type(self).__name__} is closed")
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def close(self):
        """Releases the handle now (the library keeps what other handles still use). Safe to
        call twice."""
        try:
            del self._h
        except (AttributeError, StateError):
            pass

    @property
    def closed(self):
        try:
            self._h
        except StateError:
            return True
        return False

    def __enter__(self):
        self._h  # raises if closed
        return self

    def __exit__(self, *exc):
        self.close()
        return False
