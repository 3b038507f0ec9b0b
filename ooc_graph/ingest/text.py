"""Vectorised reading of whitespace/CSV text: blocks of bytes in, numeric columns out.

No Python loop runs per line. A block of plain lines (the same number of numbers on each, no
comments past the block's head) is parsed by NumPy's C reader, ``numpy.loadtxt``, which checks
the columns and the int64 range itself (:func:`parse_plain`, ~9M edges/s on one core). Any other
block — comments, tags, or anything ``loadtxt`` refuses — is read by :class:`Block`, which finds
the line structure with NumPy over the raw bytes, parses with ``numpy.fromstring``, and, when the
block is malformed, names the file, the line and the offending text.
"""

from __future__ import annotations

import bz2
import errno
import gzip
import io
import lzma
import os
import re
import zlib
from pathlib import Path

import numpy as np

from ooc_graph.errors import InputError

_OPENERS = {".gz": lambda f: gzip.GzipFile(fileobj=f, mode="rb"), ".xz": lambda f: lzma.LZMAFile(f, "rb"),
            ".bz2": lambda f: bz2.BZ2File(f, "rb")}
NAMES = {".gz": "gzip", ".xz": "xz", ".bz2": "bzip2"}
# Leading bytes of each compressed format and of HDF5 (a store given as input by mistake).
_MAGIC = {b"\x1f\x8b": ".gz", b"\xfd7zXZ\x00": ".xz", b"BZh": ".bz2"}
HDF5_MAGIC = b"\x89HDF\r\n\x1a\n"
_BOM = b"\xef\xbb\xbf"
_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True
_INT64 = np.iinfo(np.int64)
# Longest line of a header or of a format with a few columns per line; longer is not that format.
MAX_LINE = 1 << 20


def check_input(path: Path) -> None:
    """A readable regular file (symlinks followed), or an :class:`InputError` naming it."""
    try:
        os.stat(path)
    except FileNotFoundError as err:
        raise InputError("no such file", path=path) from err
    except OSError as err:
        reason = "a symbolic link loop" if err.errno == errno.ELOOP else (err.strerror or str(err))
        raise InputError(f"cannot read the input: {reason}", path=path) from err
    if os.path.isdir(path):
        raise InputError("is a directory, not an edge file", path=path)
    if not os.access(path, os.R_OK):
        raise InputError("cannot read the input: permission denied", path=path)


def compression(path: Path) -> str | None:
    """``.gz``/``.xz``/``.bz2`` from the suffix, else from the file's first bytes, else None."""
    suffix = path.suffix.lower()
    if suffix in _OPENERS:
        return suffix
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError:
        return None
    return next((kind for magic, kind in _MAGIC.items() if head.startswith(magic)), None)


def is_hdf5(path: Path) -> bool:
    try:
        with open(path, "rb") as f:
            return f.read(8) == HDF5_MAGIC
    except OSError:
        return False


class InputFile:
    """An edge file opened for binary reading, decompressed by suffix or by its first bytes, with
    a UTF-8 byte-order mark skipped. Decompression failures become one-line :class:`InputError`s;
    :meth:`position` is the bytes read from disk so far (for progress)."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.kind = compression(self.path)
        try:
            self.raw = open(self.path, "rb")
        except FileNotFoundError as err:
            raise InputError("no such file", path=path) from err
        except IsADirectoryError as err:
            raise InputError("is a directory, not an edge file", path=path) from err
        except OSError as err:
            raise InputError(f"cannot read the input: {err.strerror or err}", path=path) from err
        try:
            self.f = _OPENERS[self.kind](self.raw) if self.kind else self.raw
            if self.read(3) != _BOM:
                self._call(self.f.seek, 0)
        except BaseException:
            self.raw.close()
            raise

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except (OSError, EOFError, zlib.error, lzma.LZMAError) as err:
            raise self._failure(err) from err

    def _failure(self, err) -> InputError:
        name = NAMES.get(self.kind)
        if isinstance(err, EOFError):
            return InputError(f"truncated: the {name or 'compressed'} data ends early", path=self.path)
        if name and not (isinstance(err, OSError) and err.errno is not None):
            return InputError(f"not a valid {name} file, or corrupted ({err})", path=self.path)
        return InputError(f"cannot read the input: {getattr(err, 'strerror', None) or err}", path=self.path)

    def read(self, n: int = -1) -> bytes:
        return self._call(self.f.read, n)

    def readline(self, limit: int = MAX_LINE) -> bytes:
        line = self._call(self.f.readline, limit)
        if len(line) >= limit and not line.endswith(b"\n"):
            raise InputError(f"line longer than {limit:,} bytes", path=self.path, value=clip(line))
        return line

    def position(self) -> int:
        try:
            return self.raw.tell()
        except (OSError, ValueError):  # closed
            return 0

    def close(self) -> None:
        if self.f is not self.raw:
            self.f.close()
        self.raw.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def open_binary(path: Path) -> InputFile:
    """Open a possibly compressed file (.gz, .xz, .bz2, by suffix or content) for binary reading."""
    return InputFile(path)


def stem(path: Path) -> Path:
    """The path without a compression suffix: ``g.mtx.gz`` → ``g.mtx``."""
    return path.with_suffix("") if path.suffix.lower() in _OPENERS else path


def clip(text, limit: int = 80) -> str:
    """At most ``limit`` characters of ``text`` (bytes decoded), saying how long it was when cut."""
    if not isinstance(text, (str, bytes, bytearray)):
        text = str(text)
    size = len(text)
    if isinstance(text, (bytes, bytearray)):
        text = bytes(text[:4 * limit]).decode(errors="replace")
    text = str(text).strip()
    return text if len(text) <= limit and size <= 4 * limit else f"{text[:limit]}... ({size:,} long)"


def real_weights(values, name: str) -> np.ndarray:
    """Weights as float64. Complex ones are refused: converting them would keep the real part
    and drop the rest without a word."""
    values = np.asarray(values)
    if values.dtype.kind == "c":
        raise InputError(f"{name}: weights are complex numbers (dtype {values.dtype}); a store holds real weights "
                         "(pass .real or abs() of them if that is what is meant)",
                         value=values.flat[0].item() if values.size else None)
    return np.asarray(values, dtype=np.float64)


def blocks(f, block_bytes: int, *, path=None, max_line: int | None = None):
    """Yield ``(first_line_number, bytes)`` blocks that end on a line boundary. A line longer than
    ``max_line`` bytes is an :class:`InputError` (the text is not what the format says)."""
    line = 1
    pending: list[bytes] = []  # a line longer than a block, in pieces (no quadratic joins)
    held = 0
    while True:
        data = f.read(block_bytes)
        if not data:
            rest = b"".join(pending)
            if rest.strip():
                yield line, rest
            return
        cut = data.rfind(b"\n")
        if cut < 0:
            pending.append(data)
            held += len(data)
            if max_line is not None and held > max_line:
                raise InputError(f"line longer than {max_line:,} bytes", path=path, line=line,
                                 value=clip(b"".join(pending[:1])))
            continue
        block = b"".join(pending + [data[:cut + 1]]) if pending else data[:cut + 1]
        pending, held = ([data[cut + 1:]], len(data) - cut - 1) if cut + 1 < len(data) else ([], 0)
        yield line, block
        line += block.count(b"\n")


class Block:
    """One block of text: its lines, which of them hold data, and how many tokens each has."""

    def __init__(self, path, first_line: int, raw: bytes, comments: bytes = b"#%", skip_prefix: bytes | None = None):
        self.path, self.first_line, self.raw = path, first_line, raw
        arr = np.frombuffer(raw, dtype=np.uint8)
        nl = np.flatnonzero(arr == 10)
        ends = nl if (arr.size and arr[-1] == 10) else np.append(nl, arr.size)
        starts = np.concatenate([[0], ends[:-1] + 1]).astype(np.int64) if ends.size else np.zeros(0, np.int64)
        ws = _WS[arr] if arr.size else np.zeros(0, bool)
        # Comment lines: first non-blank byte of the line is a comment character.
        token_start = ~ws & np.concatenate([[True], ws[:-1]]) if arr.size else np.zeros(0, bool)
        del ws
        tok_pos = np.flatnonzero(token_start)
        del token_start
        tok_line = np.searchsorted(ends, tok_pos, side="left")
        counts = np.bincount(tok_line, minlength=len(ends)).astype(np.int64)
        first_tok = np.full(len(ends), -1, np.int64)
        if tok_pos.size:
            is_first = np.concatenate([[True], tok_line[1:] != tok_line[:-1]])
            first_tok[tok_line[is_first]] = tok_pos[is_first]
        del tok_pos, tok_line
        has = first_tok >= 0
        lead = np.zeros(len(ends), np.uint8)
        lead[has] = arr[first_tok[has]]
        comment = np.isin(lead, np.frombuffer(comments, np.uint8)) & has
        self.starts, self.ends = starts, ends
        self.skip = comment
        if skip_prefix is not None:  # e.g. DIMACS 'a u v w': drop the leading tag token
            tagged = has & (lead == skip_prefix[0])
            counts = counts - tagged
            self.tag_pos = first_tok[tagged]
        else:
            self.tag_pos = None
        counts[comment] = 0
        self.counts = counts
        self.data_lines = np.flatnonzero(counts > 0)

    def line_of(self, data_row: int) -> int:
        """File line number (1-based) of the data_row-th data line of the block."""
        return self.first_line + int(self.data_lines[data_row])

    def line_text(self, data_row: int) -> str:
        li = self.data_lines[data_row]
        return clip(self.raw[self.starts[li]:self.ends[li]])

    def text(self) -> bytes:
        """The block with comment lines blanked (and tags removed), ready for numpy.fromstring."""
        if not self.skip.any() and self.tag_pos is None:
            return self.raw
        arr = np.frombuffer(self.raw, dtype=np.uint8).copy()
        if self.skip.any():  # blank out comment lines: +1 at each start, -1 at each end
            mark = np.zeros(arr.size + 1, np.int64)
            np.add.at(mark, self.starts[self.skip], 1)
            np.add.at(mark, self.ends[self.skip], -1)
            arr[np.cumsum(mark[:-1]) > 0] = 32
        if self.tag_pos is not None and self.tag_pos.size:
            arr[self.tag_pos] = 32
        return arr.tobytes()

    def check_columns(self, allowed: tuple[int, ...]):
        bad = ~np.isin(self.counts[self.data_lines], allowed)
        if bad.any():
            row = int(np.flatnonzero(bad)[0])
            want = " or ".join(map(str, allowed))
            raise InputError(f"expected {want} columns, found {int(self.counts[self.data_lines[row]])}",
                             path=self.path, line=self.line_of(row), value=self.line_text(row))

    def numbers(self, dtype) -> np.ndarray:
        """All tokens of the block parsed as ``dtype``; a malformed token is located and reported.
        Integers outside int64 (which the parser clamps to its limits) are an error too."""
        text = self.text()
        expected = int(self.counts.sum())
        try:
            values = np.fromstring(text, dtype=dtype, sep=" ")
        except ValueError:
            values = None
        if values is None or values.size != expected:
            self._locate_bad_token(dtype)
        if np.dtype(dtype) == np.int64 and values.size:
            at_limit = (values == _INT64.max) | (values == _INT64.min)
            if at_limit.any():
                self._check_limits(np.flatnonzero(at_limit))
        return values

    def _token(self, index: int):
        """(data row, token text) of the index-th token of the block's data."""
        row = int(np.searchsorted(np.cumsum(self.counts[self.data_lines]), index, side="right"))
        li = self.data_lines[row]
        before = int(self.counts[self.data_lines[:row]].sum())
        return row, self.text()[self.starts[li]:self.ends[li]].split()[index - before]

    def _check_limits(self, indices):
        for i in indices.tolist():
            row, tok = self._token(i)
            if not _INT64.min <= int(tok) <= _INT64.max:
                raise InputError("vertex id outside the 64-bit signed range [-2**63, 2**63-1]", path=self.path,
                                 line=self.line_of(row), value=clip(tok))

    def _locate_bad_token(self, dtype):
        conv = float if np.dtype(dtype).kind == "f" else int
        text = self.text()
        for row, li in enumerate(self.data_lines):
            for tok in text[self.starts[li]:self.ends[li]].split():
                try:
                    conv(tok)
                except ValueError:
                    kind = "number" if conv is float else "integer vertex id"
                    raise InputError(f"not a valid {kind}", path=self.path, line=self.line_of(row),
                                     value=clip(tok)) from None
        raise InputError("could not parse block", path=self.path, line=self.first_line)  # pragma: no cover


_WEIGHTED = np.dtype([("src", "<i8"), ("dst", "<i8"), ("w", "<f8")])


def parse_plain(raw: bytes, cols: tuple[int, ...], comments: bytes = b"#%"):
    r"""``(src, dst, w or None)`` of a block of plain lines, or None when the block is anything
    else: comment lines past its head, a line whose count of numbers differs from the first's or
    is not in ``cols``, a token that is not a number (an id that is not an integer, or outside
    int64). :class:`Block` then reads it, or names the line at fault.

    >>> parse_plain(b"# head\n0 1\n2 3\n", (2, 3))[0]
    array([0, 2])
    >>> parse_plain(b"0 1\n2 x\n", (2, 3)) is None
    True
    """
    body = raw[_head(raw, comments):]
    if any(c in body for c in comments):
        return None
    end = body.find(b"\n")
    ncol = len(body[:end if end >= 0 else len(body)].split())
    if ncol not in cols or ncol not in (2, 3):
        return None
    try:
        values = np.loadtxt(io.BytesIO(body), dtype=np.int64 if ncol == 2 else _WEIGHTED, comments=None,
                            ndmin=2 if ncol == 2 else 1)
    except (ValueError, OverflowError):
        return None
    if ncol == 2:
        return (values[:, 0].copy(), values[:, 1].copy(), None) if values.shape[1] == 2 else None
    return values["src"].copy(), values["dst"].copy(), values["w"].copy()


def parse_arrow(raw: bytes, cols: tuple[int, ...], comments: bytes = b"#%"):
    """:func:`parse_plain` with pyarrow's CSV reader (on all cores) where pyarrow is installed and
    the lines are numbers separated by one tab or one space; None otherwise, or for anything the
    reader refuses (then ``loadtxt``, then :class:`Block`, read the block)."""
    try:
        import pyarrow as pa
        import pyarrow.csv as pc
    except ImportError:
        return None
    body = raw[_head(raw, comments):]
    if any(c in body for c in comments):
        return None
    end = body.find(b"\n")
    first = body[:end if end >= 0 else len(body)].rstrip(b"\r")
    delimiter = "\t" if b"\t" in first else " "
    ncol = len(first.split(delimiter.encode()))
    if ncol not in cols or ncol not in (2, 3) or ncol != len(first.split()):
        return None
    types = {"f0": pa.int64(), "f1": pa.int64(), "f2": pa.float64()}
    try:
        table = pc.read_csv(
            pa.py_buffer(body),
            read_options=pc.ReadOptions(autogenerate_column_names=True, use_threads=True,
                                        block_size=max(1 << 20, len(body) // (4 * (os.cpu_count() or 1)))),
            parse_options=pc.ParseOptions(delimiter=delimiter, quote_char=False, ignore_empty_lines=True),
            convert_options=pc.ConvertOptions(column_types={k: types[k] for k in list(types)[:ncol]},
                                              null_values=[], strings_can_be_null=False,
                                              quoted_strings_can_be_null=False),
            memory_pool=pa.system_memory_pool())  # malloc's: freed pages go back (builder's malloc_trim)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, ValueError):
        return None
    if table.num_columns != ncol or any(c.null_count for c in table.columns):
        return None
    src, dst = (table.column(i).to_numpy() for i in (0, 1))
    return src, dst, (table.column(2).to_numpy() if ncol == 3 else None)


def _head(raw: bytes, comments: bytes) -> int:
    """Offset of the first line of ``raw`` that is neither blank nor a comment."""
    pos = 0
    while pos < len(raw):
        end = raw.find(b"\n", pos)
        end = len(raw) if end < 0 else end
        line = raw[pos:end].strip()
        if line and line[0] not in comments:
            return pos
        pos = end + 1
    return pos


def header_lines(f, stop: re.Pattern, limit: int = 10_000):
    """Read lines until one matches ``stop``; returns (that line, lines consumed)."""
    for i in range(1, limit + 1):
        line = f.readline()
        if not line:
            return None, i
        if stop.match(line):
            return line, i
    return None, limit
