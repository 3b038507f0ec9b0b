"""Memory budgets: parsing human sizes and choosing safe defaults."""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from .errors import ParameterError

_UNITS = {
    "": 1, "b": 1,
    "k": 10**3, "kb": 10**3, "kib": 2**10,
    "m": 10**6, "mb": 10**6, "mib": 2**20,
    "g": 10**9, "gb": 10**9, "gib": 2**30,
    "t": 10**12, "tb": 10**12, "tib": 2**40,
}
# compiled where first matched (re keeps it), not at import: most calls give no size to read
_SIZE = r"^\s*([0-9]*\.?[0-9]+)\s*([a-zA-Z]*)\s*$"


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
    m = re.match(_SIZE, str(value))
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


def usable_memory() -> int:
    """Bytes of memory this process may use: the machine's RAM, or its control group's limit
    where lower (a container's ``--memory``, a batch job's allocation), which the kernel enforces
    by killing the process."""
    limit = cgroup_limit()
    ram = physical_memory()
    return ram if limit is None else min(ram, limit)


def cgroup_limit(proc: str = "/proc/self/cgroup", root: str = "/sys/fs/cgroup") -> int | None:
    """The lowest memory limit of this process's control group and those above it, in bytes
    (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``); None where none is set or readable.
    ``proc`` and ``root`` are where the kernel shows them."""
    try:
        lines = Path(proc).read_text().splitlines()
    except OSError:
        return None
    found = []
    for line in lines:  # "0::/path" (v2), "4:memory:/path" (v1)
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if parts[0] == "0" and controllers == "":
            base, name = Path(root), "memory.max"
        elif "memory" in controllers.split(","):
            base, name = Path(root) / "memory", "memory.limit_in_bytes"
        else:
            continue
        # From the process's group up to the root of the mount (inside a container the path may
        # name a group of the host, not mounted here: the mount's root is then the container's).
        rel = Path(path.strip().lstrip("/"))
        for folder in [rel, *rel.parents]:
            value = _read_limit(base / folder / name)
            if value is not None:
                found.append(value)
    return min(found) if found else None


def _read_limit(path: Path) -> int | None:
    """A cgroup memory limit file's bytes; None for "max", v1's "unlimited" (2**63 rounded down to
    a page), an absent or unreadable file."""
    try:
        text = path.read_text().strip()
    except OSError:
        return None
    if not text.isdigit():
        return None  # "max"
    value = int(text)
    return value if value < 1 << 62 else None


def default_budget() -> int:
    """A safe default host budget: a quarter of the memory this process may use (RAM, or its
    container's limit where lower)."""
    return usable_memory() // 4


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
