"""What a conversion's memory goes to, and the floor below which a budget cannot work.

The budget (``memory``) bounds the whole process: a fixed allowance for the program, the
per-vertex arrays, the write buffers, and the rest for data — the reader's chunks while the
input is read, a spill chunk at a time while degrees are counted (with the counting threads'
buffer, ``degrees.py``) and while arcs are scattered into buckets, and the buckets being sorted
(``buckets.BYTES_PER_ARC``). Figures measured on the 2-core development machine
(``benchmarks/RESULTS.md``, "Conversion in a memory budget").
"""

from __future__ import annotations

from ooc_graph import config
from ooc_graph._memory import budget, human
from ooc_graph.errors import ParameterError

# What the interpreter, NumPy, SciPy, h5py and HDF5's caches take before any data (62 MiB
# measured), with room for the allocator's slack:
BASELINE_BYTES = 96 << 20
# Bytes per vertex held while the arcs pass through (degree counts and their temporaries, labels).
BYTES_PER_VERTEX = 40
# Peak bytes per arc of a spill chunk on its way to the buckets: ids read and mapped, symmetrised,
# the bucket of each arc and its radix-sort order, the copies appended to the bucket spills.
PASS_BYTES_PER_ARC = 64
# Peak bytes per edge of a chunk the reader hands over, inside add(): the ids as int64, the chunk's
# distinct ids (for relabelling), the narrowed copies spilled; and per byte of a text block.
ADD_BYTES_PER_EDGE = 96
TEXT_BYTES_PER_BYTE = 48
# HDF5 writes a dataset chunk through buffers of about twice its size (measured: appending to
# fletcher32 datasets of 32 MiB chunks raises the peak by ~65 MiB).
HDF5_WRITE_COPIES = 2
# Besides, the store's chunk writer (store/chunks.py) holds one chunk's buffer.
CHUNK_WRITER_COPIES = 1


def data_bytes(memory: int) -> int:
    """What the budget leaves for data once the program itself is counted."""
    return memory - BASELINE_BYTES


def reader_options(memory, **opts) -> dict:
    """What a reader needs to stay within its share of ``memory`` (half of what the program leaves;
    the distinct ids seen so far take the rest): edges per chunk handed over, bytes per text block."""
    share = data_bytes(budget(memory)) // 2
    return dict(opts, chunk_edges=max(1024, share // ADD_BYTES_PER_EDGE),
                block_bytes=max(4096, share // TEXT_BYTES_PER_BYTE), arrow=budget(memory) >= config.get().ingest.arrow_min_budget)


def write_buffers(chunk_arcs: int, arcs: int, itemsizes: list[int], csr_itemsizes: list[int], csr_chunk: int) -> int:
    """HDF5's and the chunk writer's buffers for writing the largest dataset chunk (CEL chunks
    of ``chunk_arcs``, CSR chunks of ``csr_chunk`` elements; both no longer than the ``arcs``)."""
    arcs = max(1, arcs)
    largest = max(min(chunk_arcs, arcs) * max(itemsizes), min(csr_chunk, arcs) * max(csr_itemsizes))
    return (HDF5_WRITE_COPIES + CHUNK_WRITER_COPIES) * largest


def check_vertices(n: int, memory: int, at_least: bool = False) -> None:
    """The program and the per-vertex arrays must fit the budget: an error naming the floor,
    before anything is allocated."""
    need = BASELINE_BYTES + BYTES_PER_VERTEX * n
    if need > memory:
        raise ParameterError(
            f"memory budget {human(memory)} is below the floor of {human(need)} for "
            f"{'at least ' if at_least else ''}{n:,} vertices: {human(BASELINE_BYTES)} for the program and "
            f"{BYTES_PER_VERTEX} bytes per vertex for the build's arrays; raise memory (--memory)")


def check_fullest(memory: int, data: int, n: int, writes: int, vertex: int, arcs: int, per_arc: int) -> None:
    """A bucket holds at least one vertex's arcs: when those do not fit what is left, an error
    naming the floor for this graph."""
    if arcs * per_arc > data:
        raise ParameterError(
            f"memory budget {human(memory)} is below the floor of {human(memory - data + arcs * per_arc)} for "
            f"this graph: vertex {vertex:,} has {arcs:,} arcs, which take about {human(arcs * per_arc)} to "
            f"sort, beside {human(BASELINE_BYTES)} for the program, {human(BYTES_PER_VERTEX * n)} for {n:,} "
            f"vertices and {human(writes)} for the write buffers; raise memory (--memory)")
