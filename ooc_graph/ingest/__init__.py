"""Ingestion: edge files and Python objects into a graph store."""

from __future__ import annotations

import itertools
import logging
import time
from pathlib import Path

import numpy as np

from ooc_graph._progress import progress_bar
from ooc_graph.errors import InputError, ParameterError

from .builder import GraphBuilder
from .footprint import reader_options
from .formats import READERS, array_source, detect_format, input_files
from .output import check_flags, check_output
from .strings import networkx_string_ends, string_array_source
from .text import check_input, clip, real_weights

__all__ = ["convert", "GraphBuilder", "READERS", "MEMORY"]
log = logging.getLogger("ooc_graph.ingest")
MEMORY = ":memory:"  # convert's output name for a store kept in memory


def _python_source(obj, directed):
    """A :class:`Source` for numpy arrays / tuples, scipy.sparse matrices and networkx graphs."""
    mod = type(obj).__module__ or ""
    if mod.startswith("networkx"):
        nodes = list(obj.nodes())
        strings = bool(nodes) and all(isinstance(v, str) for v in nodes)
        bad = None if strings else next((v for v in nodes if not isinstance(v, (int, np.integer))
                                         or isinstance(v, bool) or not -2**63 <= v < 2**63), None)
        if bad is not None:
            raise InputError(f"networkx node labels must be all integers or all strings, integers in the "
                             f"64-bit signed range (got {clip(repr(bad))}); relabel with "
                             "networkx.convert_node_labels_to_integers first")
        edges = list(obj.edges(data="weight"))
        weighted = any(w is not None for _, _, w in edges)
        if strings:
            labels, src, dst = networkx_string_ends(nodes, edges)
        else:
            src = np.fromiter((u for u, _, _ in edges), np.int64, len(edges))
            dst = np.fromiter((v for _, v, _ in edges), np.int64, len(edges))
        if weighted:
            try:
                w = np.array([1.0 if w is None else w for *_, w in edges], dtype=np.float64)
            except (TypeError, ValueError) as err:
                raise InputError(f"networkx edge weights must be numbers ({clip(err)})") from err
        cols = (src, dst) if not weighted else (src, dst, w)
        source = array_source(cols, name="networkx graph")
        if strings:
            source.string_labels, source.num_vertices = labels, len(labels)
        else:
            source.labels = np.asarray(nodes, dtype=np.int64)
        source.directed = obj.is_directed()
        return source
    if hasattr(obj, "tocoo") and hasattr(obj, "shape"):
        coo = obj.tocoo()
        if coo.shape[0] != coo.shape[1]:
            raise InputError(f"scipy.sparse adjacency matrix must be square (got shape {coo.shape})")
        data = real_weights(coo.data, "scipy.sparse matrix")
        weighted = bool(data.size) and not np.all(data == 1)
        cols = (coo.row, coo.col, data) if weighted else (coo.row, coo.col)
        source = array_source(cols, name="scipy.sparse matrix")
        source.num_vertices = coo.shape[0]
        return source
    if isinstance(obj, (np.ndarray, tuple, list)):
        return string_array_source(obj) or array_source(obj)
    raise InputError(f"cannot convert an object of type {type(obj).__name__} (expected a path, a numpy "
                     "array, a (src, dst[, weight]) tuple, a scipy.sparse matrix or a networkx graph)")


def convert(source, out, *, format: str | None = None, directed: bool | None = None,
            weighted: bool | None = None, drop_self_loops: bool = False, dedupe: bool = True,
            relabel: bool | None = None, num_vertices: int | None = None, memory=None,
            interval_size: int | None = None, chunk_arcs: int | None = None,
            weight_dtype: str = "float32", delimiter: str | None = None, progress: bool | None = None,
            workers: int | None = None, augment: bool = False, overwrite: bool = False, device: str = "auto",
            string_ids: bool | None = None, header: bool | None = None):
    """Convert an edge file or an in-memory graph into a graph store and open it.

    Parameters
    ----------
    source : path or object
        An edge file (formats: ``edgelist`` SNAP text, ``csv``, ``mtx`` Matrix Market, ``gr`` PACE/
        DIMACS, ``ldbc`` Graphalytics .v/.e, ``adj`` adjacency lists, ``bin32``/``bin64`` raw pairs,
        ``npy``; ``.gz``/``.xz``/``.bz2`` are read compressed), or a numpy (m, 2)/(m, 3) array, a
        ``(src, dst[, weight])`` tuple, a scipy.sparse matrix or a networkx graph.
    out : path or ":memory:"
        The store to write (HDF5), in an existing folder. Written under a temporary name and
        renamed on success; never the input itself, never over a file that is not a store.
        ``":memory:"`` (as SQLite names it) keeps the store in memory
        (:class:`~ooc_graph.store.memory.MemoryGraph`: the same datasets, read the same way, gone
        with the object; for small graphs, where writing a file costs more than the algorithm).
        It cannot hold saved results or be opened by worker processes.
    format : str, optional
        Input format; by default from the file suffix.
    directed : bool, optional
        ``False`` symmetrises every edge. Default: what the input says (a SNAP edge list's
        ``# Undirected graph`` / ``# Directed graph`` header line, or a header line ending in
        ``, undirected`` / ``, directed`` as SNAPDatasets.jl writes it; Matrix Market's symmetry, a
        ``.gr`` file's kind, a networkx graph's class), else ``True``: directed, unlike networkx's
        and cuGraph's readers, which default to undirected.
    weighted : bool, optional
        Keep the weight column. Default: whether the input has one.
    drop_self_loops, dedupe : bool
        Remove self-loops; merge repeated arcs (keeping the smallest weight).
    relabel : bool, optional
        Map ids to 0..n-1 and keep the originals in the store. Default: only when the input ids
        are not already 0..n-1. ``False`` keeps ids as they are (n = largest id + 1).
    num_vertices : int, optional
        Vertex count when ids are 0..n-1 and some vertices have no edge.
    memory : int or str
        Host memory budget (``"2GB"``); default a quarter of RAM (or of the
        container's memory limit, where lower). Larger inputs are bucketed on disk.
    interval_size, chunk_arcs : int, optional
        Vertices per interval (default 65,536) and arcs per transfer chunk (default 4 Mi).
    weight_dtype : {"float32", "float64"}
        The stored weight type. Weights are never altered silently: a weight that float32 would
        turn into infinity (above ~3.4e38) or into 0 (below ~1.4e-45, not zero) is an
        :class:`~ooc_graph.errors.InputError` naming the file, line and value; pass
        ``weight_dtype="float64"`` to keep such weights.
    progress : bool, optional
        Bars for reading, partitioning and sorting (``tqdm.auto``: a widget in Jupyter): ``None``
        where stderr is a terminal, ``True`` wherever it runs (a notebook, a log), ``False`` never.
    workers : int, optional
        Threads sorting buckets and counting degrees at once (default: the cores, at most 16);
        they share ``memory``.
    augment : bool
        Also store WolfGraph's CEL augmentation (the arcs back into earlier sub-graphs, about half
        the arcs again on a random graph), which asynchronous BFS/SSSP relaxes with each chunk.
    overwrite : bool
        Replace an existing store at ``out`` (without it, an existing store is an error).
    device : {"auto", "cpu", "gpu"}
        Where buckets are sorted: ``auto`` on the GPU when CuPy sees one (a bucket that does not
        fit its free memory on the CPU). The store is the same byte for byte either way.
    string_ids : bool, optional
        ``edgelist``/``csv``: vertex ids are strings (usernames, URLs: any text without whitespace
        or the delimiter). Default: when the first line's ids are not numbers. The store keeps
        them (``G.labels``, sorted as Python sorts strings); ``source=`` and results use them.
        The file is read twice and the distinct ids are held in memory. networkx graphs with
        string nodes and arrays of strings convert the same way.
    header : bool, optional
        ``csv``: whether the first line is a header. Default: with integer ids when it is not
        numeric; with string ids always (as pandas reads a CSV).

    Integer vertex ids must be in the 64-bit signed range: larger text ids, float ids that are
    not integers and uint64 ids above 2**63-1 are errors, never clamped or wrapped.

    Returns
    -------
    Graph
        The opened store.

    Examples
    --------
    >>> import numpy as np, ooc_graph, tempfile, os
    >>> folder = tempfile.TemporaryDirectory()
    >>> G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), os.path.join(folder.name, "tri.h5"),
    ...                       directed=False, progress=False)
    >>> G.num_vertices, G.num_edges, G.num_arcs
    (3, 3, 6)
    >>> G.close(); folder.cleanup()
    """
    in_memory = isinstance(out, str) and out == MEMORY
    GraphBuilder.check_options(memory=memory, num_vertices=num_vertices, weight_dtype=weight_dtype,
                               chunk_arcs=chunk_arcs, workers=workers, device=device, interval_size=interval_size)
    check_flags(optional=("directed", "weighted", "relabel", "string_ids", "header", "progress"), directed=directed,
                weighted=weighted, relabel=relabel, string_ids=string_ids, header=header,
                drop_self_loops=drop_self_loops, dedupe=dedupe, augment=augment, progress=progress)
    if delimiter is not None and (not isinstance(delimiter, str) or not delimiter):
        raise ParameterError(f"delimiter must be a non-empty string (got {delimiter!r})")
    if isinstance(source, (str, Path)):
        path = Path(source)
        fmt = detect_format(path, format)
        if string_ids and fmt not in ("edgelist", "csv"):
            raise ParameterError(f"string_ids=True applies to edgelist and csv files (got format {fmt!r})")
        if header is not None and fmt != "csv":
            raise ParameterError(f"header= applies to csv files (got format {fmt!r})")
        check_input(path)
        if not in_memory:
            check_output(out, overwrite=overwrite, inputs=input_files(path, fmt))
        src = READERS[fmt](path, reader_options(memory, delimiter=delimiter, string_ids=string_ids, header=header))
        description = f"{fmt}:{path}"
    else:
        if format is not None or string_ids is not None or header is not None:
            raise ParameterError("format=, string_ids= and header= apply to files only")
        if not in_memory:
            check_output(out, overwrite=overwrite)
        src = _python_source(source, directed)
        description = f"python:{type(source).__name__}"

    started = time.perf_counter()
    chunks = iter(src.chunks)
    first = next(chunks, None)
    has_weights = src.weighted if src.weighted is not None else (first is not None and first[2] is not None)
    if weighted is None:
        weighted = bool(has_weights)
    elif weighted and not has_weights:
        raise InputError(f"{description}: weighted=True but the input has no weights")
    if directed is None:
        directed = True if src.directed is None else src.directed
    strings = src.string_labels is not None
    if strings and (num_vertices is not None or relabel):
        raise ParameterError(f"{description}: vertex ids are strings; num_vertices= and relabel=True do not apply")

    with GraphBuilder(None if in_memory else out, directed=directed, weighted=weighted,
                      num_vertices=num_vertices or src.num_vertices,
                      labels=src.labels, relabel=None if strings else relabel,
                      drop_self_loops=drop_self_loops, dedupe=dedupe,
                      memory=memory, interval_size=interval_size, chunk_arcs=chunk_arcs,
                      weight_dtype=weight_dtype, source=description, progress=progress,
                      workers=workers, augment=augment, overwrite=overwrite, device=device,
                      string_labels=src.string_labels) as builder:
        builder._t0 = started  # the build's seconds include reading the first chunk
        bar = progress_bar(total=src.size, unit=src.unit, desc="reading", progress=progress)
        done = 0
        for s, d, w, locate in itertools.chain([first] if first is not None else [], chunks):
            builder.add(s, d, w if weighted else None, locate=locate)
            if src.position is not None:
                now = src.position()
                bar.update(now - done)
                done = now
        bar.close()
        builder.stages.add("parse", time.perf_counter() - started - builder.stages.seconds.get("add", 0.0))
        builder.finish()
    return builder.opened()
