"""Memory budgets: parsing human sizes and choosing safe defaults."""

from __future__ import annotations

import functools
import os
import re

from .errors import ParameterError

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "kib": 2**10,
    "m": 10**6, "mb": 10**6, "mib": 2**20,
    "g": 10**9, "gb": 10**9, "gib": 2**30,
    "t": 10**12, "tb": 10**12, "tib": 2**40,
}
_SIZE = re.compile(r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$")


def parse_size(value) -> int:
    """Bytes from an int or a string such as ``"2GB"``, ``"512MiB"``, ``"64k"``."""
    if isinstance(value, (int,)) and not isinstance(value, bool):
        if value <= 0:
            raise ParameterError(f"memory size must be positive (got {value!r})")
        return int(value)
    if isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ParameterError(f"memory size must be a finite number of bytes (got {value!r})")
        return parse_size(int(value))
    m = _SIZE.match(str(value))
    if not m or m.group(2).lower() not in _UNITS:
        raise ParameterError(
            f"cannot read memory size {value!r} (examples: 2GB, 512MiB, 64k; units: "
            f"{', '.join(u for u in _UNITS if u)})"
        )
    size = int(float(m.group(1)) * _UNITS[m.group(2).lower()])
    if size <= 0:
        raise ParameterError(f"memory size must be positive (got {value!r})")
    return size


def physical_memory() -> int:
    """Bytes of RAM on this machine (a fallback of 8 GB where the OS does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        return 8 * 10**9


def default_budget() -> int:
    """A safe default host budget: a quarter of physical RAM."""
    return physical_memory() // 4


def budget(value) -> int:
    """``None`` → the default budget, anything else through :func:`parse_size`."""
    return default_budget() if value is None else parse_size(value)


def human(nbytes: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(nbytes) < 1024 or unit == "TiB":
            return f"{nbytes:.1f} {unit}" if unit != "B" else f"{int(nbytes)} B"
        nbytes /= 1024
    return f"{nbytes:.1f} TiB"  # pragma: no cover


def release_free_memory() -> None:
    """Hand freed heap pages back to the system (glibc's ``malloc_trim``; nothing elsewhere).

    Arrays freed by worker threads leave holes in per-thread malloc arenas that still count as
    resident; a build calls this between passes and buckets so that its peak stays within budget.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


@functools.lru_cache(maxsize=1)
def _malloc_trim():
    try:
        import ctypes
        return ctypes.CDLL("libc.so.6").malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
