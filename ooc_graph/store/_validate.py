"""Checks at open: the objects the file holds, the root attributes against the datasets' shapes,
types and small tables.

Cheap by design (link and dataset metadata, attributes, shapes, the interval and block tables,
one element of each indptr), so that a store which holds what the format does not allow, or whose
metadata contradicts its data, is a :class:`StoreError` naming the attribute and the dataset,
never a read outside the file or a wrong answer. What the kernels index with (ids, offsets,
weights) is checked before its first use instead (:mod:`.contents`).
"""

from __future__ import annotations

import math
import numbers

import h5py
import numpy as np

from ooc_graph.errors import FormatVersionError, StoreError, shown
from ooc_graph.partitioning.intervals import interval_bounds

from . import _format as F
from ._structure import check_result_shapes, check_structure

_INTS = ("num_vertices", "num_arcs", "num_edges", "interval_size", "num_intervals", "num_blocks",
         "chunk_arcs", "self_loops")
_BOOLS = ("directed", "weighted")
_DTYPES = ("id_dtype", "local_id_dtype")
_REQUIRED_DATASETS = (F.OUT_DEGREE, F.IN_DEGREE, F.CEL_INTERVALS, F.CEL_BLOCK_OFFSETS, F.CEL_BLOCK_SRC,
                      F.CEL_BLOCK_DST, F.CEL_SUBGRAPH_BLOCKS, F.CEL_SRC, F.CEL_DST,
                      F.CSR.format(side="out", part="indptr"), F.CSR.format(side="out", part="indices"),
                      F.CSR.format(side="in", part="indptr"), F.CSR.format(side="in", part="indices"))
# The types each attribute may name (FORMAT.md), and the datasets of one fixed type.
_TYPES = {"id_dtype": ("int32", "int64"), "local_id_dtype": ("uint8", "uint16", "uint32", "uint64"),
          "weight_dtype": ("float32", "float64")}
_INT64 = (F.OUT_DEGREE, F.IN_DEGREE, F.LABELS, F.LABEL_OFFSETS, F.CEL_INTERVALS, F.CEL_BLOCK_OFFSETS, F.CEL_BLOCK_SRC,
          F.CEL_BLOCK_DST, F.CEL_SUBGRAPH_BLOCKS, F.AUG_BLOCK_OFFSETS, F.AUG_BLOCK_SRC, F.AUG_BLOCK_DST,
          F.CSR.format(side="out", part="indptr"), F.CSR.format(side="in", part="indptr"))


def _is_int(v) -> bool:
    return isinstance(v, (numbers.Integral, np.integer)) and not isinstance(v, (bool, np.bool_))


def plain(v):
    """An attribute value as a Python object."""
    return v.item() if hasattr(v, "item") and np.ndim(v) == 0 else v


def read_attrs(obj, where) -> dict:
    """The attributes of an HDF5 object as Python values; text must be UTF-8 (bytes are decoded).
    One that cannot be read is a one-line :class:`StoreError` naming it."""
    out = {}
    for key in obj.attrs.keys():
        try:
            value = plain(obj.attrs[key])
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            elif isinstance(value, str):
                value.encode("utf-8")  # h5py gives undecodable bytes as lone surrogates
        except (OSError, TypeError, ValueError, KeyError, UnicodeError) as err:
            what = "is not valid UTF-8 text" if isinstance(err, UnicodeError) else f"cannot be read ({err})"
            raise StoreError(f"{where}: attribute {shown(key)} of {shown(obj.name)} {what}; the file is damaged"
                             ) from err
        out[key] = value
    return out


def json_attr(attrs: dict, key: str, where, *, default="{}", kind=dict):
    """Attribute ``key`` (JSON text) parsed, of type ``kind``; a one-line :class:`StoreError`
    naming it where it is not JSON, too deeply nested or not of that type."""
    import json  # here: opening a store parses no JSON attribute
    text = attrs.get(key, default)
    try:
        value = json.loads(text) if isinstance(text, str) else text
    except (ValueError, RecursionError, TypeError) as err:
        reason = "is nested too deeply" if isinstance(err, RecursionError) else "is not JSON"
        raise StoreError(f"{where}: attribute {key} {reason} ({shown(str(text)[:40])}...); the file is damaged") from err
    if not isinstance(value, kind):
        raise StoreError(f"{where}: attribute {key} is {type(value).__name__} JSON, not {kind.__name__}; "
                         "the file is damaged")
    return value


def check_store(h5, path) -> tuple[dict, dict]:
    """The root attributes as Python values, and the small tables read to check them
    (``{"intervals": ..., "blocks": (offsets, src interval, dst interval)}``)."""
    attrs = read_attrs(h5, path)
    name = attrs.get("format")
    if not isinstance(name, str) or name != F.FORMAT_NAME:
        raise StoreError(f"{path}: not an ooc_graph store (attribute 'format' is {shown(repr(name)[:60])})")
    version = attrs.get("format_version")
    if not _is_int(version):
        raise StoreError(f"{path}: attribute format_version is {shown(repr(version)[:60])}, not an integer; "
                         "the store is damaged")
    if version not in F.SUPPORTED_VERSIONS:
        raise FormatVersionError(
            f"{path}: store format version {version} is not supported by this reader "
            f"(supported: {', '.join(map(str, F.SUPPORTED_VERSIONS))}); convert the graph again")
    # The objects, before any is opened (a name looked up may follow a link).
    results = check_structure(h5, path) if isinstance(h5, h5py.Group) else {}
    missing = [name for name in _REQUIRED_DATASETS if name not in h5]
    if missing:
        raise StoreError(f"{path}: store is incomplete, missing {', '.join(missing)}")
    _check_attrs(attrs, path)
    _check_datasets(h5, attrs, path)
    _check_values(attrs, path)
    check_result_shapes(results, attrs["num_vertices"], path)
    return attrs, _check_tables(h5, attrs, path)


def _damaged(path, msg) -> StoreError:
    return StoreError(f"{path}: {msg}; the store is damaged (convert the graph again)")


def _check_shape(h5, attrs, path, name, length, attr) -> None:
    """Dataset ``name`` holds ``length`` elements, as attribute ``attr`` says."""
    got = h5[name].shape
    if got != (length,):
        raise _damaged(path, f"attribute {attr} = {attrs[attr]} contradicts dataset {name} of shape {got}")


def _check_attrs(attrs, path) -> None:
    def bad(msg):
        return _damaged(path, msg)

    for name in _INTS + _BOOLS + _DTYPES:
        if name not in attrs:
            raise bad(f"attribute {name} is missing")
    for name in _INTS:
        if not _is_int(attrs[name]) or attrs[name] < 0:
            raise bad(f"attribute {name} is {shown(repr(attrs[name])[:60])}, not an integer >= 0")
    for name in _BOOLS + ("augmented",) * ("augmented" in attrs):
        if not isinstance(attrs[name], (bool, np.bool_)):
            raise bad(f"attribute {name} is {shown(repr(attrs[name])[:60])}, not a boolean")
    for name in ("chunk_arcs", "interval_size", "num_intervals"):
        if attrs[name] < 1:
            raise bad(f"attribute {name} is {attrs[name]}, must be at least 1")


def _check_values(attrs, path) -> None:
    """What the attributes say, once they agree with the datasets: the type names the format
    allows, finite weight bounds, the edge count."""
    def bad(msg):
        return _damaged(path, msg)

    for name, valid in _TYPES.items():
        if (name != "weight_dtype" or attrs["weighted"]) and attrs.get(name) not in valid:
            raise bad(f"attribute {name} is {shown(repr(attrs.get(name))[:60])} (valid: {', '.join(valid)})")
    if attrs["id_dtype"] == "int32" and attrs["num_vertices"] > np.iinfo(np.int32).max + 1:
        raise bad(f"attribute id_dtype = int32 cannot hold the ids of num_vertices = {attrs['num_vertices']}")
    if attrs["weighted"]:
        lo, hi = attrs.get("min_weight"), attrs.get("max_weight")
        numbers_ = all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (lo, hi))
        if not numbers_ or not (math.isfinite(lo) and math.isfinite(hi) and lo <= hi):
            raise bad(f"attributes min_weight = {shown(repr(lo)[:30])}, max_weight = {shown(repr(hi)[:30])} "
                      "are not finite numbers, the first no larger")
    arcs = attrs["num_arcs"]
    loops = attrs["self_loops"]
    edges = arcs if attrs["directed"] else (arcs - loops) // 2 + loops
    if loops > arcs or attrs["num_edges"] != edges:
        raise bad(f"attributes num_edges = {attrs['num_edges']}, self_loops = {loops} contradict num_arcs = {arcs}")


def _check_datasets(h5, attrs, path) -> None:
    """Shapes and types of the datasets against the attributes."""
    def bad(msg):
        return _damaged(path, msg)

    def shape(name, length, attr):
        _check_shape(h5, attrs, path, name, length, attr)

    n, arcs, weighted = attrs["num_vertices"], attrs["num_arcs"], attrs["weighted"]
    for name in (F.IN_DEGREE, F.OUT_DEGREE) + ((F.LABELS,) if F.LABELS in h5 else ()):
        shape(name, n, "num_vertices")
    if (F.LABEL_BYTES in h5) != (F.LABEL_OFFSETS in h5) or (F.LABEL_BYTES in h5 and F.LABELS in h5):
        raise bad(f"datasets {F.LABEL_BYTES} and {F.LABEL_OFFSETS} come together, without {F.LABELS}")
    if F.LABEL_OFFSETS in h5:
        shape(F.LABEL_OFFSETS, n + 1, "num_vertices")
    weight_sets = [F.CEL_WEIGHT] + [F.CSR.format(side=s, part="weights") for s in ("out", "in")]
    for name in weight_sets:
        if (name in h5) != weighted:
            state = "present" if name in h5 else "missing"
            raise bad(f"attribute weighted = {weighted} contradicts dataset {name} ({state})")
    arc_sets = [F.CEL_SRC, F.CEL_DST] + [F.CSR.format(side=s, part="indices") for s in ("out", "in")]
    for name in arc_sets + (weight_sets if weighted else []):
        shape(name, arcs, "num_arcs")
    for side in ("out", "in"):
        name = F.CSR.format(side=side, part="indptr")
        shape(name, n + 1, "num_vertices")
        last = int(_read(h5, name, path, -1))
        if last != arcs:
            raise bad(f"attribute num_arcs = {arcs} contradicts dataset {name}, which ends at {last}")
    typed = [(F.CEL_SRC, "local_id_dtype"), (F.CEL_DST, "local_id_dtype"), (F.AUG_SRC, "local_id_dtype"),
             (F.AUG_DST, "local_id_dtype")] + [(F.CSR.format(side=s, part="indices"), "id_dtype") for s in ("out", "in")]
    if weighted:
        typed += [(name, "weight_dtype") for name in weight_sets + [F.AUG_WEIGHT]]
    typed += [(name, None) for name in _INT64] + [(F.LABEL_BYTES, None)]
    for name, attr in typed:
        wanted = _dtype(attrs.get(attr)) if attr else np.dtype(np.uint8 if name == F.LABEL_BYTES else np.int64)
        if name in h5 and h5[name].dtype != wanted:
            said = f"attribute {attr} = {attrs[attr]!r} contradicts " if attr else ""
            raise bad(f"{said}dataset {name} of type {h5[name].dtype}" + ("" if attr else f", not {wanted}"))
    chunks = h5[F.CEL_SRC].chunks
    if chunks is not None and chunks[0] != attrs["chunk_arcs"]:
        raise bad(f"attribute chunk_arcs = {attrs['chunk_arcs']} contradicts dataset {F.CEL_SRC}, "
                  f"stored in chunks of {chunks[0]} arcs")
    link = h5.get(F.CSR.format(side="in", part="indices"), getlink=True)
    if isinstance(link, h5py.SoftLink) == attrs["directed"]:
        what = "a link to the out-arc CSR" if isinstance(link, h5py.SoftLink) else "a dataset of its own"
        raise bad(f"attribute directed = {attrs['directed']} contradicts {F.CSR.format(side='in', part='indices')}, "
                  f"which is {what}")


def _dtype(name):
    try:
        return np.dtype(name)
    except TypeError:
        return None


def _read(h5, name, path, sel=slice(None)):
    try:
        return h5[name][sel]
    except KeyError as err:
        raise _damaged(path, f"dataset {name} is missing") from err
    except OSError as err:
        raise StoreError(f"{path}: dataset {name!r} is corrupted or truncated ({err})") from err


def _check_tables(h5, attrs, path) -> dict:
    """The interval and block tables: O(k + B) numbers, read once here and kept by the Graph."""
    def bad(msg):
        return _damaged(path, msg)

    def shape(name, length, attr):
        _check_shape(h5, attrs, path, name, length, attr)

    n, arcs, k, nb = (attrs[x] for x in ("num_vertices", "num_arcs", "num_intervals", "num_blocks"))
    shape(F.CEL_INTERVALS, k + 1, "num_intervals")
    intervals = _read(h5, F.CEL_INTERVALS, path)
    size = attrs["interval_size"]
    if not np.array_equal(intervals, interval_bounds(n, size)):
        raise bad(f"attributes num_vertices = {n}, interval_size = {size} contradict dataset {F.CEL_INTERVALS} "
                  f"({intervals[:3].tolist()}...{intervals[-1:].tolist()})")
    shape(F.CEL_BLOCK_OFFSETS, nb + 1, "num_blocks")
    shape(F.CEL_BLOCK_SRC, nb, "num_blocks")
    shape(F.CEL_BLOCK_DST, nb, "num_blocks")
    shape(F.CEL_SUBGRAPH_BLOCKS, k + 1, "num_intervals")
    offsets, bsrc, bdst = (_read(h5, x, path) for x in (F.CEL_BLOCK_OFFSETS, F.CEL_BLOCK_SRC, F.CEL_BLOCK_DST))
    if offsets[0] != 0 or offsets[-1] != arcs:
        raise bad(f"attribute num_arcs = {arcs} contradicts dataset {F.CEL_BLOCK_OFFSETS}, "
                  f"which runs from {offsets[0]} to {offsets[-1]}")
    check_block_table(offsets, bsrc, bdst, k, path, "cel", source_major=False)
    subgraphs = _read(h5, F.CEL_SUBGRAPH_BLOCKS, path)
    expected = np.searchsorted(bdst, np.arange(k + 1))
    if not np.array_equal(subgraphs, expected):
        at = int(np.argmax(subgraphs != expected))
        raise bad(f"dataset {F.CEL_SUBGRAPH_BLOCKS} holds {subgraphs[at]} at position {at}, but the block table "
                  f"starts sub-graph {at} at block {expected[at]}")
    if attrs.get("augmented"):
        for name in (F.AUG_BLOCK_SRC, F.AUG_BLOCK_DST, F.AUG_BLOCK_OFFSETS, F.AUG_SRC, F.AUG_DST):
            if name not in h5:
                raise bad(f"attribute augmented = True contradicts dataset {name} (missing)")
        aug_blocks = h5[F.AUG_BLOCK_SRC].shape[0]
        shape(F.AUG_BLOCK_OFFSETS, aug_blocks + 1, "augmented")
        if h5[F.AUG_BLOCK_DST].shape != (aug_blocks,):
            raise bad(f"dataset {F.AUG_BLOCK_DST} of shape {h5[F.AUG_BLOCK_DST].shape} contradicts "
                      f"{F.AUG_BLOCK_SRC} of shape {(aug_blocks,)}")
        last, aug_arcs = int(_read(h5, F.AUG_BLOCK_OFFSETS, path, -1)), h5[F.AUG_SRC].shape[0]
        if last != aug_arcs or h5[F.AUG_DST].shape[0] != aug_arcs or \
                (attrs["weighted"] and h5.get(F.AUG_WEIGHT, np.zeros(0)).shape != (aug_arcs,)):
            raise bad(f"dataset {F.AUG_BLOCK_OFFSETS} ends at {last}, but {F.AUG_SRC} holds {aug_arcs} arcs")
    return {"intervals": intervals, "blocks": (offsets, bsrc, bdst)}


def check_block_table(offsets, bsrc, bdst, k: int, path, group: str, *, source_major: bool) -> None:
    """A block table as the format orders it: offsets from 0, non-decreasing; intervals within
    0..k-1; blocks in (destination, source) interval order, each pair once (``source_major``:
    the augmentation's (source, destination) order, destinations before their source)."""
    names = {x: f"{group}/{x}" for x in ("block_offsets", "block_src_interval", "block_dst_interval")}
    steps = np.diff(offsets)
    if offsets.size and offsets[0] != 0 or (steps < 0).any():
        at = 0 if offsets[0] != 0 else int(np.argmax(steps < 0)) + 1
        raise _damaged(path, f"dataset {names['block_offsets']} holds {offsets[at]} at position {at}, "
                             f"{'not 0' if at == 0 else 'below the offset before it'}")
    for name, values in ((names["block_src_interval"], bsrc), (names["block_dst_interval"], bdst)):
        out = (values < 0) | (values >= k)
        if out.any():
            at = int(np.argmax(out))
            raise _damaged(path, f"dataset {name} holds {values[at]} at position {at}, outside the intervals "
                                 f"0..{k - 1}")
    major, minor = (bsrc, bdst) if source_major else (bdst, bsrc)
    order = (major[1:] > major[:-1]) | ((major[1:] == major[:-1]) & (minor[1:] > minor[:-1]))
    if not order.all():
        at = int(np.argmax(~order)) + 1
        raise _damaged(path, f"the block table of {group} lists block {at} ({names['block_src_interval']} "
                             f"{bsrc[at]}, {names['block_dst_interval']} {bdst[at]}) out of order")
    if source_major and (bdst >= bsrc).any():
        at = int(np.argmax(bdst >= bsrc))
        raise _damaged(path, f"dataset {names['block_dst_interval']} holds {bdst[at]} at position {at}, not "
                             f"before its source interval {bsrc[at]}")
