"""Edge-file formats. Each reader yields chunks of edges for :class:`~.builder.GraphBuilder`.

A reader is a function ``read(path, opts) -> Source``: the source says what the file fixes
(vertex count, vertex list, directedness, weights) and iterates ``(src, dst, weight, locate)``.
"""

from __future__ import annotations

import re
from dataclasses import field
from pathlib import Path
from typing import Callable, Iterator

import numpy as np

from ooc_graph import config
from ooc_graph._records import record
from ooc_graph.errors import InputError, choice

from .strings import columns, first_lines, numeric, string_file_source
from .text import (MAX_LINE, NAMES, Block, InputFile, blocks, clip, compression, header_lines, is_hdf5,
                   parse_arrow, parse_plain, real_weights, stem)

_INT64_MAX = np.iinfo(np.int64).max


@record
class Source:
    chunks: Iterator
    weighted: bool | None = None        # None: the file does not say
    directed: bool | None = None
    num_vertices: int | None = None     # ids are 0..n-1 after the reader's offset
    labels: np.ndarray | None = None    # an explicit vertex list
    info: dict = field(default_factory=dict)
    size: int | None = None             # for progress: total in ``unit``s, and how far reading is
    position: Callable[[], int] | None = None
    unit: str = "B"
    string_labels: list | None = None   # string ids, sorted: the chunks' ids are positions in it


def _file_progress(f: InputFile) -> dict:
    """Progress of a text reader: bytes of the file on disk (compressed or not) read so far."""
    return {"size": f.path.stat().st_size, "position": f.position}


def _text_edges(f: InputFile, *, cols=(2, 3), comments=b"#%", delimiter: bytes | None = None,
                offset: int = 0, skip_prefix=None, first_line: int = 1, block_bytes=None, arrow=True):
    """Chunks of (src, dst, w) from 'u v [w]' lines; ids shifted down by ``offset``. Plain blocks
    are parsed by pyarrow's CSV reader where installed and ``arrow`` (:func:`~.text.parse_arrow`) or
    ``numpy.loadtxt`` (:func:`~.text.parse_plain`), others by :class:`~.text.Block`,
    which also locates a line for the builder's errors (built only when one is needed)."""
    path = f.path
    block_bytes = config.get().ingest.text_block_bytes if block_bytes is None else block_bytes
    with f:
        for line0, raw in blocks(f, block_bytes, path=path, max_line=MAX_LINE):
            if delimiter:
                raw = raw.replace(delimiter, b" ")
            start = line0 + first_line - 1
            plain = None if skip_prefix is not None else ((arrow and parse_arrow(raw, cols, comments))
                                                          or parse_plain(raw, cols, comments))
            if plain is not None:
                src, dst, w = plain
                if not len(src):
                    continue

                def locate(i, raw=raw, start=start):
                    return path, Block(path, start, raw, comments=comments).line_of(i)
            else:
                src, dst, w, locate = _block_edges(Block(path, start, raw, comments=comments,
                                                         skip_prefix=skip_prefix), cols)
                if src is None:
                    continue
            if offset:
                src, dst = src - offset, dst - offset
            yield src, dst, w, locate


def _block_edges(blk: Block, cols):
    """(src, dst, w, locate) of a block read by :class:`~.text.Block` (None when it has no data)."""
    path = blk.path
    if not blk.data_lines.size:
        return None, None, None, None
    ncol = columns(blk, cols)
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
    return src, dst, w, (lambda i: (path, blk.line_of(i)))


def _reading(opts) -> dict:
    """How a text reader reads: bytes per block, and whether pyarrow may parse (``reader_options``)."""
    return {"block_bytes": _block_bytes(opts), "arrow": opts.get("arrow", True)}


def _block_bytes(opts):
    """Text read per block: from the reader's share of the budget, at most config
    ``ingest.text_block_bytes`` (64 MiB)."""
    most = config.get().ingest.text_block_bytes
    return int(min(most, max(4096, opts.get("block_bytes", most))))


def _declared(chunks, path: Path, declared: int, what: str):
    """Pass the chunks on; the count of edges must be what the header declares (the file is
    read to its end to name the count found)."""
    found = 0
    for item in chunks:
        found += len(item[0])
        if found > declared:
            found += sum(len(rest[0]) for rest in chunks)
            break
        yield item
    if found != declared:
        raise InputError(f"{what} declared in the header: {declared:,}; found in the file: {found:,}", path=path)


# SNAP's header says which graph a file holds: "# Undirected graph: ../../data/output/com-
# friendster.ungraph.txt", "# Directed graph (each unordered pair of nodes is saved once): Wiki-Vote.txt";
# the copies SNAPDatasets.jl writes end their first line with it: "# email-enron from SNAP (via
# SNAPDatasets.jl), undirected".
_SNAP_KIND = re.compile(rb"^[#%]\s*(directed|undirected)\s+graph\b|^[#%].*,\s*(directed|undirected)$", re.IGNORECASE)
_HEADER_LINES = 64  # comment lines at the top looked at for it


def snap_directed(path: Path) -> bool | None:
    """Whether the comment lines at the top of an edge list say ``Directed graph`` (True) or
    ``Undirected graph`` (False), as SNAP's files do (or end a line with ``, directed`` /
    ``, undirected``, as SNAPDatasets.jl's copies do); None where they say neither."""
    with InputFile(path) as f:
        for _ in range(_HEADER_LINES):
            raw = f.readline()
            line = raw.strip()
            if not raw or line and line[:1] not in b"#%":
                return None  # the end, or past the comments
            m = _SNAP_KIND.match(line)
            if m:
                return (m.group(1) or m.group(2)).lower() == b"directed"
    return None


def read_edgelist(path: Path, opts: dict) -> Source:
    """SNAP-style: 'u v' or 'u v w' per line, whitespace separated, '#'/'%' comments. Ids are
    integers, or strings (``string_ids``; by default when the first line's ids are not numbers).
    A SNAP header's ``# Directed graph`` / ``# Undirected graph`` says whether it is directed."""
    directed = snap_directed(path)
    delim = opts.get("delimiter")
    delim = delim.encode() if delim else None
    strings = opts.get("string_ids")
    if delim:  # ids guessed to be strings only because the delimiter is wrong: refused
        check_delimiter(path, delim, comments=b"#%", header=strings is None)
    if strings is None:
        first = first_lines(path, delim, 1)
        strings = bool(first) and not numeric(first[0][:2])
    if strings:
        source = string_file_source(path, delimiter=delim, block_bytes=_block_bytes(opts))
        source.directed = directed
        return source
    f = InputFile(path)
    return Source(_text_edges(f, delimiter=delim, **_reading(opts)), directed=directed, **_file_progress(f))


def read_csv(path: Path, opts: dict) -> Source:
    """Comma (or ``delimiter``) separated 'u,v[,w]'. Integer ids: a non-numeric first line is a
    header. String ids (``string_ids``; by default when the first two lines' ids are not numbers):
    the first line is a header, as pandas reads a CSV, unless ``header=False``."""
    delim = (opts.get("delimiter") or ",").encode()
    head = first_lines(path, delim, 2, comments=b"")
    strings, header = opts.get("string_ids"), opts.get("header")
    if strings is None:
        strings = bool(head) and not numeric(head[0][:2]) and (len(head) == 1 or not numeric(head[1][:2]))
    f = InputFile(path)
    first = f.readline()
    check_delimiter(path, delim, first, header=header is None and opts.get("string_ids") is not True)
    if header is None:
        header = strings or (bool(first.strip()) and not numeric(first.replace(delim, b" ").split()))
    info = {"header": clip(first) if header else None}
    if strings:
        f.close()
        source = string_file_source(path, delimiter=delim, block_bytes=_block_bytes(opts), skip_first=header)
        source.info.update(info)
        return source
    if not header:
        f.close()
        f = InputFile(path)
    return Source(_text_edges(f, delimiter=delim, first_line=2 if header else 1, **_reading(opts)),
                  info=info, **_file_progress(f))


# Delimiters tried on a first line that the given one leaves non-numeric (see check_delimiter).
_DELIMITERS = (b",", b";", b"\t", b"|", b":", b" ")


def check_delimiter(path: Path, delim: bytes, first: bytes | None = None, *, header: bool = False,
                    comments: bytes = b"") -> None:
    """Refuse a delimiter that is not the file's, before its first line is read as anything: one
    that does not split the first line (``first``, else the first line not a comment) into two
    fields at least (whitespace separates too), or, where the line would be guessed to be a
    header or string ids (``header``) because it is not numbers, one under which another common
    delimiter would make it an edge."""
    line_no = 1
    if first is None:
        with InputFile(path) as f:
            for line_no, first in enumerate(iter(f.readline, b""), 1):
                if first.strip() and first.lstrip()[:1] not in [comments[i:i + 1] for i in range(len(comments))]:
                    break
            else:
                return
    text = first.strip()
    if not text:
        return
    fields = text.replace(delim, b" ").split()
    given = delim.decode(errors="replace")
    if len(fields) < 2:
        raise InputError(f"the delimiter {given!r} does not split the line into two fields or more: it is not "
                         "this file's (pass the file's with --delimiter, or delimiter=)", path=path, line=line_no,
                         value=clip(first))
    if header and not numeric(fields):
        for other in _DELIMITERS:
            split = text.replace(other, b" ").split()
            if other != delim and other in text and len(split) >= 2 and numeric(split):
                raise InputError(f"with the delimiter {given!r} the line is not numbers, so it would be read as a "
                                 f"header (or string ids), but with {other.decode()!r} it is an edge: pass --delimiter "
                                 f"{other.decode()!r} (or header=/string_ids= where that is meant)", path=path,
                                 line=line_no, value=clip(first))


_MM = re.compile(rb"%%MatrixMarket\s+(\w+)\s+(\w+)\s+(\w+)\s+(\w+)", re.I)


def read_mtx(path: Path, opts: dict) -> Source:
    """Matrix Market coordinate: pattern/integer/real, general/symmetric; entry (i, j) is arc i→j."""
    f = InputFile(path)
    banner = f.readline()
    m = _MM.match(banner)
    if not m:
        f.close()
        raise InputError("not a Matrix Market file (first line must start with %%MatrixMarket)", path=path,
                         line=1, value=clip(banner))
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
                         value=clip(size_line)) from None
    weighted = field_ != "pattern"
    n = max(rows, cols)
    chunks = _text_edges(f, cols=(3,) if weighted else (2,), first_line=2 + used, offset=1,
                         **_reading(opts))
    return Source(_declared(chunks, path, nnz, "entries"), weighted=weighted, directed=(sym == "general"),
                  num_vertices=n, info={"entries": nnz, "field": field_, "symmetry": sym}, **_file_progress(f))


_GR_P = re.compile(rb"^p\s+(\w+)\s+([0-9]+)\s+([0-9]+)\s*$")


def read_gr(path: Path, opts: dict) -> Source:
    """PACE ('p tw n m', then 'u v') or DIMACS shortest-path ('p sp n m', then 'a u v w'); 1-based."""
    f = InputFile(path)
    line, used = header_lines(f, re.compile(rb"^p\s"))
    m = _GR_P.match(line or b"")
    if not m:
        f.close()
        raise InputError("missing the 'p <kind> <vertices> <edges>' problem line", path=path, line=used,
                         value=None if line is None else clip(line))
    kind, n, m_ = m.group(1).decode(), int(m.group(2)), int(m.group(3))
    bb = _block_bytes(opts)
    if kind == "sp":
        chunks = _text_edges(f, cols=(3,), comments=b"c", skip_prefix=b"a", first_line=1 + used, offset=1,
                             block_bytes=bb)
        return Source(_declared(chunks, path, m_, "arcs"), weighted=True, directed=True, num_vertices=n,
                      info={"problem": kind}, **_file_progress(f))
    chunks = _text_edges(f, cols=(2, 3), comments=b"c", first_line=1 + used, offset=1, **_reading(opts))
    return Source(_declared(chunks, path, m_, "edges"), weighted=None, directed=False, num_vertices=n,
                  info={"problem": kind}, **_file_progress(f))


def _vertex_list(path: Path, block_bytes: int) -> np.ndarray:
    parts = []
    with InputFile(path) as f:
        for line0, raw in blocks(f, block_bytes, path=path, max_line=MAX_LINE):
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


def ldbc_files(path: Path) -> tuple[Path, Path]:
    """The (edge file, vertex file) of a Graphalytics pair, from either file or their prefix."""
    base = stem(path)
    if base.suffix in (".e", ".v"):
        base = base.with_suffix("")
    epath = next((p for p in (base.with_suffix(".e"), Path(str(base) + ".e")) if p.exists()), None)
    vpath = next((p for p in (base.with_suffix(".v"), Path(str(base) + ".v")) if p.exists()), None)
    if epath is None:
        raise InputError("no Graphalytics edge file (.e) beside it", path=path)
    if vpath is None:
        raise InputError("no Graphalytics vertex file (.v) beside it", path=path)
    return epath, vpath


def read_ldbc(path: Path, opts: dict) -> Source:
    """Graphalytics ``.v``/``.e`` pair: give either file (or the common prefix)."""
    epath, vpath = ldbc_files(path)
    labels = _vertex_list(vpath, _block_bytes(opts))
    f = InputFile(epath)
    return Source(_text_edges(f, **_reading(opts)), labels=labels,
                  info={"vertex_file": str(vpath), "edge_file": str(epath)}, **_file_progress(f))


def read_adj(path: Path, opts: dict) -> Source:
    """Adjacency lists, 'v n1 n2 ...' per line (Graphalytics validation inputs); every listed
    vertex exists, so a line with only 'v' is an isolated vertex."""
    bb = _block_bytes(opts)
    f = InputFile(path)

    def chunks():
        with f:
            for line0, raw in blocks(f, bb, path=path):
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
    with InputFile(path) as first:
        for line0, raw in blocks(first, bb, path=path):
            blk = Block(path, line0, raw)
            if blk.data_lines.size:
                seen.append(np.unique(blk.numbers(np.int64)))
                if len(seen) > 8:
                    seen = [np.unique(np.concatenate(seen))]
    labels = np.unique(np.concatenate(seen)) if seen else np.zeros(0, np.int64)
    return Source(chunks(), weighted=False, labels=labels, **_file_progress(f))


def _binary(width: int):
    dtype = np.dtype(f"<i{width}")

    def read(path: Path, opts: dict) -> Source:
        if not path.exists():
            raise InputError("no such file", path=path)
        if compression(path):
            raise InputError(f"raw int{8 * width} pairs cannot be read compressed: decompress the file first",
                             path=path)
        size = path.stat().st_size
        if size % (2 * width):
            raise InputError(f"file size {size} is not a multiple of {2 * width} bytes (pairs of "
                             f"int{8 * width}): truncated, or the wrong id width", path=path)
        pairs = size // (2 * width)
        step = max(1, int(opts.get("chunk_edges", 1 << 24)))
        done = [0]

        def chunks():
            with open(path, "rb") as f:  # plain reads: a memory map's pages would count as ours
                for a in range(0, pairs, step):
                    block = np.fromfile(f, dtype=dtype, count=2 * min(step, pairs - a)).reshape(-1, 2)
                    done[0] = f.tell()
                    yield block[:, 0], block[:, 1], None, (lambda i: (path, None))
        return Source(chunks(), weighted=False, info={"pairs": pairs}, size=size, position=lambda: done[0])
    read.__doc__ = f"Raw little-endian int{8 * width} pairs (src, dst), no header."
    return read


def read_npy(path: Path, opts: dict) -> Source:
    """A NumPy ``.npy`` array of shape (m, 2) integer ids or (m, 3) with a weight column."""
    try:
        arr = np.load(path, mmap_mode="r", allow_pickle=False)
    except FileNotFoundError as err:
        raise InputError("no such file", path=path) from err
    except (ValueError, OSError, EOFError) as err:
        raise InputError(f"not a readable .npy array: {clip(err)}", path=path) from err
    return array_source(arr, name=str(path))


def array_source(arr, name="array", step=1 << 24) -> Source:
    """Edges from an (m, 2) or (m, 3) array, or a (src, dst[, weight]) tuple of 1-D arrays."""
    if isinstance(arr, (tuple, list)):
        cols = [np.asarray(c) for c in (arr[:2] if len(arr) == 3 and arr[2] is None else arr)]  # (src, dst, None)
        if len(cols) not in (2, 3):
            raise InputError(f"{name}: expected (src, dst) or (src, dst, weight), got {len(cols)} arrays")
        if any(c.ndim != 1 for c in cols):
            raise InputError(f"{name}: expected 1-D arrays (src, dst[, weight]), got shapes {[c.shape for c in cols]}")
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
            bad = ~((c == np.floor(c)) & (c >= -2.0**63) & (c < 2.0**63))  # NaN and inf included
            if bad.any():
                raise InputError(f"{name}: vertex id is not an integer in the 64-bit signed range",
                                 value=float(c[bad][0]))
            return c.astype(np.int64)
        if c.dtype.kind not in "iu":
            raise InputError(f"{name}: vertex ids must be integers (got dtype {c.dtype})")
        if c.dtype == np.uint64 and c.size and int(c.max()) > _INT64_MAX:
            raise InputError(f"{name}: vertex id above 2**63-1, the largest the store holds", value=int(c.max()))
        return c.astype(np.int64)

    def weights(c, a, b):
        try:
            return real_weights(c[a:b], name)
        except (TypeError, ValueError) as err:
            raise InputError(f"{name}: weights must be numbers ({clip(err)})") from err

    def chunks():
        for a in range(0, m, step):
            b = min(a + step, m)
            w = weights(cols[2], a, b) if len(cols) == 3 else None
            yield ids(cols[0], a, b), ids(cols[1], a, b), w, (lambda i, a=a: (name, None))
    done = [0]

    def counted():
        for item in chunks():
            done[0] += len(item[0])
            yield item
    return Source(counted(), weighted=len(cols) == 3, size=m, position=lambda: done[0], unit="edge")


READERS: dict[str, Callable] = {
    "edgelist": read_edgelist, "csv": read_csv, "mtx": read_mtx, "gr": read_gr, "ldbc": read_ldbc,
    "adj": read_adj, "bin32": _binary(4), "bin64": _binary(8), "npy": read_npy,
}
_SUFFIX = {".txt": "edgelist", ".el": "edgelist", ".edges": "edgelist", ".tsv": "edgelist", ".snap": "edgelist",
           ".csv": "csv", ".mtx": "mtx", ".mm": "mtx", ".gr": "gr", ".e": "ldbc", ".v": "ldbc",
           ".adj": "adj", ".bin32": "bin32", ".bin64": "bin64", ".npy": "npy"}


def input_files(path: Path, fmt: str) -> list[Path]:
    """The files a reader of ``fmt`` reads for ``path`` (both of a Graphalytics pair)."""
    return list(ldbc_files(path)) if fmt == "ldbc" else [path]


def detect_format(path: Path, fmt: str | None) -> str:
    if fmt is not None:
        if fmt not in READERS:
            raise choice("input format", fmt, READERS)
        found = fmt
    else:
        suffix = stem(path).suffix.lower()
        if suffix in (".bin", ".dat"):
            packed = compression(path)
            raise InputError(f"the suffix {suffix} does not say the format"
                             + (f" (the file is {NAMES[packed]}-compressed)" if packed else "")
                             + ": pass format='edgelist' (--format edgelist) for text lines 'u v [w]' (compressed or "
                             "not), or format='bin32' or 'bin64' for raw little-endian int32/int64 pairs", path=path)
        found = _SUFFIX.get(suffix, "edgelist")
    if found not in ("npy",) and is_hdf5(path):
        raise InputError("is an HDF5 file, not an edge file (a graph store? open it with ooc_graph.open)",
                         path=path)
    return found
