"""String vertex ids: edge files whose ids are text (usernames, URLs), networkx graphs with string
nodes and arrays of strings. The ids are sorted (by their UTF-8 bytes, which is Python's order of
the strings) and the chunks carry positions in that list: the store's vertices 0..n-1 are the
sorted labels (``Source.string_labels``), written as label bytes and offsets.

Files are read twice (the ids, then the edges) by the precise reader (:class:`~.text.Block`),
and the distinct ids are held in memory.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from ooc_graph.errors import InputError

from .text import MAX_LINE, Block, InputFile, blocks, clip

_NUMBER = re.compile(rb"[-+]?[0-9.eE+-]+")


def numeric(tokens) -> bool:
    """Whether every token looks like a number."""
    return all(_NUMBER.fullmatch(t) for t in tokens)


def first_lines(path: Path, delimiter: bytes | None, count: int, comments: bytes = b"#%") -> list:
    """The tokens of the first ``count`` lines holding data (comment lines skipped)."""
    out = []
    marks = [comments[i:i + 1] for i in range(len(comments))]
    with InputFile(path) as f:
        while len(out) < count:
            line = f.readline()
            if not line:
                break
            tokens = (line.replace(delimiter, b" ") if delimiter else line).split()
            if tokens and tokens[0][:1] not in marks:
                out.append(tokens)
    return out


def columns(blk: Block, cols) -> int:
    """The block's number of columns: one of ``cols`` and the same on every line."""
    blk.check_columns(cols)
    ncol = int(blk.counts[blk.data_lines[0]])
    if (blk.counts[blk.data_lines] != ncol).any():
        row = int(np.flatnonzero(blk.counts[blk.data_lines] != ncol)[0])
        raise InputError(f"expected {ncol} columns like the lines before, found "
                         f"{int(blk.counts[blk.data_lines[row]])}", path=blk.path, line=blk.line_of(row),
                         value=blk.line_text(row))
    return ncol


def _string_edges(f: InputFile, *, delimiter: bytes | None, first_line: int, block_bytes: int):
    """Chunks of (src, dst, w) from 'u v [w]' lines whose ids are any text without whitespace
    (or the delimiter): ids as byte strings (NumPy ``S``), weights as float64."""
    path = f.path
    with f:
        for line0, raw in blocks(f, block_bytes, path=path, max_line=MAX_LINE):
            if delimiter:
                raw = raw.replace(delimiter, b" ")
            blk = Block(path, line0 + first_line - 1, raw)
            if not blk.data_lines.size:
                continue
            ncol = columns(blk, (2, 3))
            tokens = blk.text().split()
            w = None
            if ncol == 3:
                try:
                    w = np.array(tokens[2::3]).astype(np.float64)
                except ValueError:
                    row = next(i for i, t in enumerate(tokens[2::3]) if not _is_number(t))
                    raise InputError("not a valid number", path=path, line=blk.line_of(row),
                                     value=clip(tokens[2 + 3 * row])) from None
            yield (np.array(tokens[0::ncol]), np.array(tokens[1::ncol]), w,
                   (lambda i, blk=blk: (path, blk.line_of(i))))


def _is_number(token: bytes) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def string_file_source(path: Path, *, delimiter: bytes | None, block_bytes: int, skip_first: bool = False):
    """A :class:`~.formats.Source` of a text edge file with string ids: one pass collects the
    ids, a second maps them to positions. ``skip_first``: the first line is a header."""
    from .formats import Source

    current: list[InputFile] = []

    def read():
        f = InputFile(path)
        if skip_first:
            f.readline()
        current[:] = [f]
        return _string_edges(f, delimiter=delimiter, first_line=2 if skip_first else 1, block_bytes=block_bytes)

    parts, held = [], 0
    for s, d, _, _ in read():
        parts.append(np.unique(np.concatenate([s, d])))
        held += len(parts[-1])
        if len(parts) > 8 or held > 1 << 22:
            parts = [np.unique(np.concatenate(parts))]
            held = len(parts[0])
    ids = np.unique(np.concatenate(parts)) if parts else np.zeros(0, "S1")
    try:
        labels = [v.decode("utf-8") for v in ids.tolist()]
    except UnicodeDecodeError as err:
        raise InputError("vertex id is not UTF-8 text", path=path, value=clip(err.object)) from None

    def chunks():
        for s, d, w, locate in read():
            yield np.searchsorted(ids, s), np.searchsorted(ids, d), w, locate
    return Source(chunks(), num_vertices=len(labels), string_labels=labels, info={"string_ids": True},
                  size=path.stat().st_size, position=lambda: current[0].position() if current else 0)


def string_array_source(obj):
    """A :class:`~.formats.Source` for an (m, 2|3) array or a (src, dst[, weight]) tuple whose ids
    are strings (sorted into the store's labels), else None."""
    from .formats import array_source

    if isinstance(obj, (tuple, list)):
        cols = [np.asarray(c) for c in obj]
    else:
        arr = np.asarray(obj)
        if arr.ndim != 2 or arr.shape[1] not in (2, 3) or arr.dtype.kind not in "USO":
            return None
        cols = [arr[:, i] for i in range(arr.shape[1])]
    if len(cols) not in (2, 3) or any(c.ndim != 1 for c in cols) or not any(_strings(c) for c in cols[:2]):
        return None  # array_source accepts it or says what is wrong
    if len(cols[0]) != len(cols[1]):
        raise InputError(f"array of string ids: columns have different lengths {[len(c) for c in cols]}")
    ids = [c.astype(str) for c in cols[:2]]
    labels = np.unique(np.concatenate(ids))
    mapped = [np.searchsorted(labels, c) for c in ids]
    rest = []
    if len(cols) == 3:
        try:
            rest = [np.asarray(cols[2], dtype=np.float64)]
        except (TypeError, ValueError) as err:
            raise InputError(f"array of string ids: weights must be numbers ({clip(err)})") from err
    source = array_source(tuple(mapped) + tuple(rest), name="array of string ids")
    source.string_labels, source.num_vertices = labels.tolist(), len(labels)
    return source


def _strings(c: np.ndarray) -> bool:
    return c.dtype.kind in "US" or (c.dtype.kind == "O" and c.size > 0 and isinstance(c.flat[0], str))


def networkx_string_ends(nodes, edges):
    """(sorted labels, source positions, destination positions) of a networkx graph whose nodes
    are all strings."""
    labels = sorted(nodes)
    index = {v: i for i, v in enumerate(labels)}
    src = np.fromiter((index[u] for u, _, _ in edges), np.int64, len(edges))
    dst = np.fromiter((index[v] for _, v, _ in edges), np.int64, len(edges))
    return labels, src, dst
