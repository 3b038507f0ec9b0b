"""Edge-file formats. Each reader yields chunks of edges for :class:`~.builder.GraphBuilder`.

A reader is a function ``read(path, opts) -> Source``: the source says what the file fixes
(vertex count, vertex list, directedness, weights) and iterates ``(src, dst, weight, locate)``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ooc_graph.errors import InputError, choice

from .text import Block, blocks, header_lines, open_binary, stem

BLOCK_BYTES = 64 << 20


@dataclass
class Source:
    chunks: Iterator
    weighted: bool | None = None        # None: the file does not say
    directed: bool | None = None
    num_vertices: int | None = None     # ids are 0..n-1 after the reader's offset
    labels: np.ndarray | None = None    # an explicit vertex list
    info: dict = field(default_factory=dict)
    string_labels: list | None = None   # string ids, sorted: the chunks' ids are positions in it


def _text_edges(path: Path, *, cols=(2, 3), comments=b"#%", delimiter: bytes | None = None,
                offset: int = 0, skip_prefix=None, f=None, first_line: int = 1, block_bytes=BLOCK_BYTES):
    """Chunks of (src, dst, w) from 'u v [w]' lines; ids shifted down by ``offset``."""
    f = f or open_binary(path)
    with f:
        for line0, raw in blocks(f, block_bytes):
            if delimiter:
                raw = raw.replace(delimiter, b" ")
            blk = Block(path, line0 + first_line - 1, raw, comments=comments, skip_prefix=skip_prefix)
            if not blk.data_lines.size:
                continue
            ncol = _columns(blk, cols, path)
            if ncol == 2:
                vals = blk.numbers(np.int64).reshape(-1, 2)
                src, dst, w = vals[:, 0], vals[:, 1], None
            else:
                vals = blk.numbers(np.float64).reshape(-1, 3)
                ids = vals[:, :2]
                bad = (ids != np.floor(ids)) | (np.abs(ids) >= 2.0**53)
                if bad.any():
                    row = int(np.flatnonzero(bad.any(axis=1))[0])
                    raise InputError("vertex id is not an integer below 2**53", path=path,
                                     line=blk.line_of(row), value=float(ids[row][bad[row]][0]))
                src, dst, w = ids[:, 0].astype(np.int64), ids[:, 1].astype(np.int64), vals[:, 2]
            if offset:
                src, dst = src - offset, dst - offset
            yield src, dst, w, (lambda i, blk=blk: (path, blk.line_of(i)))


def _columns(blk: Block, cols, path) -> int:
    """The block's number of columns, one of ``cols`` and the same on every line."""
    blk.check_columns(cols)
    ncol = int(blk.counts[blk.data_lines[0]])
    if (blk.counts[blk.data_lines] != ncol).any():
        row = int(np.flatnonzero(blk.counts[blk.data_lines] != ncol)[0])
        raise InputError(f"expected {ncol} columns like the lines before, found "
                         f"{int(blk.counts[blk.data_lines[row]])}", path=path, line=blk.line_of(row))
    return ncol


def _string_edges(path: Path, f, *, delimiter: bytes | None, first_line: int = 1, block_bytes=BLOCK_BYTES):
    """Chunks of (src, dst, w) from 'u v [w]' lines whose ids are any text without whitespace
    (or the delimiter): ids as byte strings (NumPy ``S``), weights as float64."""
    with f:
        for line0, raw in blocks(f, block_bytes):
            if delimiter:
                raw = raw.replace(delimiter, b" ")
            blk = Block(path, line0 + first_line - 1, raw)
            if not blk.data_lines.size:
                continue
            ncol = _columns(blk, (2, 3), path)
            tokens = blk.text().split()
            w = None
            if ncol == 3:
                try:
                    w = np.array(tokens[2::3]).astype(np.float64)
                except ValueError:
                    row = next(i for i, t in enumerate(tokens[2::3]) if not _is_number(t))
                    raise InputError("not a valid number", path=path, line=blk.line_of(row),
                                     value=tokens[2 + 3 * row].decode(errors="replace")) from None
            yield (np.array(tokens[0::ncol]), np.array(tokens[1::ncol]), w,
                   (lambda i, blk=blk: (path, blk.line_of(i))))


def _is_number(token: bytes) -> bool:
    try:
        float(token)
        return True
    except ValueError:
        return False


def _string_source(read, path: Path) -> Source:
    """Edges with string ids: one pass over ``read()`` collects the ids (sorted by their UTF-8
    bytes, which is Python's order of the strings), a second maps them to positions."""
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
        raise InputError("vertex id is not UTF-8 text", path=path, value=err.object) from None

    def chunks():
        for s, d, w, locate in read():
            yield np.searchsorted(ids, s), np.searchsorted(ids, d), w, locate
    return Source(chunks(), num_vertices=len(labels), string_labels=labels, info={"string_ids": True})


def _first_lines(path: Path, delimiter: bytes | None, count: int, comments=b"#%") -> list:
    """The tokens of the first ``count`` lines holding data (comment lines skipped)."""
    out = []
    with open_binary(path) as f:
        for line in f:
            tokens = (line.replace(delimiter, b" ") if delimiter else line).split()
            if tokens and tokens[0][:1] not in [comments[i:i + 1] for i in range(len(comments))]:
                out.append(tokens)
                if len(out) == count:
                    break
    return out


def _block_bytes(opts):
    """Text read per block: ~8 bytes per edge of the chunk budget, at most 64 MiB."""
    return int(min(BLOCK_BYTES, max(4096, 8 * opts.get("chunk_edges", BLOCK_BYTES))))


def _numeric(tokens) -> bool:
    return all(_NUMBER.fullmatch(t) for t in tokens)


_NUMBER = re.compile(rb"[-+]?[0-9.eE+-]+")


def read_edgelist(path: Path, opts: dict) -> Source:
    """SNAP-style: 'u v' or 'u v w' per line, whitespace separated, '#'/'%' comments. Ids are
    integers, or strings (``string_ids``; by default when the first line's ids are not numbers)."""
    delim = opts.get("delimiter")
    delim = delim.encode() if delim else None
    strings = opts.get("string_ids")
    if strings is None:
        first = _first_lines(path, delim, 1)
        strings = bool(first) and not _numeric(first[0][:2])
    if strings:
        return _string_source(lambda: _string_edges(path, open_binary(path), delimiter=delim,
                                                    block_bytes=_block_bytes(opts)), path)
    return Source(_text_edges(path, delimiter=delim, block_bytes=_block_bytes(opts)))


def read_csv(path: Path, opts: dict) -> Source:
    """Comma (or ``delimiter``) separated 'u,v[,w]'. Integer ids: a non-numeric first line is a
    header. String ids (``string_ids``; by default when the first two lines' ids are not numbers):
    the first line is a header, as pandas reads a CSV, unless ``header=False``."""
    delim = (opts.get("delimiter") or ",").encode()
    head = _first_lines(path, delim, 2, comments=b"")
    strings, header = opts.get("string_ids"), opts.get("header")
    if strings is None:
        strings = len(head) > 0 and not _numeric(head[0][:2]) and (len(head) == 1 or not _numeric(head[1][:2]))
    if header is None:
        header = strings or (bool(head) and not _numeric(head[0]))
    first = 2 if header else 1

    def opened():
        f = open_binary(path)
        if header:
            f.readline()
        return f
    info = {"header": delim.join(head[0]).decode(errors="replace") if header and head else None}
    if strings:
        source = _string_source(lambda: _string_edges(path, opened(), delimiter=delim, first_line=first), path)
        source.info.update(info)
        return source
    return Source(_text_edges(path, delimiter=delim, f=opened(), first_line=first), info=info)


_MM = re.compile(rb"%%MatrixMarket\s+(\w+)\s+(\w+)\s+(\w+)\s+(\w+)", re.I)


def read_mtx(path: Path, opts: dict) -> Source:
    """Matrix Market coordinate: pattern/integer/real, general/symmetric; entry (i, j) is arc i→j."""
    f = open_binary(path)
    banner = f.readline()
    m = _MM.match(banner)
    if not m:
        f.close()
        raise InputError("not a Matrix Market file (first line must start with %%MatrixMarket)", path=path,
                         line=1, value=banner[:80].decode(errors="replace").strip())
    obj, fmt, field_, sym = (g.decode().lower() for g in m.groups())
    for name, value, ok in (("object", obj, ("matrix",)), ("format", fmt, ("coordinate",)),
                            ("field", field_, ("pattern", "integer", "real", "double")),
                            ("symmetry", sym, ("general", "symmetric"))):
        if value not in ok:
            f.close()
            raise InputError(f"unsupported Matrix Market {name} {value!r} (supported: {', '.join(ok)})",
                             path=path, line=1)
    size_line, used = header_lines(f, re.compile(rb"^\s*[0-9]"))
    if size_line is None:
        f.close()
        raise InputError("missing the 'rows cols entries' size line", path=path)
    try:
        rows, cols, nnz = (int(t) for t in size_line.split())
    except ValueError:
        f.close()
        raise InputError("size line must be 'rows cols entries'", path=path, line=1 + used,
                         value=size_line.decode(errors="replace").strip()) from None
    weighted = field_ != "pattern"
    n = max(rows, cols)
    chunks = _text_edges(path, cols=(3,) if weighted else (2,), f=f, first_line=2 + used, offset=1)
    return Source(chunks, weighted=weighted, directed=(sym == "general"), num_vertices=n,
                  info={"entries": nnz, "field": field_, "symmetry": sym})


_GR_P = re.compile(rb"^p\s+(\w+)\s+([0-9]+)\s+([0-9]+)")


def read_gr(path: Path, opts: dict) -> Source:
    """PACE ('p tw n m', then 'u v') or DIMACS shortest-path ('p sp n m', then 'a u v w'); 1-based."""
    f = open_binary(path)
    line, used = header_lines(f, re.compile(rb"^p\s"))
    m = _GR_P.match(line or b"")
    if not m:
        f.close()
        raise InputError("missing the 'p <kind> <vertices> <edges>' problem line", path=path, line=used)
    kind, n = m.group(1).decode(), int(m.group(2))
    if kind == "sp":
        chunks = _text_edges(path, cols=(3,), comments=b"c", skip_prefix=b"a", f=f, first_line=1 + used, offset=1)
        return Source(chunks, weighted=True, directed=True, num_vertices=n, info={"problem": kind})
    chunks = _text_edges(path, cols=(2, 3), comments=b"c", f=f, first_line=1 + used, offset=1)
    return Source(chunks, weighted=None, directed=False, num_vertices=n, info={"problem": kind})


def _vertex_list(path: Path) -> np.ndarray:
    parts = []
    with open_binary(path) as f:
        for line0, raw in blocks(f, BLOCK_BYTES):
            blk = Block(path, line0, raw)
            if blk.data_lines.size:
                blk.check_columns((1,))
                parts.append(blk.numbers(np.int64))
    ids = np.concatenate(parts) if parts else np.zeros(0, np.int64)
    uniq = np.unique(ids)
    if uniq.size != ids.size:
        raise InputError("vertex list repeats a vertex", path=path, value=int(_first_repeat(ids)))
    return uniq


def _first_repeat(ids):
    s = np.sort(ids)
    return s[np.flatnonzero(s[1:] == s[:-1])[0]]


def read_ldbc(path: Path, opts: dict) -> Source:
    """Graphalytics ``.v``/``.e`` pair: give either file (or the common prefix)."""
    base = stem(path)
    if base.suffix in (".e", ".v"):
        base = base.with_suffix("")
    epath = next((p for p in (base.with_suffix(".e"), Path(str(base) + ".e")) if p.exists()), None)
    vpath = next((p for p in (base.with_suffix(".v"), Path(str(base) + ".v")) if p.exists()), None)
    if epath is None:
        raise InputError("no Graphalytics edge file (.e) beside it", path=path)
    if vpath is None:
        raise InputError("no Graphalytics vertex file (.v) beside it", path=path)
    return Source(_text_edges(epath), labels=_vertex_list(vpath),
                  info={"vertex_file": str(vpath), "edge_file": str(epath)})


def read_adj(path: Path, opts: dict) -> Source:
    """Adjacency lists, 'v n1 n2 ...' per line (Graphalytics validation inputs); every listed
    vertex exists, so a line with only 'v' is an isolated vertex."""
    def chunks():
        with open_binary(path) as f:
            for line0, raw in blocks(f, BLOCK_BYTES):
                blk = Block(path, line0, raw)
                if not blk.data_lines.size:
                    continue
                vals = blk.numbers(np.int64)
                counts = blk.counts[blk.data_lines]
                heads = np.zeros(counts.size, np.int64)
                np.cumsum(counts[:-1], out=heads[1:])
                is_head = np.zeros(vals.size, bool)
                is_head[heads] = True
                src = np.repeat(vals[heads], counts - 1)
                rows = np.repeat(np.arange(counts.size), counts - 1)
                yield src, vals[~is_head], None, (lambda i, blk=blk, rows=rows: (path, blk.line_of(int(rows[i]))))
    # The vertex set is every head and every neighbour: a first pass collects them.
    seen = []
    with open_binary(path) as f:
        for line0, raw in blocks(f, BLOCK_BYTES):
            blk = Block(path, line0, raw)
            if blk.data_lines.size:
                seen.append(np.unique(blk.numbers(np.int64)))
    labels = np.unique(np.concatenate(seen)) if seen else np.zeros(0, np.int64)
    return Source(chunks(), weighted=False, labels=labels)


def _binary(width: int):
    dtype = np.dtype(f"<i{width}")

    def read(path: Path, opts: dict) -> Source:
        if not path.exists():
            raise InputError("no such file", path=path)
        size = path.stat().st_size
        if size % (2 * width):
            raise InputError(f"file size {size} is not a multiple of {2 * width} bytes (pairs of "
                             f"int{8 * width}): truncated, or the wrong id width", path=path)
        pairs = size // (2 * width)
        step = max(1, int(opts.get("chunk_edges", 1 << 24)))

        def chunks():
            with open(path, "rb") as f:  # plain reads: a memory map's pages would count as ours
                for a in range(0, pairs, step):
                    block = np.fromfile(f, dtype=dtype, count=2 * min(step, pairs - a)).reshape(-1, 2)
                    yield (block[:, 0].astype(np.int64), block[:, 1].astype(np.int64), None,
                           (lambda i: (path, None)))
        return Source(chunks(), weighted=False, info={"pairs": pairs})
    read.__doc__ = f"Raw little-endian int{8 * width} pairs (src, dst), no header."
    return read


def read_npy(path: Path, opts: dict) -> Source:
    """A NumPy ``.npy`` array of shape (m, 2) integer ids or (m, 3) with a weight column."""
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as err:
        raise InputError("no such file", path=path) from err
    except ValueError as err:
        raise InputError(f"not a readable .npy array: {err}", path=path) from err
    return array_source(arr, name=str(path))


def array_source(arr, name="array", step=1 << 24) -> Source:
    """Edges from an (m, 2) or (m, 3) array, or a (src, dst[, weight]) tuple of 1-D arrays."""
    if isinstance(arr, (tuple, list)):
        cols = [np.asarray(c) for c in arr]
        if len(cols) not in (2, 3):
            raise InputError(f"{name}: expected (src, dst) or (src, dst, weight), got {len(cols)} arrays")
    else:
        arr = np.asarray(arr) if not isinstance(arr, np.memmap) else arr
        if arr.ndim != 2 or arr.shape[1] not in (2, 3):
            raise InputError(f"{name}: expected an array of shape (m, 2) or (m, 3), got {arr.shape}")
        cols = [arr[:, i] for i in range(arr.shape[1])]
    m = len(cols[0])
    if any(len(c) != m for c in cols):
        raise InputError(f"{name}: columns have different lengths {[len(c) for c in cols]}")

    def ids(c, a, b):
        c = np.asarray(c[a:b])
        if c.dtype.kind == "f":
            bad = c != np.floor(c)
            if bad.any():
                raise InputError(f"{name}: vertex id is not an integer", value=float(c[bad][0]))
            return c.astype(np.int64)
        if c.dtype.kind not in "iu":
            raise InputError(f"{name}: vertex ids must be integers (got dtype {c.dtype})")
        return c.astype(np.int64)

    def chunks():
        for a in range(0, m, step):
            b = min(a + step, m)
            w = np.asarray(cols[2][a:b], dtype=np.float64) if len(cols) == 3 else None
            yield ids(cols[0], a, b), ids(cols[1], a, b), w, (lambda i, a=a: (name, None))
    return Source(chunks(), weighted=len(cols) == 3)


READERS: dict[str, Callable] = {
    "edgelist": read_edgelist, "csv": read_csv, "mtx": read_mtx, "gr": read_gr, "ldbc": read_ldbc,
    "adj": read_adj, "bin32": _binary(4), "bin64": _binary(8), "npy": read_npy,
}
_SUFFIX = {".txt": "edgelist", ".el": "edgelist", ".edges": "edgelist", ".tsv": "edgelist", ".snap": "edgelist",
           ".csv": "csv", ".mtx": "mtx", ".mm": "mtx", ".gr": "gr", ".e": "ldbc", ".v": "ldbc",
           ".adj": "adj", ".bin32": "bin32", ".bin64": "bin64", ".npy": "npy"}


def detect_format(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in READERS:
            raise choice("input format", fmt, READERS)
        return fmt
    suffix = stem(path).suffix.lower()
    if suffix in (".bin", ".dat"):
        raise InputError("raw binary edge files need an explicit id width: format='bin32' or 'bin64'", path=path)
    return _SUFFIX.get(suffix, "edgelist")
