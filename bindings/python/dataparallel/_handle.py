"""What every object that owns a library handle shares: the handle is released when the
object goes (CPython frees it at once when the last reference drops), or earlier by
close() or at the end of a with block. Using a closed object raises StateError."""
from .errors import StateError


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
