"""Vectorised reading of whitespace/CSV text: blocks of bytes in, numeric columns out.

No Python loop runs per line on the good path: line structure is found with NumPy over the raw
bytes and numbers are parsed by ``numpy.fromstring``. Only when a block is malformed does a slow
scan run, to name the file, the line and the offending text.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
from pathlib import Path

import numpy as np

from ooc_graph.errors import InputError

_OPENERS = {".gz": gzip.open, ".xz": lzma.open, ".bz2": bz2.open}
_WS = np.zeros(256, dtype=bool)
_WS[[9, 10, 11, 12, 13, 32]] = True


def open_binary(path: Path):
    """Open a possibly compressed file (by suffix: .gz, .xz, .bz2) for binary reading."""
    try:
        return _OPENERS.get(path.suffix.lower(), open)(path, "rb")
    except FileNotFoundError as err:
        raise InputError("no such file", path=path) from err
    except IsADirectoryError as err:
        raise InputError("is a directory, not an edge file", path=path) from err


def stem(path: Path) -> Path:
    """The path without a compression suffix: ``g.mtx.gz`` → ``g.mtx``."""
    return path.with_suffix("") if path.suffix.lower() in _OPENERS else path


def blocks(f, block_bytes: int):
    """Yield ``(first_line_number, bytes)`` blocks that end on a line boundary."""
    line = 1
    rest = b""
    while True:
        data = f.read(block_bytes)
        if not data:
            if rest.strip():
                yield line, rest
            return
        data = rest + data
        cut = data.rfind(b"\n")
        if cut < 0:
            rest = data
            continue
        block, rest = data[:cut + 1], data[cut + 1:]
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
        tok_pos = np.flatnonzero(token_start)
        tok_line = np.searchsorted(ends, tok_pos, side="left")
        counts = np.bincount(tok_line, minlength=len(ends)).astype(np.int64)
        first_tok = np.full(len(ends), -1, np.int64)
        if tok_pos.size:
            is_first = np.concatenate([[True], tok_line[1:] != tok_line[:-1]])
            first_tok[tok_line[is_first]] = tok_pos[is_first]
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
            line = self.line_of(row)
            s, e = self.starts[self.data_lines[row]], self.ends[self.data_lines[row]]
            want = " or ".join(map(str, allowed))
            raise InputError(f"expected {want} columns, found {int(self.counts[self.data_lines[row]])}",
                             path=self.path, line=line, value=self.raw[s:e].decode(errors="replace").strip())

    def numbers(self, dtype) -> np.ndarray:
        """All tokens of the block parsed as ``dtype``; a malformed token is located and reported."""
        text = self.text()
        expected = int(self.counts.sum())
        try:
            values = np.fromstring(text, dtype=dtype, sep=" ")
        except ValueError:
            values = None
        if values is None or values.size != expected:
            self._locate_bad_token(dtype)
        return values

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
                                     value=tok.decode(errors="replace")) from None
        raise InputError("could not parse block", path=self.path, line=self.first_line)  # pragma: no cover


def header_lines(f, stop: re.Pattern, limit: int = 10_000):
    """Read lines until one matches ``stop``; returns (that line, lines consumed)."""
    for i in range(1, limit + 1):
        line = f.readline()
        if not line:
            return None, i
        if stop.match(line):
            return line, i
    return None, limit
