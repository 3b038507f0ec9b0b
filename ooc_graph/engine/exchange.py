"""State exchange between the workers of a distributed run, as the operators see it.

Every worker holds the whole vertex state (DESIGN decision 1) and processes the sub-graphs it owns,
so after a pass only the state of its own destinations is new. The operators call the collectives
below at the end of each pass; in one process they do nothing (:class:`LocalComm`). The runtime
(``ooc_graph.runtime``) implements them over NCCL among GPU workers and over TCP among CPU workers.

Each method works in place on the backend's arrays and returns the bytes this worker sent.
"""

from __future__ import annotations

import contextlib
import contextvars

from ooc_graph._records import record


class Comm:
    """The collectives an operator needs. ``ranges[r]`` is the vertex range rank ``r`` owns; the
    ranges are contiguous and cover every vertex."""

    rank = 0
    size = 1
    ranges: list = [(0, 0)]
    # Whether allreduce_array(wait=False) queues the collective on the device's stream behind
    # the work queued so far (NCCL), so that the host may look at its result later.
    queues_on_device = False

    @property
    def owned(self) -> tuple:
        return self.ranges[self.rank]

    def gather_owned(self, x, wait: bool = True) -> int:
        """Fill every rank's range of ``x`` from the rank that owns it. ``wait=False`` may only
        queue the transfers (on a GPU): a later :meth:`allreduce_array` waits for them."""
        return 0

    def merge_min(self, state, changed) -> int:
        """``state = min over ranks``, ``changed = or over ranks`` (elementwise, sparse when few
        vertices changed)."""
        return 0

    # Whether any rank asked to stop, as the last merge_level agreed (see there).
    agreed_stop = False

    def merge_level(self, state, changed, value: float, stop: bool = False) -> int:
        """:meth:`merge_min` for a level-synchronous traversal, in which every vertex changed on
        any rank took the same ``value``: ``changed = or over ranks``, then ``state = min(state,
        value)`` where changed. Only the flags travel, one bit per vertex (a dense merge sends
        the state too: nine bytes per vertex), and no count has to be agreed on first. ``stop``
        (this rank's stop request) travels with them, or-ed over ranks into :attr:`agreed_stop`:
        the level's report then needs no collective of its own."""
        self.agreed_stop = stop
        return 0

    def reduce_min(self, x) -> int:
        """``x = min over ranks``, elementwise."""
        return 0

    def allreduce(self, value, op: str = "sum"):
        """A scalar, or a small 1-D NumPy array elementwise, combined over ranks with ``op``
        (``sum``, ``max``, ``min``)."""
        return value

    def allreduce_array(self, x, op: str = "sum", wait: bool = True) -> None:
        """``x`` (a small float64 array of the backend) combined over ranks with ``op``, in
        place; returns once it, and every transfer queued before it, is done. ``wait=False``,
        where :attr:`queues_on_device`: only queued; :meth:`wait_for` an event recorded after it."""

    def join(self) -> None:
        """Make the device's current stream wait for the collectives queued without waiting
        (those on a side stream: NCCL); nothing elsewhere."""

    def join_gathered(self) -> None:
        """:meth:`join`, but only as far as the last :meth:`gather_owned` queued without waiting:
        what was queued after it (an all-reduce of sums) may still run while the kernels queued
        next read the gathered values."""
        self.join()

    def queue_stream(self):
        """A context in which to queue what must follow the collectives queued without waiting
        (a copy of their result to the host): their side stream, or nothing."""
        return contextlib.nullcontext()

    def wait_for(self, event) -> None:
        """Wait for a device event recorded behind queued collectives (watching the peers, so
        that a lost one fails the job instead of hanging it)."""
        event.synchronize()

    def barrier(self) -> None:
        """Return once every rank has called it."""

    def split(self, items):
        """This rank's share of ``items`` (an array every rank holds alike), contiguous: GPU
        kernels take it by pointer."""
        return items[self.rank::self.size].copy() if self.size > 1 else items


class LocalComm(Comm):
    """One process: nothing to exchange."""

    queues_on_device = True  # nothing to queue

    def __init__(self, num_vertices: int = 0):
        self.ranges = [(0, num_vertices)]


@record(frozen=True)
class Placement:
    """Where an engine runs inside a distributed job: the CEL arcs it streams and its comm."""

    arc_range: tuple
    comm: Comm
    key: tuple  # identifies the placement for engine reuse between jobs
    on_report: object = None  # called with (iteration, measure) at every convergence report
    should_stop: object = None  # polled at every report: True cancels the job on every worker
    host_empty: object = None  # (shape, dtype) -> host array for results (rank 0: shared memory)


_PLACEMENT: contextvars.ContextVar = contextvars.ContextVar("ooc_graph_placement", default=None)


@contextlib.contextmanager
def placed(placement: Placement):
    """Engines made inside this block stream ``placement.arc_range`` and exchange through
    ``placement.comm`` (the runtime runs an algorithm's unchanged code in it on every worker)."""
    token = _PLACEMENT.set(placement)
    try:
        yield placement
    finally:
        _PLACEMENT.reset(token)


def current_placement() -> Placement | None:
    return _PLACEMENT.get()
