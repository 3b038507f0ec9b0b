"""Result objects: values indexed by vertex id, plus how the run went.

The arrays are indexed by internal vertex id (0..n-1). ``vertices``, ``to_dict``, ``to_pandas``
and ``to_arrow`` speak original ids: the store's labels (integers or strings), and arrays whose
values are vertices (BFS/SSSP ``parent``) mapped to original ids too, with "no vertex" as
``None`` / a null (not -1: -1 can be an original id).

Here are the base class and what several algorithms share (:class:`LabelsResult`,
:class:`CentralityResult`); each algorithm's own result class is defined beside it (``bfs.py``'s
``BFSResult``...) and imported with it (a PageRank call builds no other result class). They are
still found here by name (what imported them from here, results pickled before they moved).
"""

# No ``from __future__ import annotations``: dataclasses reads string annotations slowly (three
# regular-expression look-ups a field), which the result classes' fields would pay at import (see config.py).
import importlib
import sys
from dataclasses import field

import numpy as np

from ooc_graph._records import record
from ooc_graph.errors import ParameterError, install


def on_host(array):
    """A result array in host memory: a CuPy array (``output="cupy"``) copied back, anything
    else as it is."""
    return array.get() if hasattr(array, "get") and not isinstance(array, np.ndarray) else array


@record(repr=False)
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
    # Arrays whose values are internal vertex ids (-1: none), mapped to original ids on the way out.
    _vertex_arrays: tuple = ()

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

    def _vertex_valued(self) -> tuple:
        return self._vertex_arrays

    def column(self, name: str):
        """``(values, missing)``: array ``name`` as the outside sees it. Arrays of vertices hold
        original ids and ``missing`` marks where there is no vertex (else ``missing`` is None)."""
        if name not in self._arrays:
            raise ParameterError(f"{self.algorithm} result has no array {name!r} (valid: {', '.join(self._arrays)})")
        values = on_host(getattr(self, name))
        if name not in self._vertex_valued():
            return values, None
        missing = values < 0
        return self.vertices[np.where(missing, 0, values)], missing

    def columns(self) -> dict:
        """``{"vertex": (original ids, None), name: (values, missing), ...}``, as :meth:`column`."""
        return {"vertex": (self.vertices, None)} | {name: self.column(name) for name in self._arrays}

    def to_dict(self, name: str | None = None) -> dict:
        """``{original vertex id: value}`` of one array (the first by default); in an array of
        vertices (``parent``) the values are original ids and ``None`` where there is none."""
        values, missing = self.column(name or self._arrays[0])
        values = values.tolist()
        if missing is not None:
            values = [None if m else v for v, m in zip(values, missing.tolist())]
        return dict(zip(self.vertices.tolist(), values))

    def to_pandas(self):
        """A ``pandas.DataFrame``: column ``vertex`` (original ids) and one column per array,
        named as the result's attribute (``values``; ``depth``, ``parent``: not cuGraph's names).
        Arrays of vertices hold original ids, ``<NA>`` where there is none (a nullable ``Int64``
        column, or strings). Needs pandas (the ``dataframe`` extra)."""
        try:
            import pandas as pd
        except ImportError as err:
            raise ParameterError(f"to_pandas() needs pandas: {install('dataframe', 'pandas')}") from err
        data = {}
        for name, (values, missing) in self.columns().items():
            if missing is not None and values.dtype.kind in "iu":
                values = pd.arrays.IntegerArray(values.astype(np.int64), missing)
            elif missing is not None:
                values = pd.array(np.where(missing, None, values).tolist(), dtype="string")
            data[name] = values
        return pd.DataFrame(data)

    def to_arrow(self):
        """A ``pyarrow.Table`` with the columns of :meth:`to_pandas`; nulls where an array of
        vertices has none. Needs pyarrow (the ``dataframe`` extra)."""
        return arrow_table(self.columns(), "to_arrow()")

    def summary(self) -> str:
        arcs = self.stats.get("arcs_processed", 0)
        rate = arcs / self.seconds if self.seconds > 0 else float("nan")
        state = "converged" if self.converged else "not converged"
        return (f"{self.algorithm}: {self.iterations} iterations ({state}), {self.seconds:.3f} s, "
                f"{rate:,.0f} arcs/s, {self.bytes_read:,} bytes read, device {self.device}{self._details()}")

    def _details(self) -> str:
        """What the summary adds for this algorithm (``", 12 triangles"``)."""
        return ""

    def __repr__(self) -> str:
        """One short line: the algorithm, how the run went, its key figures and each array's type
        and length (``stats`` and ``passes`` hold the rest: all of them printed ~10 KB)."""
        state = "converged" if self.converged else "not converged"
        arrays = ", ".join(f"{name} {_described(getattr(self, name, None))}" for name in self._arrays)
        return (f"<ooc_graph.{type(self).__name__} {self.algorithm}: {self.iterations} iterations ({state}), "
                f"{self.seconds:.3f} s, device {self.device}{self._details()}; {arrays}>")

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
        arrays = {key: on_host(array) for key, array in self.arrays().items()}
        self.saved = self.graph.save_result(name, arrays, attrs, lock_timeout=lock_timeout)
        return self.saved


UNREACHABLE = np.iinfo(np.int64).max


@record(repr=False)  # the short __repr__ of Result
class LabelsResult(Result):
    """A label per vertex (components, communities): what WCC, SCC and CDLP return."""

    labels: np.ndarray = None
    _arrays: tuple = ("labels",)

    def _distinct_labels(self) -> int:
        return int(np.unique(on_host(self.labels)).size)


@record(repr=False)  # the short __repr__ of Result
class CentralityResult(Result):
    """One score per vertex (Katz, eigenvector, betweenness centrality)."""

    values: np.ndarray = None
    _arrays: tuple = ("values",)


def _described(array) -> str:
    """``float64[1,024]`` for an array (NumPy's or CuPy's), its repr for anything else."""
    shape = getattr(array, "shape", None)
    if shape is None:
        return repr(array)
    return f"{array.dtype}[{' x '.join(f'{k:,}' for k in shape)}]"


def arrow_table(columns: dict, who: str):
    """A ``pyarrow.Table`` of ``{name: (values, missing)}`` (as :meth:`Result.columns`): nulls
    where ``missing``, strings for object arrays. ``who`` names the caller in the error when
    pyarrow is absent."""
    try:
        import pyarrow as pa
    except ImportError as err:
        raise ParameterError(f"{who} needs pyarrow: {install('dataframe', 'pyarrow')}") from err
    out = {}
    for name, (values, missing) in columns.items():
        if values.dtype.kind in "OU":
            out[name] = pa.array([str(v) for v in values.tolist()], type=pa.string(), mask=missing)
        else:
            out[name] = pa.array(values, mask=missing)
    return pa.table(out)


def __getattr__(name: str):
    # a moved class's name -> its algorithm's module (PEP 562); read from the package's namespace
    # itself, which the import system probes for __path__ while the package is still being made
    module = vars(sys.modules[__package__]).get("RESULTS", {}).get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__package__}.{module}"), name)
