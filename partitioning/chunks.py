"""Cutting a range of the CEL into the chunks a pass streams, and what each chunk covers.

Chunks are runs of CEL arcs; where their length is a multiple of the store's chunk length they are
cut on its grid, so that each is whole HDF5 chunks. A chunk may span several blocks and
sub-graphs: :func:`chunk_intervals` gives the source intervals it holds arcs from (a pass skips a
chunk none of whose sources changed) and its first and last sub-graph.
"""

from __future__ import annotations

import numpy as np


def cut(start: int, stop: int, chunk: int, grid: int) -> list:
    """Chunks of at most ``chunk`` arcs covering [start, stop); when ``chunk`` is a multiple of
    the store's chunk length ``grid``, cut on its grid, so that each chunk is whole HDF5 chunks
    (a worker's range may start and end mid-chunk).

    >>> cut(150, 1000, 300, 100)
    [(150, 200), (200, 500), (500, 800), (800, 1000)]
    """
    if start >= stop:
        return []
    if chunk % grid == 0 and start % grid:
        cuts = [start] + list(range((start // grid + 1) * grid, stop, chunk))
    else:
        cuts = list(range(start, stop, chunk))
    return [(a, min(b, stop)) for a, b in zip(cuts, cuts[1:] + [stop])]


def chunk_intervals(block_offsets: np.ndarray, block_src: np.ndarray, block_dst: np.ndarray, chunks: list) -> tuple:
    """For each chunk ``(a, b)`` of ``chunks``: the source intervals it holds arcs from (sorted),
    and its first and last sub-graph (destination interval), from the block table (``block_offsets``:
    the first arc of each block, and the end)."""
    first = np.searchsorted(block_offsets, [a for a, _ in chunks], side="right") - 1
    last = np.searchsorted(block_offsets, [b for _, b in chunks], side="left")
    # A mask of the intervals, not np.unique's sort of each chunk's blocks: 50-80 ms of an engine's
    # set-up on R-MAT-25 (a 1xH100 host's first PageRank), ~1 ms this way.
    seen = np.zeros(int(block_src.max()) + 1 if block_src.size else 0, dtype=bool)
    sources = []
    for f, e in zip(first, last):
        seen[block_src[f:e]] = True
        sources.append(np.flatnonzero(seen))
        seen[block_src[f:e]] = False
    subgraphs = [(int(block_dst[f]), int(block_dst[e - 1])) for f, e in zip(first, last)]
    return sources, subgraphs
