"""The scheduler: chunk streaming, caches and the operators algorithms are written on."""

from .backend import DEVICES, get_backend, gpu_available
from .core import Engine
from .exchange import Comm, LocalComm, Placement, current_placement, placed
from .stream import ChunkStream

__all__ = ["Engine", "ChunkStream", "DEVICES", "get_backend", "gpu_available", "Comm", "LocalComm",
           "Placement", "placed", "current_placement"]
