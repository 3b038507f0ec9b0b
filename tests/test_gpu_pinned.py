"""Page-locked host memory of our own (kernels/gpu_pinned.py): registered with CUDA, copied to and
from at bus speed, returned to the pool only once every view of it is gone, given back by
free_all, and CuPy's pinned pool where the device cannot read registered memory at its host
address. Skipped where CuPy finds no device."""

import gc

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config

pytestmark = pytest.mark.gpu


@pytest.fixture
def pinned():
    from ooc_graph.kernels import gpu_pinned
    gpu_pinned.free_all()
    yield gpu_pinned
    gc.collect()
    gpu_pinned.free_all()


def _registered(array) -> bool:
    import cupy as cp
    attributes = cp.cuda.runtime.pointerGetAttributes(array.ctypes.data)
    return attributes.type == 1 and attributes.hostPointer == array.ctypes.data  # cudaMemoryTypeHost


def _cupys(array) -> bool:
    import cupy as cp
    return isinstance(array.base, cp.cuda.PinnedMemoryPointer)


@pytest.mark.parametrize("shape, dtype", [((1000,), np.int32), ((3, 700_001), np.float64), ((5 << 20,), np.uint8),
                                          ((), np.int64), ((1 << 18,), np.int32)])
def test_arrays_are_page_locked_and_copy_both_ways(pinned, shape, dtype):
    """Requests of 1 MiB and more come from the pool's registered blocks, smaller ones from
    CuPy's pool; both are page-locked and copy asynchronously."""
    import cupy as cp
    from ooc_graph.kernels import gpu_transfer
    a = pinned.empty(shape, dtype)
    assert a.shape == shape and a.dtype == dtype and a.flags.c_contiguous and a.flags.writeable
    assert _registered(a) and gpu_transfer.page_locked(a)
    assert _cupys(a) == (a.nbytes < config.get().gpu.pinned_min_bytes)
    a[...] = np.arange(a.size, dtype=dtype).reshape(shape)
    d = cp.empty(shape, dtype)
    stream = cp.cuda.Stream(non_blocking=True)
    d.set(a, stream=stream)  # asynchronous from page-locked memory
    back = pinned.empty(shape, dtype)
    d.get(stream=stream, out=back)
    stream.synchronize()
    np.testing.assert_array_equal(back, a)


def test_a_block_returns_only_once_every_view_is_gone(pinned):
    a = pinned.empty((1 << 20,), np.int32)
    address = a.ctypes.data
    view = a[1000:2000].view(np.uint8)  # a view's base is the block's owner array
    del a
    gc.collect()
    assert pinned.free_blocks() == 0
    other = pinned.empty((1 << 20,), np.int32)  # the first block is still in use: a new one
    addresses = {address, other.ctypes.data}
    assert len(addresses) == 2
    view[:] = 7  # still mapped and writable
    del view, other
    gc.collect()
    assert pinned.free_blocks() == 2
    again = pinned.empty((4 << 20,), np.uint8)  # the same size: a free block is reused
    assert again.ctypes.data in addresses and pinned.free_blocks() == 1
    odd = pinned.empty(((4 << 20) + 1,), np.uint8)  # a size rounded to another block size: a new one
    assert odd.ctypes.data not in addresses and pinned.free_blocks() == 1
    del odd
    del again
    gc.collect()
    pinned.free_all()
    assert pinned.free_blocks() == 0


def test_free_all_leaves_blocks_in_use_alone(pinned):
    kept = pinned.empty((1 << 18,), np.float64)
    dropped = pinned.empty((1 << 18,), np.float64)
    del dropped
    gc.collect()
    pinned.free_all()
    assert pinned.free_blocks() == 0 and _registered(kept)
    kept[:] = 1.5
    assert kept.sum() == 1.5 * (1 << 18)


def test_cupys_pool_serves_where_registered_memory_is_not_read_at_its_address(pinned, monkeypatch):
    import cupy as cp
    monkeypatch.setitem(pinned._usable, cp.cuda.runtime.getDevice(), False)
    a = pinned.empty((1 << 20,), np.int32)
    assert _cupys(a) and _registered(a)
    del a
    gc.collect()
    assert pinned.free_blocks() == 0


def test_a_cold_call_reads_chunks_into_registered_memory_and_release_frees_it(tmp_path, pinned, configure,
                                                                              monkeypatch):
    """Chunks streamed from the store land in the pool's blocks (every size taken here), the
    answers are the CPU's, and releasing the graph gives every block back and unmaps it (the host
    cache keeps the chunks' raw copies page-locked until then)."""
    configure({"gpu.pinned_min_bytes": 4096})
    taken, returned = [], []
    take, give_back = pinned._take, pinned._give_back
    monkeypatch.setattr(pinned, "_take", lambda size: taken.append(size) or take(size))
    monkeypatch.setattr(pinned, "_give_back", lambda block: returned.append(block.size) or give_back(block))
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 18, 8, seed=2, directed=True, chunk_arcs=1 << 18, progress=False)
    n = G.num_vertices
    budget = 5 * 8 * n + n + G.num_arcs * 8 // 4  # the vertex state and a quarter of the decoded arcs
    for algo in ("pagerank", "wcc"):
        cpu = getattr(ooc_graph, algo)(G, device="cpu")
        gpu = getattr(ooc_graph, algo)(G, device="gpu", device_memory=budget)
        assert gpu.stats["passes"] > 1 and gpu.stats["bytes_to_device"] > G.num_arcs * gpu.stats["passes"]
        for name, a in cpu.arrays().items():
            np.testing.assert_allclose(gpu.arrays()[name], a, rtol=1e-10, atol=1e-15)
    del cpu, gpu, a
    gc.collect()
    assert len(taken) >= G.num_arcs >> 18  # the chunks' arrays came from the pool's blocks
    G.release()
    gc.collect()
    assert sorted(returned) == sorted(taken)  # every block came back ...
    assert pinned.free_blocks() == 0  # ... and was unregistered and unmapped
    G.close()
