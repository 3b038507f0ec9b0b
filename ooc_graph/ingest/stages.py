"""Where a conversion's time goes: seconds per stage, recorded in the store's ``built_by``.

Main-thread stages add up to the wall time (``parse`` is the reader, ``add`` the checks and the
spill, ``ids`` settling the vertex ids, ``degrees`` and ``scatter`` the two passes over the spill,
``wait`` the writer waiting for the sorters, ``csr`` and ``cel`` the HDF5 appends, ``tables`` the
rest of the store). ``sort`` and ``layout`` are seconds on the sorting threads (summed over the
threads, so they overlap the others); ``buckets_cpu`` and ``buckets_gpu`` count the buckets
sorted on each.
"""

from __future__ import annotations

import threading
import time
from contextlib import contextmanager


class Stages:
    """Seconds per named stage, safe to add to from several threads."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self._lock = threading.Lock()

    def add(self, name: str, seconds: float) -> None:
        with self._lock:
            self.seconds[name] = self.seconds.get(name, 0.0) + seconds

    @contextmanager
    def __call__(self, name: str):
        t = time.perf_counter()
        try:
            yield
        finally:
            self.add(name, time.perf_counter() - t)

    def report(self) -> dict:
        """Seconds per stage, rounded to milliseconds, in the order first met."""
        return {k: round(v, 3) for k, v in self.seconds.items()}
