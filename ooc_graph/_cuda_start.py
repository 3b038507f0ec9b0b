"""CUDA's start on a thread, beside the imports and the store's opening that come before a GPU call.

A process's first CUDA call initialises the driver (``cuInit``: ~0.43 s on an H200 host) and its
first allocation makes the device's primary context (~0.13 s). CuPy makes both calls holding the
GIL, after its own import (~0.5 s) and ours. Called through ctypes, which lets the GIL go, they run
on a thread while this process imports and opens the store; the runtime then finds the driver
started and the primary context made (the runtime's context *is* the device's primary context),
and a call that comes sooner waits for the driver's own lock, as it would have waited anyway.

Started only where a GPU call will follow (``device='gpu'``/``'auto'``) and before CuPy is imported:
once CuPy is there, its user may have chosen a device, and the process is past its start. The
context is made on the process's device 0 (``CUDA_VISIBLE_DEVICES`` applies), the one CuPy uses
unless told otherwise. No driver, no device or any failure: the thread ends and CuPy reports the
same failure itself, as it did before.
"""

from __future__ import annotations

import sys
import threading

_started: list = []  # the thread, once started


def start_cuda() -> None:
    """Start CUDA's driver and device 0's primary context on a daemon thread, once per process, if
    CuPy is installed and not yet imported; otherwise do nothing."""
    if _started or "cupy" in sys.modules or not sys.platform.startswith("linux"):
        return
    import importlib.util
    if importlib.util.find_spec("cupy") is None:  # no CuPy: no GPU call will follow
        return
    _started.append(threading.Thread(target=_start, name="ooc-graph-cuda-start", daemon=True))
    _started[0].start()


def _start() -> None:
    import ctypes
    try:
        driver = ctypes.CDLL("libcuda.so.1")
        if driver.cuInit(0) != 0:
            return
        device, context = ctypes.c_int(), ctypes.c_void_p()
        if driver.cuDeviceGet(ctypes.byref(device), 0) == 0:
            driver.cuDevicePrimaryCtxRetain(ctypes.byref(context), device)
    except (OSError, AttributeError):  # no driver library, or one without these entry points
        pass


def wait(timeout: float | None = None) -> None:
    """Wait for the start to end (tests; a caller that must not race it)."""
    if _started:
        _started[0].join(timeout)
