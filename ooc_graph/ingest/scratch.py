"""The builder's scratch: spill files in a folder beside the output, removed on success, failure,
SIGTERM, and — when a process died without removing them (SIGKILL, power loss) — by the next
conversion into that folder.

Scratch folders are ``.NAME.build-<pid>-<random>`` folders of :mod:`ooc_graph.store.temporary`,
marked as this project's so that only they are ever swept. A store built in memory has its
scratch folder in the system's temporary folder, made only when something is spilled (most such
builds spill nothing, and making and removing a folder costs more than they do).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ooc_graph.store import temporary
from ooc_graph.store.writer import write_error


class Spill:
    """Append-only columns of ids (int64, or int32 where every id fits) and weights (in the
    store's weight type): held in memory (``in_memory``) or in files in a scratch folder.
    :meth:`to_disk` moves what memory holds into the files; appends then go there."""

    def __init__(self, folder: Path, name: str, weighted: bool, narrow: bool = False, weight_dtype=np.float64,
                 *, in_memory: bool = False):
        self.paths = {c: folder / f"{name}.{c}" for c in (("src", "dst", "w") if weighted else ("src", "dst"))}
        self.count = 0
        self.dtypes = {"src": np.dtype(np.int32 if narrow else np.int64), "w": np.dtype(weight_dtype)}
        self.dtypes["dst"] = self.dtypes["src"]
        self.pieces: list[dict] | None = [] if in_memory else None

    @property
    def in_memory(self) -> bool:
        return self.pieces is not None

    @property
    def nbytes(self) -> int:
        """Bytes the items take (in memory or on disk)."""
        if self.pieces is not None:
            return sum(v.nbytes for piece in self.pieces for v in piece.values())
        return self.count * sum(self.dtypes[c].itemsize for c in self.paths)

    def append(self, src, dst, w=None, *, fits_int32: bool = False, owned: bool = False):
        """Append items; in memory, ids are held as int32 where ``fits_int32`` says they all fit
        (read back in the spill's type). In memory the arrays are copied (the caller may reuse
        them) unless ``owned`` says they are the spill's to keep: then they are held as they are
        where they have the type held (else converted, once). An owned view keeps its whole base
        alive until the last view of it is let go: :attr:`nbytes` (the items' bytes) is then the
        memory held only where the views kept of a base, in this spill and others, cover it whole,
        as :func:`~.buckets.partition`'s parts of a chunk do."""
        cols = {"src": src, "dst": dst, "w": w}
        if self.pieces is not None:
            ids = np.dtype(np.int32) if fits_int32 else self.dtypes["src"]
            keep = np.asarray if owned else np.array
            self.pieces.append({c: keep(cols[c], dtype=ids if c != "w" else self.dtypes[c]) for c in self.paths})
        else:
            for c, p in self.paths.items():
                append_to(p, cols[c], self.dtypes[c])
        self.count += len(src)

    def to_disk(self) -> None:
        """Write what memory holds to the files and keep appending there."""
        if self.pieces is None:
            return
        pieces, self.pieces = self.pieces, None
        for c, p in self.paths.items():
            for piece in pieces:
                append_to(p, piece.pop(c), self.dtypes[c])
        del pieces

    def read(self, step: int, *, wide: bool = True):
        """Yield (src, dst, w-or-None) chunks of at most ``step`` items; ids as int64 with ``wide``,
        else as stored (in memory: int32 where a piece's ids fit, else the spill's type).

        Plain reads, not memory maps: mapped pages would count against the process's memory.
        """
        if self.count == 0:
            return
        if self.pieces is not None:
            for piece in self.pieces:
                for a in range(0, len(piece["src"]), step):
                    cols = {c: v[a:a + step] for c, v in piece.items()}
                    if wide:
                        cols["src"], cols["dst"] = (cols[c].astype(np.int64, copy=False) for c in ("src", "dst"))
                    yield cols["src"], cols["dst"], cols.get("w")
            return
        files = {c: open(p, "rb") for c, p in self.paths.items()}
        try:
            for a in range(0, self.count, step):
                k = min(step, self.count - a)
                cols = {}
                for c, f in files.items():
                    cols[c] = np.fromfile(f, dtype=self.dtypes[c], count=k)
                    if wide and c != "w":
                        cols[c] = cols[c].astype(np.int64, copy=False)
                yield cols["src"], cols["dst"], cols.get("w")
        finally:
            for f in files.values():
                f.close()

    def load(self):
        """Every item at once (ids as stored), then delete the files (or let go of the pieces)."""
        if self.count == 0:
            ids = np.zeros(0, self.dtypes["src"])
            return ids, ids.copy(), (np.zeros(0, self.dtypes["w"]) if "w" in self.paths else None)
        if self.pieces is not None:
            cols = {}
            for c in self.paths:  # one column at a time: the pieces go as their column is joined
                cols[c] = np.concatenate([piece.pop(c) for piece in self.pieces]).astype(self.dtypes[c], copy=False)
            self.pieces = []
            return cols["src"], cols["dst"], cols.get("w")
        src, dst, w = next(self.read(self.count, wide=False))
        self.remove()
        return src, dst, w

    def remove(self) -> None:
        """Delete the files or let go of the pieces (the build no longer needs them: keep the
        peak low)."""
        if self.pieces is not None:
            self.pieces = []
        for p in self.paths.values():
            p.unlink(missing_ok=True)


def make_scratch(folder: Path, name: str, *, create: bool = True) -> Path:
    """A new private scratch folder ``.NAME.build-<pid>-<random>`` in ``folder``; with
    ``create=False`` only its name, the folder being made by the first :func:`append_to`."""
    if not create:
        return temporary.name(folder, name, "build")
    return temporary.make(folder, name, "build")


def append_to(path: Path, values, dtype) -> None:
    """Append ``values`` as ``dtype`` to the scratch file ``path``, making its (marked, private)
    folder if it is not there yet."""
    try:
        f = open(path, "ab")
    except FileNotFoundError:
        temporary.ensure(path.parent)
        f = open(path, "ab")
    try:
        with f:  # not ndarray.tofile: it reports a full disk as "N requested and M written"
            f.write(memoryview(np.ascontiguousarray(values, dtype=dtype)).cast("B"))
    except OSError as err:
        raise write_error(err, path) from err
