"""What a run did: counters, one record per pass, convergence, and (profiling) timelines."""

from __future__ import annotations

from dataclasses import dataclass, field

from .trace import PassTrace, summarize


@dataclass
class Stats:
    passes: int = 0
    advances: int = 0
    bottom_up: int = 0  # bottom-up levels over the in-CSR (direction-optimised traversals)
    tree_levels: int = 0  # levels that built the shortest-path tree on the way (BFS, SSSP, constant increments)
    traversals: int = 0  # whole traversals over a CSR in memory, in one compiled call (CPU)
    near_far_bounds: int = 0  # near-far traversals (arc weights): times the near pile's bound was raised
    local_iterations: int = 0  # relaxations of a loaded chunk beyond the first (async mode)
    back_arcs: int = 0  # arcs of the CEL augmentation relaxed (async mode, augmented stores)
    chunks_processed: int = 0
    chunks_skipped: int = 0
    arcs_processed: int = 0
    bytes_read: int = 0
    bytes_to_device: int = 0
    bytes_exchanged: int = 0  # state sent to other workers (distributed runs)
    seconds_reading: float = 0.0
    seconds_computing: float = 0.0
    seconds_exchanging: float = 0.0
    per_pass: list = field(default_factory=list)     # one record per pass, advance or traversal
    convergence: list = field(default_factory=list)  # (iteration, measure) the algorithm reports
    # Profiling only: {"pass": index into per_pass, "spans": [[lane, chunk, start, stop], ...]}.
    timeline: list = field(default_factory=list)

    def as_dict(self):
        return {k: v for k, v in self.__dict__.items() if k not in ("per_pass", "convergence", "timeline")}

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
