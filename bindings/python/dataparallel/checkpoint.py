"""Files: a module's state (save, load) and training checkpoints with optimizer state and
string metadata (save_checkpoint, load_checkpoint, checkpoint_metadata). Both are
safetensors files that PyTorch's safetensors reader takes."""
import os

from . import capi
from ._handle import handle_of
from .nn import Module
from .optim import Optimizer
from .parallel import _unwrapped

__all__ = ["save", "load", "save_checkpoint", "load_checkpoint", "checkpoint_metadata"]


def _module(m):
    """m's module handle (a DataParallel's state is its module's); a TypeError naming the
    argument for anything else."""
    return handle_of(_unwrapped(m), Module, "module")


def _optimizer(o):
    return None if o is None else handle_of(o, Optimizer, "optimizer")


def save(module, path):
    """Every parameter and buffer under its dotted name (written to a temporary file beside
    path, then renamed over it)."""
    capi.dp_module_save(_module(module), os.fspath(path))


def load(module, path):
    """Loads a file saved by save (or PyTorch); names, dtypes and shapes must match, and
    nothing changes when they do not (FormatError names the entry)."""
    capi.dp_module_load(_module(module), os.fspath(path))


def save_checkpoint(path, module, optimizer=None, metadata=None):
    """The module's state, the optimizer's (if given) and metadata ({str: str})."""
    capi.dp_checkpoint_save(_module(module), _optimizer(optimizer),
                            os.fspath(path), metadata)


def load_checkpoint(path, module, optimizer=None):
    """Restores a checkpoint into the module and the optimizer (of the kind that saved it)."""
    capi.dp_checkpoint_load(_module(module), _optimizer(optimizer),
                            os.fspath(path))


def checkpoint_metadata(path, key):
    """Metadata `key` of a checkpoint (OutOfRangeError when absent)."""
    return capi.dp_checkpoint_metadata_string(os.fspath(path), key)
