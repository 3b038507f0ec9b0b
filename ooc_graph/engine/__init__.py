"""The scheduler: chunk streaming, caches and the operators algorithms are written on."""

from .backend import DEVICES, get_backend, gpu_available
from .core import Engine

__all__ = ["Engine", "DEVICES", "get_backend", "gpu_available"]
