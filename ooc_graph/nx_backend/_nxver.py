"""The installed networkx's version, and whether this backend supports it.

networkx 3.3 is the oldest served: before it there is no ``nx.config`` (where this backend's
settings live and networkx's caching and fallback are set) and backends had no ``can_run`` with
reasons (a reason string counted as "can run"); there can_run answers False and every explicit call
is refused with the reason. Behaviour that changed between the supported versions is
chosen with ``_nxver`` where it is used (as nx-cugraph does)."""

from __future__ import annotations

import re

import networkx as nx

_nxver: tuple = tuple(int(x) for x in re.findall(r"\d+", nx.__version__)[:2])
OLDEST = (3, 3)
NEWEST = (3, 6)  # the newest tested (pyproject.toml's range ends below the next minor)

unsupported = (None if _nxver >= OLDEST else
               f"networkx {nx.__version__} is not supported by ooc_graph (networkx {OLDEST[0]}.{OLDEST[1]} or later)")
