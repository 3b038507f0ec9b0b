"""What a run did: counters, one record per pass, convergence, and (profiling) timelines."""

# No ``from __future__ import annotations``: dataclasses reads string annotations slowly (three
# regular-expression look-ups a field), which Stats's 21 counters would pay at import (see config.py).
from dataclasses import field, fields

from ooc_graph._records import record

from .trace import PassTrace, summarize


# How :meth:`Stats.combine` merges a counter over the ranks of a job: work each rank does on its own
# share is added up ("sum"), time is the slowest rank's ("max"), and decisions the ranks take
# together (every rank runs the same levels) are any rank's ("same": the largest, should they differ).
_SUM, _MAX, _SAME = {"combine": "sum"}, {"combine": "max"}, {"combine": "same"}


@record
class Stats:
    passes: int = field(default=0, metadata=_SUM)
    advances: int = field(default=0, metadata=_SUM)
    bottom_up: int = field(default=0, metadata=_SAME)  # bottom-up levels over the in-CSR (direction-optimised)
    tree_levels: int = field(default=0, metadata=_SAME)  # levels that built the shortest-path tree on the way
    traversals: int = field(default=0, metadata=_SAME)  # whole traversals over a CSR in memory, one compiled call
    near_far_bounds: int = field(default=0, metadata=_SAME)  # near-far (arc weights): raises of the near bound
    local_iterations: int = field(default=0, metadata=_SUM)  # relaxations of a loaded chunk past the first (async)
    back_arcs: int = field(default=0, metadata=_SUM)  # arcs of the CEL augmentation relaxed (async, augmented)
    chunks_processed: int = field(default=0, metadata=_SUM)
    chunks_skipped: int = field(default=0, metadata=_SUM)
    arcs_processed: int = field(default=0, metadata=_SUM)
    bytes_read: int = field(default=0, metadata=_SUM)
    bytes_to_device: int = field(default=0, metadata=_SUM)
    bytes_exchanged: int = field(default=0, metadata=_SUM)  # state sent to other workers (distributed runs)
    seconds_reading: float = field(default=0.0, metadata=_MAX)
    seconds_computing: float = field(default=0.0, metadata=_MAX)
    seconds_exchanging: float = field(default=0.0, metadata=_MAX)
    per_pass: list = field(default_factory=list)     # one record per pass, advance or traversal
    strategies: list = field(default_factory=list)   # what each iteration did, where it was recorded
    convergence: list = field(default_factory=list)  # (iteration, measure) the algorithm reports
    # Profiling only: {"pass": index into per_pass, "spans": [[lane, chunk, start, stop], ...]}.
    timeline: list = field(default_factory=list)

    @staticmethod
    def combine(ranks: list[dict]) -> dict:
        """The counters of a job from each rank's (:meth:`as_dict`, plus the result's own keys such
        as ``chunks``): added up, the slowest, or the common value, as each counter says; keys the
        ranks report that are no counter here are the first rank's."""
        out = dict(ranks[0]) if ranks else {}
        for f in fields(Stats):
            how = f.metadata.get("combine")
            values = [r.get(f.name, f.default) for r in ranks]
            if how == "sum":
                out[f.name] = sum(values)
            elif how in ("max", "same"):
                out[f.name] = max(values)
        if ranks and "chunks" in ranks[0]:
            out["chunks"] = sum(r.get("chunks", 0) for r in ranks)
        return out

    def as_dict(self):
        return {k: v for k, v in self.__dict__.items()
                if k not in ("per_pass", "strategies", "convergence", "timeline")}

    def record(self, kind, seconds, before: dict, arcs=None, trace: PassTrace | None = None,
               clock: str = "host"):
        """Append a pass record: what moved since ``before`` (a snapshot of the counters); with a
        ``trace`` (profiling) also the busy time of each lane and the overlap ratios. ``clock``
        says what the seconds measure: ``device`` (the pass waited for the device to finish: on
        the CPU, or profiling on a GPU) or ``host`` (the time to issue the pass; the device may
        still be working: only whole calls are device-complete then)."""
        moved = self.bytes_to_device - before["bytes_to_device"]
        self.per_pass.append({
            "kind": kind, "seconds": seconds,
            "chunks": self.chunks_processed - before["chunks_processed"],
            "skipped": self.chunks_skipped - before["chunks_skipped"],
            "arcs": self.arcs_processed - before["arcs_processed"] if arcs is None else arcs,
            "bytes_read": self.bytes_read - before["bytes_read"], "bytes_to_device": moved,
            "GBps_to_device": moved / seconds / 1e9 if seconds > 0 else 0.0,
            "seconds_reading": self.seconds_reading - before["seconds_reading"], "clock": clock,
        })
        if trace is not None:
            spans = trace.resolve()
            self.per_pass[-1].update(summarize(spans, seconds))
            self.timeline.append({"pass": len(self.per_pass) - 1, "spans": spans})

    def exchanged(self, seconds: float, nbytes: int) -> None:
        """Count a state exchange with other workers, onto the last pass record too."""
        self.seconds_exchanging += seconds
        self.bytes_exchanged += nbytes
        if self.per_pass:
            last = self.per_pass[-1]
            last["seconds_exchanging"] = last.get("seconds_exchanging", 0.0) + seconds
            last["bytes_exchanged"] = last.get("bytes_exchanged", 0) + nbytes
