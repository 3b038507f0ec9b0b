"""The degree pass: every way of counting (NumPy by sorting or by bincount, compiled on one thread
or split by vertex range on several) gives the counts of the plain per-chunk bincount, and the
same store."""

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.ingest import degrees as D
from ooc_graph.kernels import cpu

from conftest import random_edges
from test_ingest_paths import assert_same_store

MODES = ["numpy", "serial", "parallel"]


def _reference(chunks, n, directed, drop_loops):
    """The pass as it was: each chunk symmetrised, then an n-long bincount per chunk."""
    ins, outs = np.zeros(n, np.int64), np.zeros(n, np.int64)
    for s, d in chunks:
        if drop_loops:
            s, d = s[s != d], d[s != d]
        if not directed:
            loop = s == d
            s, d = np.concatenate([s, d[~loop]]), np.concatenate([d, s[~loop]])
        ins += np.bincount(d, minlength=n)
        if directed:
            outs += np.bincount(s, minlength=n)
    return ins, outs


def _mode(mode):
    """The settings that force a way of counting, and the workers to ask for."""
    if mode == "numpy":
        return {"cpu.compiled": False}, 2
    if cpu.compiled() is None:
        pytest.skip("numba is not installed")
    return {"ingest.degrees_parallel_min_threads": 2, "ingest.degrees_parallel_min_edges": 10}, \
        1 if mode == "serial" else 2


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("drop_loops", [False, True])
@pytest.mark.parametrize("n", [1, 3, 1000, 70000])
def test_counts_equal_the_per_chunk_bincount(configure, mode, directed, drop_loops, n):
    changes, workers = _mode(mode)
    configure(changes)
    rng = np.random.default_rng(n)
    chunks = [(rng.integers(0, n, k).astype(dt), rng.integers(0, n, k).astype(dt))
              for k, dt in ((5, np.int32), (3000, np.int64), (0, np.int32), (200, np.int32), (40000, np.int32))]
    loops = np.arange(min(n, 30), dtype=np.int32)
    chunks.append((loops, loops.copy()))  # a chunk of loops only
    deg = D.Degrees(n, directed=directed, drop_loops=drop_loops, workers=workers)
    assert (deg.threads > 1) == (mode == "parallel")
    for s, d in chunks:
        deg.add(s, d)
    ins, outs = deg.result()
    want_in, want_out = _reference(chunks, n, directed, drop_loops)
    np.testing.assert_array_equal(ins, want_in)
    np.testing.assert_array_equal(outs, want_out if directed else np.zeros(0, np.int64))


@pytest.mark.parametrize("directed", [True, False])
def test_every_way_of_counting_gives_one_store(tmp_path, monkeypatch, configure, directed):
    rng = np.random.default_rng(8)
    src, dst, w = random_edges(rng, n=3000, m=30000, weighted=True)
    configure({"ingest.compiled_min_budget": 0})  # the compiled kernels at any budget and size
    configure({"ingest.degrees_compiled_min_arcs": 0})
    counted = []
    for mode in MODES:
        changes, workers = _mode(mode)
        with monkeypatch.context() as m, config.set(changes):
            m.setattr(D.Degrees, "add", lambda self, s, d, add=D.Degrees.add: counted.append(
                (mode, self._kernels is not None, self.threads)) or add(self, s, d))
            for memory in (None, "2MB"):  # one chunk, or many small ones
                ooc_graph.convert((src, dst, w), tmp_path / f"{mode}-{memory}.h5", directed=directed, memory=memory,
                                  workers=workers, interval_size=256, drop_self_loops=directed,
                                  progress=False).close()
    assert set(counted) == {("numpy", False, 1), ("serial", True, 1), ("parallel", True, 2)}
    for name in ("numpy-2MB", "serial-None", "serial-2MB", "parallel-None", "parallel-2MB"):
        assert_same_store(tmp_path / "numpy-None.h5", tmp_path / f"{name}.h5")
