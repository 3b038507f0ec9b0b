"""Device selection: which kernel module runs the batches."""

from __future__ import annotations

from dataclasses import dataclass
from types import ModuleType

import numpy as np

from ooc_graph.errors import DeviceError, choice
from ooc_graph.kernels import cpu

DEVICES = ("cpu", "gpu", "auto")


@dataclass(frozen=True)
class Backend:
    name: str
    kernels: ModuleType
    xp: ModuleType  # the array module state lives in (numpy, or cupy on a GPU)

    def to_host(self, array):
        return array if self.xp is np else self.xp.asnumpy(array)


def gpu_available() -> bool:
    try:
        import cupy
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no CuPy, no driver, or no device: all mean "no GPU here"
        return False


def get_backend(device: str, graph=None) -> Backend:
    """``cpu``, ``gpu`` (an error when no GPU can be used) or ``auto`` (GPU when CuPy sees one)."""
    if device not in DEVICES:
        raise choice("device", device, DEVICES)
    if device == "cpu" or (device == "auto" and not gpu_available()):
        return Backend("cpu", cpu, np)
    if not gpu_available():
        raise DeviceError("device='gpu' was requested but CuPy finds no CUDA device "
                          "(install cupy-cuda12x or cupy-cuda13x and check the driver), or use device='cpu'")
    raise DeviceError("device='gpu': the GPU streaming backend is not available in this version; "
                      "use device='cpu'")
