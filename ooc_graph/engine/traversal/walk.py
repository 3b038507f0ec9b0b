"""The state of one ``propagate_min`` walk between its iterations (:class:`Walk`) and what an
iteration chose to run (:class:`Step`)."""

from __future__ import annotations

from typing import Any, Optional

from ooc_graph._records import record

from ..nearfar import NearFar


@record
class Walk:
    """A traversal under way: its arrays on the device and the counters its strategy choices
    read. ``level``: the frontier's common value while the traversal is level-synchronous with a
    constant increment (bottom-up levels possible), else None; ``near``: the near-far buckets of a
    weighted traversal, else None; ``complete``: whether every level so far recorded its parents
    in ``parent``."""

    state: Any
    plus: Optional[float]
    execution: str
    parent: Any
    frontier: Any
    changed: Any  # uint8 flags of the vertices this iteration changed
    degree: Any  # out-degrees on the device
    level: Optional[float]
    near: Optional[NearFar]
    complete: bool
    unvisited: int  # arcs of vertices not yet reached (Beamer's m_u)
    iterations: int = 0
    cel_passes: int = 0
    backward: bool = False  # the direction of asynchronous sweeps
    idle: int = 0  # asynchronous passes in a row that no chunk joined
    queued: int = 4  # levels the next run of queued advances may take (doubling while it lasts)
    bottom: bool = False  # whether the last level ran bottom-up
    replicated_run: int = 0  # levels in a row that every rank ran whole (nothing merged)


@record(frozen=True)
class Step:
    """One iteration's choice: ``kind`` ("bottom-up", "advance" or "pass"), the frontier's
    ``arcs``, whether every rank runs it whole (``replicated``), and the parent array it records
    the tree into (``track``, or None)."""

    kind: str
    arcs: int
    replicated: bool
    track: Any


def after_levels(level, plus, levels: int):
    """The frontier's value ``levels`` levels on, added as the kernels add it (one level at a
    time, in float64); None stays None."""
    if level is None:
        return None
    for _ in range(levels):
        level = level + plus
    return level
