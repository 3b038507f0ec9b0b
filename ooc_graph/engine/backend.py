"""Device selection: which kernel module runs the batches and where the state lives."""

from __future__ import annotations

import logging
from types import ModuleType

import numpy as np

from ooc_graph._cuda_start import start_cuda
from ooc_graph._records import record
from ooc_graph.errors import DeviceError, choice
from ooc_graph.kernels import cpu
from ooc_graph.registry import DEVICES

log = logging.getLogger("ooc_graph.engine")
INT32_MAX = np.iinfo(np.int32).max


@record(frozen=True)
class Backend:
    name: str
    kernels: ModuleType
    xp: ModuleType  # the array module state lives in (numpy, or cupy on a GPU)

    def to_host(self, array, out=None):
        """``array`` in host memory (into ``out`` if given); a GPU copies at bus speed."""
        if self.xp is not np:
            return self.kernels.to_host(array, out)
        if out is None:
            return array
        out[...] = array
        return out

    def to_device(self, array):
        """A host array where the state lives (as is on the CPU; at bus speed to a GPU)."""
        if self.xp is np:
            return np.asarray(array)
        return self.kernels.to_device(array)

    def full(self, n: int, value, dtype=np.float64):
        """``xp.full(n, value, dtype)``: on the CPU filled on numba's threads where a whole kernel
        would run there (``kernels.cpu.full``: each thread first-touches its own pages)."""
        full = getattr(self.kernels, "full", None)
        return full(n, value, dtype) if full is not None else self.xp.full(n, value, dtype=dtype)

    def free_memory(self) -> int | None:
        """Free device memory in bytes (``None`` on the CPU)."""
        if self.xp is np:
            return None
        free, _total = self.xp.cuda.runtime.memGetInfo()
        return int(free)


_cupy_missing = False  # CuPy failed to import: Python does not remember that, and importing again
#                       searches every path entry (a tenth of a millisecond, each call on a small graph)


def gpu_available() -> bool:
    global _cupy_missing
    if _cupy_missing:
        return False
    start_cuda()  # the driver starts on a thread while CuPy imports
    try:
        import cupy
    except ImportError:
        _cupy_missing = True
        return False
    except Exception:  # CuPy there but broken (its CUDA libraries): asked again next time
        return False
    try:
        return cupy.cuda.runtime.getDeviceCount() > 0
    except Exception:  # no driver, or no device: both mean "no GPU here"
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
    if graph is not None and graph.num_vertices > INT32_MAX:
        if device == "auto":
            log.warning("%s: %d vertices exceed the GPU backend's 32-bit ids; running on the CPU",
                        graph.path, graph.num_vertices)
            return Backend("cpu", cpu, np)
        raise DeviceError(f"the GPU backend addresses vertices with 32-bit ids; {graph.path} has "
                          f"{graph.num_vertices:,} vertices (use device='cpu')")
    import cupy

    from ooc_graph.kernels import gpu
    return Backend("gpu", gpu, cupy)
