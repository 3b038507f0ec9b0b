"""Per-pass timelines (profiling): when each chunk was read, copied to the device and computed on,
and how much of that overlapped.

Three lanes: ``read`` (the store into host memory, host clock, on the reader thread or inline),
``copy`` (host→device on the GPU copy stream, CUDA events) and ``compute`` (decoding and the
algorithm's kernels for the chunk, on the compute stream; on the CPU, preparing and computing).
GPU markers are CUDA events, resolved once the pass has synchronised, so the trace itself adds no
wait; both clocks start at the pass's first marker, recorded while the device is idle.
"""

from __future__ import annotations

import time

LANES = ("read", "copy", "compute")


class PassTrace:
    """Spans of one pass. ``kernels`` is the backend module (``marker``/``seconds_between``)."""

    def __init__(self, kernels):
        self.kernels = kernels
        self.host0 = time.perf_counter()
        self.device0 = kernels.marker()
        self._host = []    # (lane, chunk, start, stop) in perf_counter seconds
        self._device = []  # (lane, chunk, start marker, stop marker)

    def host(self, lane: str, chunk: int, start: float, stop: float) -> None:
        self._host.append((lane, chunk, start, stop))  # list.append is atomic: reader threads call this

    def device(self, lane: str, chunk: int, start, stop) -> None:
        self._device.append((lane, chunk, start, stop))

    def resolve(self) -> list:
        """``[lane, chunk, start, stop]`` in seconds from the pass start, sorted by start; call
        after the device has finished the pass."""
        k = self.kernels
        spans = [[lane, chunk, a - self.host0, b - self.host0] for lane, chunk, a, b in self._host]
        spans += [[lane, chunk, k.seconds_between(self.device0, a), k.seconds_between(self.device0, b)]
                  for lane, chunk, a, b in self._device]
        return sorted(spans, key=lambda s: (s[2], s[0]))


def _union(intervals):
    """Disjoint sorted intervals covering the same time as ``intervals``."""
    out = []
    for a, b in sorted(intervals):
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def _length(intervals) -> float:
    return float(sum(b - a for a, b in intervals))


def _intersection(x, y) -> float:
    """Time covered by both of two disjoint sorted interval lists."""
    i = j = 0
    total = 0.0
    while i < len(x) and j < len(y):
        lo, hi = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        total += max(0.0, hi - lo)
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return total


def summarize(spans, seconds: float) -> dict:
    """Busy seconds per lane, compute idle time, and overlap ratios of a pass's spans.

    ``busy_<lane>`` is the time a lane had work. ``overlap_copy_compute`` is the time copies and
    kernels ran at once over the shorter of the two (1.0: the shorter one was hidden entirely;
    ``None`` when either lane is empty), and the same for reading. ``seconds_idle`` is the pass
    time during which the compute lane had nothing.

    >>> s = summarize([["copy", 0, 0.0, 2.0], ["compute", 0, 1.0, 3.0], ["compute", 1, 3.0, 4.0]], 4.0)
    >>> s["busy_copy"], s["busy_compute"], s["seconds_idle"], s["overlap_copy_compute"]
    (2.0, 3.0, 1.0, 0.5)
    """
    lanes = {lane: _union([(a, b) for name, _, a, b in spans if name == lane]) for lane in LANES}
    busy = {lane: _length(iv) for lane, iv in lanes.items()}

    def overlap(lane):
        shorter = min(busy[lane], busy["compute"])
        return _intersection(lanes[lane], lanes["compute"]) / shorter if shorter > 0 else None

    return {"busy_read": busy["read"], "busy_copy": busy["copy"], "busy_compute": busy["compute"],
            "seconds_idle": max(0.0, seconds - busy["compute"]),
            "overlap_copy_compute": overlap("copy"), "overlap_read_compute": overlap("read")}
