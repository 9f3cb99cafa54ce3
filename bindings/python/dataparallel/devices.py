"""Devices: (type, index) pairs, as the C API's dp_device. Anywhere a device is taken, a
Device, a (type, index) tuple, or a string "cpu", "cpu:1", "cuda:0" works."""
import enum
from typing import NamedTuple

__all__ = ["DeviceType", "Device", "cpu", "cuda", "device"]


class DeviceType(enum.IntEnum):
    """dp_device_type."""

    cpu = 0
    cuda = 1


class Device(NamedTuple):
    """A device: its type and its index among the context's devices of that type."""

    type: DeviceType
    index: int = 0

    def __str__(self):
        return f"{DeviceType(self.type).name}:{self.index}"

    def __repr__(self):
        return f"Device('{self}')"

    @property
    def is_cpu(self):
        return self.type == DeviceType.cpu


def cpu(index=0):
    """CPU device `index` (the context's virtual CPU devices)."""
    return Device(DeviceType.cpu, index)


def cuda(index=0):
    """CUDA device `index`."""
    return Device(DeviceType.cuda, index)


def device(value):
    """A Device from a Device, a (type, index) tuple (the type a DeviceType, its value or
    "cpu"/"cuda"), "cpu[:i]" or "cuda[:i]"; None is cpu:0."""
    if value is None:
        return Device(DeviceType.cpu, 0)
    if isinstance(value, Device):
        return value
    if isinstance(value, str):
        kind, _, index = value.partition(":")
        if kind not in DeviceType.__members__ or (index and not index.isdigit()):
            raise ValueError(f"device \"{value}\" is not cpu[:index] or cuda[:index]")
        return Device(DeviceType[kind], int(index or 0))
    if isinstance(value, tuple) and len(value) == 2:
        kind = value[0]
        if isinstance(kind, str):  # ("cpu", 0), as "cpu:0" is spelled
            if kind not in DeviceType.__members__:
                raise ValueError(f"device {value!r}: the type is neither \"cpu\" nor \"cuda\"")
            kind = DeviceType[kind]
        return Device(DeviceType(kind), int(value[1]))
    raise TypeError(f"{value!r} is not a device (Device, (type, index) or \"cpu:0\")")


def from_c(pair):
    """A Device from the low-level module's (type, index) tuple."""
    return Device(DeviceType(pair[0]), pair[1])
