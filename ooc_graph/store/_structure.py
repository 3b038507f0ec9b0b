"""What objects a store (or a result file) may hold, checked at every open from HDF5's metadata.

A store is read as given, possibly by someone other than whoever made it, so it must not make this
library read anything outside the file: HDF5 can hold external links (to objects of other
files), soft links (to any path, an external link included), datasets whose raw data lies in
other files (``external=`` storage) and virtual datasets (mapped from other files). None of them
is in ``partitioning/FORMAT.md``: every dataset is one-dimensional, chunked, checksummed with
fletcher32 and nothing else, little-endian numbers; the only soft links are those of an
undirected store. The walk reads link and creation-property metadata only (no dataset's data),
and never follows a link before deciding that it may.
"""

from __future__ import annotations

import h5py

from ooc_graph.errors import StoreError, shown

from . import _format as F

# The soft links the format has: an undirected store's in-arc CSR and out-degrees name the
# out-arc CSR and the in-degrees.
SOFT_LINKS = {F.CSR.format(side="in", part=p): "/" + F.CSR.format(side="out", part=p)
              for p in ("indptr", "indices", "weights")} | {F.OUT_DEGREE: "/" + F.IN_DEGREE}
_KINDS = "biuf"  # dataset element kinds the format uses (bool, int, uint, float)


def _refuse(path, what: str) -> StoreError:
    return StoreError(f"{path}: {what}; a store may hold only what partitioning/FORMAT.md specifies, so it is "
                      "not read")


def check_dataset(ds: h5py.Dataset, name: str, path) -> None:
    """Refuse a dataset stored in another way than the format's: raw data in other files, a
    virtual dataset, another layout than chunked, filters other than fletcher32 alone, more than
    one dimension, elements that are not little-endian numbers."""
    plist = ds.id.get_create_plist()
    if plist.get_external_count():
        where = plist.get_external(0)[0].decode(errors="replace")
        raise _refuse(path, f"dataset {shown(name)} keeps its data in the external file {shown(where)}")
    layout = plist.get_layout()
    if layout == h5py.h5d.VIRTUAL:
        raise _refuse(path, f"dataset {shown(name)} is a virtual dataset (its data is mapped from other files)")
    if layout != h5py.h5d.CHUNKED:
        kind = {h5py.h5d.CONTIGUOUS: "contiguous", h5py.h5d.COMPACT: "compact"}.get(layout, f"layout {layout}")
        raise _refuse(path, f"dataset {shown(name)} is stored {kind}, not chunked")
    filters = [plist.get_filter(i)[0] for i in range(plist.get_nfilters())]
    if filters != [h5py.h5z.FILTER_FLETCHER32]:
        raise _refuse(path, f"dataset {shown(name)} has the filters {filters}, not fletcher32 alone "
                            f"(filter {h5py.h5z.FILTER_FLETCHER32})")
    if ds.ndim != 1:
        raise _refuse(path, f"dataset {shown(name)} has {ds.ndim} dimensions, not 1")
    dtype = ds.dtype
    if dtype.kind not in _KINDS or dtype.hasobject or dtype != dtype.newbyteorder("<"):
        raise _refuse(path, f"dataset {shown(name)} holds elements of type {dtype.str}, not little-endian numbers")


def _link(group: h5py.Group, key: str, name: str, path):
    """The object ``group[key]`` names, or None for a link the format allows and that the walk
    does not enter (a soft link: its target is checked where it lies)."""
    link = group.get(key, getlink=True)
    if isinstance(link, h5py.ExternalLink):
        raise _refuse(path, f"{shown(name)} is an external link to {shown(link.filename)}:{shown(link.path)}")
    if isinstance(link, h5py.SoftLink):
        if SOFT_LINKS.get(name) != link.path:
            raise _refuse(path, f"{shown(name)} is a soft link to {shown(link.path)}")
        return None
    if not isinstance(link, h5py.HardLink):
        raise _refuse(path, f"{shown(name)} is a link of an unknown kind")
    obj = group[key]
    if not isinstance(obj, (h5py.Group, h5py.Dataset)):
        raise _refuse(path, f"{shown(name)} is a {type(obj).__name__}, not a group or a dataset")
    return obj


def check_structure(h5: h5py.File, path, *, result_file: bool = False) -> dict:
    """Walk every object of the file (a store, or with ``result_file`` a result file beside a
    store), refusing with a one-line :class:`StoreError` what the format does not allow. Returns
    ``{result dataset name: shape}`` for the caller to check against the vertex count.

    Members of ``results`` whose name starts with '.' are results being written (or left by a
    killed writer): this library only ever deletes them, so they are not entered. Datasets are
    stored uncompressed, so together they cannot hold more bytes than the file: one that claims
    more (its chunks never written) is refused before anything of that size is allocated."""
    results: dict = {}
    try:
        room = [h5.id.get_filesize()]  # bytes the datasets may still claim
        _walk(h5, "", path, results, result_file, room)
    except StoreError:
        raise
    except (OSError, KeyError, RuntimeError, ValueError, TypeError, UnicodeDecodeError) as err:
        raise StoreError(f"{path}: its objects cannot be listed; the file is damaged ({shown(str(err))})") from err
    return results


_DAMAGE = (OSError, KeyError, RuntimeError, ValueError)


def _walk(group, prefix: str, path, results: dict, result_file: bool, room: list) -> None:
    """The members of ``group`` (named ``prefix``...). Inside ``results`` an object HDF5 cannot
    open is left alone: a result a killed writer damaged, which reading it reports and compaction
    leaves out (a link that is not allowed is refused from its link record alone, which opens
    nothing)."""
    for key in _keys(group, prefix):
        name = prefix + key
        if result_file and not prefix and key != F.RESULTS:
            raise _refuse(path, f"{shown(name)} is not part of a result file (it holds {F.RESULTS} only)")
        if prefix == F.RESULTS + "/" and key.startswith("."):
            continue
        try:
            obj = _link(group, key, name, path)
            if obj is not None:
                _visit(obj, name, path, results, result_file, room)
        except _DAMAGE:
            if not name.startswith(F.RESULTS + "/"):
                raise


def _keys(group, prefix: str) -> list:
    try:
        return list(group.keys())
    except _DAMAGE:
        if not prefix.startswith(F.RESULTS + "/"):
            raise
        return []


def _visit(obj, name: str, path, results: dict, result_file: bool, room: list) -> None:
    in_results = name.startswith(F.RESULTS + "/")
    if isinstance(obj, h5py.Group):
        if in_results and name.count("/") != 1:
            raise _refuse(path, f"{shown(name)} is a group inside a result (a result holds datasets only)")
        _walk(obj, name + "/", path, results, result_file, room)
        return
    if name == F.RESULTS or (in_results and name.count("/") != 2):
        raise _refuse(path, f"{shown(name)} is a dataset where the format has a group")
    check_dataset(obj, name, path)
    room[0] -= obj.size * obj.dtype.itemsize
    if room[0] < 0:
        raise _refuse(path, f"dataset {shown(name)} of shape {obj.shape} claims more bytes than the file holds "
                            "(its chunks were never written)")
    if in_results:
        results[name] = obj.shape


def check_result_shapes(results: dict, n: int, path) -> None:
    """Every result dataset holds one value per vertex."""
    for name, shape in results.items():
        if shape != (n,):
            raise StoreError(f"{path}: dataset {shown(name)} has shape {shape}, but the store has {n} vertices; "
                             "the result is damaged (drop it, or compute it again)")
