"""Checks at open: the root attributes against the datasets' shapes, types and small tables.

Cheap by design (attributes, shapes, the interval and block tables, one element of each indptr),
so that metadata which contradicts the data is a :class:`StoreError` naming the attribute and the
dataset, never a wrong answer.
"""

from __future__ import annotations

import numbers

import h5py
import numpy as np

from ooc_graph.errors import FormatVersionError, StoreError
from ooc_graph.partitioning.intervals import interval_bounds

from . import _format as F

_INTS = ("num_vertices", "num_arcs", "num_edges", "interval_size", "num_intervals", "num_blocks",
         "chunk_arcs", "self_loops")
_BOOLS = ("directed", "weighted")
_DTYPES = ("id_dtype", "local_id_dtype")
_REQUIRED_DATASETS = (F.OUT_DEGREE, F.IN_DEGREE, F.CEL_INTERVALS, F.CEL_BLOCK_OFFSETS, F.CEL_BLOCK_SRC,
                      F.CEL_BLOCK_DST, F.CEL_SUBGRAPH_BLOCKS, F.CEL_SRC, F.CEL_DST,
                      F.CSR.format(side="out", part="indptr"), F.CSR.format(side="out", part="indices"),
                      F.CSR.format(side="in", part="indptr"), F.CSR.format(side="in", part="indices"))


def _is_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def plain(v):
    """An attribute value as a Python object."""
    return v.item() if hasattr(v, "item") and np.ndim(v) == 0 else v


def check_store(h5: h5py.File, path) -> tuple[dict, dict]:
    """The root attributes as Python values, and the small tables read to check them
    (``{"intervals": ..., "blocks": (offsets, src interval, dst interval)}``)."""
    a = h5.attrs
    if a.get("format") != F.FORMAT_NAME:
        raise StoreError(f"{path}: not an ooc_graph store (attribute 'format' is {a.get('format')!r})")
    version = plain(a.get("format_version"))
    if not _is_int(version):
        raise StoreError(f"{path}: attribute format_version is {version!r}, not an integer; the store is damaged")
    if version not in F.SUPPORTED_VERSIONS:
        raise FormatVersionError(
            f"{path}: store format version {version} is not supported by this reader "
            f"(supported: {', '.join(map(str, F.SUPPORTED_VERSIONS))}); convert the graph again")
    missing = [name for name in _REQUIRED_DATASETS if name not in h5]
    if missing:
        raise StoreError(f"{path}: store is incomplete, missing {', '.join(missing)}")
    attrs = {k: plain(v) for k, v in a.items()}

    def bad(msg):
        return StoreError(f"{path}: {msg}; the store is damaged (convert the graph again)")

    for name in _INTS + _BOOLS + _DTYPES:
        if name not in attrs:
            raise bad(f"attribute {name} is missing")
    for name in _INTS:
        if not _is_int(attrs[name]) or attrs[name] < 0:
            raise bad(f"attribute {name} is {attrs[name]!r}, not an integer >= 0")
    for name in _BOOLS + ("augmented",) * ("augmented" in attrs):
        if not isinstance(attrs[name], (bool, np.bool_)):
            raise bad(f"attribute {name} is {attrs[name]!r}, not a boolean")
    for name in ("chunk_arcs", "interval_size", "num_intervals"):
        if attrs[name] < 1:
            raise bad(f"attribute {name} is {attrs[name]}, must be at least 1")
    n, arcs, k, nb = (attrs[x] for x in ("num_vertices", "num_arcs", "num_intervals", "num_blocks"))

    def ds(name):
        try:
            return h5[name]
        except KeyError as err:
            raise bad(f"dataset {name} is missing") from err

    def shape(name, length, attr):
        got = ds(name).shape
        if got != (length,):
            raise bad(f"attribute {attr} = {attrs[attr]} contradicts dataset {name} of shape {got}")

    def read(name, sel=slice(None)):
        try:
            return ds(name)[sel]
        except OSError as err:
            raise StoreError(f"{path}: dataset {name!r} is corrupted or truncated ({err})") from err

    for name in (F.IN_DEGREE, F.OUT_DEGREE) + ((F.LABELS,) if F.LABELS in h5 else ()):
        shape(name, n, "num_vertices")
    weight_sets = [F.CEL_WEIGHT] + [F.CSR.format(side=s, part="weights") for s in ("out", "in")]
    for name in weight_sets:
        if (name in h5) != attrs["weighted"]:
            state = "present" if name in h5 else "missing"
            raise bad(f"attribute weighted = {attrs['weighted']} contradicts dataset {name} ({state})")
    arc_sets = [F.CEL_SRC, F.CEL_DST] + [F.CSR.format(side=s, part="indices") for s in ("out", "in")]
    for name in arc_sets + (weight_sets if attrs["weighted"] else []):
        shape(name, arcs, "num_arcs")
    for side in ("out", "in"):
        name = F.CSR.format(side=side, part="indptr")
        shape(name, n + 1, "num_vertices")
        last = int(read(name, -1))
        if last != arcs:
            raise bad(f"attribute num_arcs = {arcs} contradicts dataset {name}, which ends at {last}")
    dtypes = [(F.CEL_SRC, "local_id_dtype"), (F.CEL_DST, "local_id_dtype"),
              (F.CSR.format(side="out", part="indices"), "id_dtype")]
    if attrs["weighted"]:
        dtypes.append((F.CEL_WEIGHT, "weight_dtype"))
    for name, attr in dtypes:
        try:
            wanted = np.dtype(attrs.get(attr))
        except TypeError:
            wanted = None
        if ds(name).dtype != wanted:
            raise bad(f"attribute {attr} = {attrs.get(attr)!r} contradicts dataset {name} of type {ds(name).dtype}")
    chunks = ds(F.CEL_SRC).chunks
    if chunks is not None and chunks[0] != attrs["chunk_arcs"]:
        raise bad(f"attribute chunk_arcs = {attrs['chunk_arcs']} contradicts dataset {F.CEL_SRC}, "
                  f"stored in chunks of {chunks[0]} arcs")

    link = h5.get(F.CSR.format(side="in", part="indices"), getlink=True)
    if isinstance(link, h5py.SoftLink) == attrs["directed"]:
        what = "a link to the out-arc CSR" if isinstance(link, h5py.SoftLink) else "a dataset of its own"
        raise bad(f"attribute directed = {attrs['directed']} contradicts {F.CSR.format(side='in', part='indices')}, "
                  f"which is {what}")
    loops = attrs["self_loops"]
    edges = arcs if attrs["directed"] else (arcs - loops) // 2 + loops
    if loops > arcs or attrs["num_edges"] != edges:
        raise bad(f"attributes num_edges = {attrs['num_edges']}, self_loops = {loops} contradict num_arcs = {arcs}")

    # The interval and block tables: O(k + B) numbers, read once here and kept by the Graph.
    shape(F.CEL_INTERVALS, k + 1, "num_intervals")
    intervals = read(F.CEL_INTERVALS)
    size = attrs["interval_size"]
    if not np.array_equal(intervals, interval_bounds(n, size)):
        raise bad(f"attributes num_vertices = {n}, interval_size = {size} contradict dataset {F.CEL_INTERVALS} "
                  f"({intervals[:3].tolist()}...{intervals[-1:].tolist()})")
    shape(F.CEL_BLOCK_OFFSETS, nb + 1, "num_blocks")
    shape(F.CEL_BLOCK_SRC, nb, "num_blocks")
    shape(F.CEL_BLOCK_DST, nb, "num_blocks")
    shape(F.CEL_SUBGRAPH_BLOCKS, k + 1, "num_intervals")
    offsets, bsrc, bdst = read(F.CEL_BLOCK_OFFSETS), read(F.CEL_BLOCK_SRC), read(F.CEL_BLOCK_DST)
    if offsets[0] != 0 or offsets[-1] != arcs:
        raise bad(f"attribute num_arcs = {arcs} contradicts dataset {F.CEL_BLOCK_OFFSETS}, "
                  f"which runs from {offsets[0]} to {offsets[-1]}")
    if (np.diff(offsets) < 0).any() or nb and (min(bsrc.min(), bdst.min()) < 0 or max(bsrc.max(), bdst.max()) >= k):
        raise bad(f"the block table ({F.CEL_BLOCK_OFFSETS}, {F.CEL_BLOCK_SRC}, {F.CEL_BLOCK_DST}) is not ordered "
                  f"or names intervals outside 0..{k - 1}")
    if attrs.get("augmented"):
        for name in (F.AUG_BLOCK_SRC, F.AUG_BLOCK_DST, F.AUG_BLOCK_OFFSETS, F.AUG_SRC, F.AUG_DST):
            if name not in h5:
                raise bad(f"attribute augmented = True contradicts dataset {name} (missing)")
        aug_blocks = ds(F.AUG_BLOCK_SRC).shape[0]
        shape(F.AUG_BLOCK_OFFSETS, aug_blocks + 1, "augmented")
        last, aug_arcs = int(read(F.AUG_BLOCK_OFFSETS, -1)), ds(F.AUG_SRC).shape[0]
        if last != aug_arcs or ds(F.AUG_DST).shape[0] != aug_arcs:
            raise bad(f"dataset {F.AUG_BLOCK_OFFSETS} ends at {last}, but {F.AUG_SRC} holds {aug_arcs} arcs")
    return attrs, {"intervals": intervals, "blocks": (offsets, bsrc, bdst)}
