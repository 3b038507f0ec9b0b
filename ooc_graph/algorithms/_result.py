"""Result objects: values indexed by vertex id, plus how the run went."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class Result:
    """Common run statistics. Subclasses add the per-vertex arrays."""

    algorithm: str
    parameters: dict
    iterations: int
    converged: bool
    seconds: float
    device: str
    stats: dict = field(default_factory=dict)
    graph: object = field(default=None, repr=False)
    saved: object = field(default=None, repr=False)  # where save() put it (a SavedResult)

    _arrays: tuple = ()

    @property
    def bytes_read(self) -> int:
        return int(self.stats.get("bytes_read", 0))

    @property
    def vertices(self) -> np.ndarray:
        """Original vertex ids, position i for internal id i."""
        if self.graph is None:
            return np.arange(len(getattr(self, self._arrays[0])), dtype=np.int64)
        return self.graph.vertices

    def arrays(self) -> dict:
        return {name: getattr(self, name) for name in self._arrays}

    def to_dict(self, name: str | None = None) -> dict:
        """``{original vertex id: value}`` of one array (the first by default)."""
        values = getattr(self, name or self._arrays[0])
        return dict(zip(self.vertices.tolist(), values.tolist()))

    def summary(self) -> str:
        arcs = self.stats.get("arcs_processed", 0)
        rate = arcs / self.seconds if self.seconds > 0 else float("nan")
        state = "converged" if self.converged else "not converged"
        return (f"{self.algorithm}: {self.iterations} iterations ({state}), {self.seconds:.3f} s, "
                f"{rate:,.0f} arcs/s, {self.bytes_read:,} bytes read, device {self.device}")

    @property
    def passes(self) -> list:
        """One record per pass over the chunks or frontier advance: seconds, chunks, skipped,
        arcs, bytes read, bytes sent to the device, GB/s."""
        return self.stats.get("per_pass", [])

    @property
    def timeline(self) -> list:
        """Profiling runs only: for some passes, ``{"pass": index into passes, "spans": [[lane,
        chunk, start, stop], ...]}`` with lanes read / copy / compute (:mod:`ooc_graph.engine.trace`)."""
        return self.stats.get("timeline", [])

    def save(self, name: str | None = None, *, lock_timeout=None):
        """Store the arrays and run attributes in the graph's file under ``results/<name>`` (not
        the profiling timeline, which can be large), and return where they went: a
        :class:`~ooc_graph.store.results.SavedResult` (also kept as ``self.saved``).

        Waits up to ``lock_timeout`` seconds (default ``$OOC_GRAPH_LOCK_TIMEOUT``, else 60) while
        other processes have the store open. A store that stays locked, is read-only or was
        replaced by another graph gets nothing: the result goes to ``<store>.<name>.result.h5``
        beside it, ``saved.in_store`` is false, ``saved.reason`` says why, and a
        :class:`~ooc_graph.errors.ResultNotStoredWarning` names the file.
        """
        name = self.algorithm if name is None else name
        stats = {k: v for k, v in self.stats.items() if k != "timeline"}
        attrs = {"algorithm": self.algorithm, "parameters": self.parameters, "iterations": self.iterations,
                 "converged": self.converged, "seconds": self.seconds, "device": self.device,
                 "stats": stats}
        self.saved = self.graph.save_result(name, self.arrays(), attrs, lock_timeout=lock_timeout)
        return self.saved


@dataclass
class PageRankResult(Result):
    values: np.ndarray = None
    _arrays: tuple = ("values",)


@dataclass
class BFSResult(Result):
    """``depth`` is ``UNREACHABLE`` (2**63 - 1, as Graphalytics) where no path exists;
    ``parent`` is -1 for the source and unreachable vertices."""

    depth: np.ndarray = None
    parent: np.ndarray = None
    _arrays: tuple = ("depth", "parent")

    @property
    def reachable(self) -> np.ndarray:
        return self.depth != UNREACHABLE


@dataclass
class SSSPResult(Result):
    """``distance`` is ``inf`` where no path exists; ``parent`` is -1 for the source and those."""

    distance: np.ndarray = None
    parent: np.ndarray = None
    _arrays: tuple = ("distance", "parent")


@dataclass
class WCCResult(Result):
    """``labels[v]`` is the smallest vertex id of v's weakly connected component."""

    labels: np.ndarray = None
    _arrays: tuple = ("labels",)

    @property
    def num_components(self) -> int:
        return int(np.unique(self.labels).size)


UNREACHABLE = np.iinfo(np.int64).max


@dataclass
class CentralityResult(Result):
    """One score per vertex (Katz, eigenvector, betweenness centrality)."""

    values: np.ndarray = None
    _arrays: tuple = ("values",)


@dataclass
class HITSResult(Result):
    """``hubs`` and ``authorities`` of every vertex (normalised to sum 1 unless asked not to)."""

    hubs: np.ndarray = None
    authorities: np.ndarray = None
    _arrays: tuple = ("hubs", "authorities")


@dataclass
class CDLPResult(Result):
    """``labels[v]``: v's community label (an original vertex id) after label propagation."""

    labels: np.ndarray = None
    _arrays: tuple = ("labels",)

    @property
    def num_communities(self) -> int:
        return int(np.unique(self.labels).size)


@dataclass
class CoreResult(Result):
    """``core[v]``: the largest k such that v belongs to the k-core."""

    core: np.ndarray = None
    _arrays: tuple = ("core",)

    def k_core(self, k: int | None = None) -> np.ndarray:
        """Original ids of the vertices of the k-core (default: the main core, the largest k)."""
        if k is None:
            k = int(self.core.max()) if self.core.size else 0
        return self.vertices[self.core >= k]


@dataclass
class SCCResult(Result):
    """``labels[v]`` is the smallest vertex id of v's strongly connected component."""

    labels: np.ndarray = None
    _arrays: tuple = ("labels",)

    @property
    def num_components(self) -> int:
        return int(np.unique(self.labels).size)
