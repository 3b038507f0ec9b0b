import networkx as nx
import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.errors import ParameterError
from ooc_graph.kernels import cpu, cpu_generate

from test_ingest_paths import assert_same_store


def _arcs(G):
    indptr, indices, w = G.csr("out")
    return np.repeat(np.arange(G.num_vertices), np.diff(indptr)), indices, w


def test_rmat_deterministic_and_sized(tmp_path):
    a = ooc_graph.generate.rmat(tmp_path / "a.h5", 10, 8, seed=3, progress=False)
    b = ooc_graph.generate.rmat(tmp_path / "b.h5", 10, 8, seed=3, memory="160KiB", interval_size=100,
                                progress=False)
    c = ooc_graph.generate.rmat(tmp_path / "c.h5", 10, 8, seed=4, progress=False)
    assert a.num_vertices == 1024 and not a.directed
    for x, y in zip(_arcs(a)[:2], _arcs(b)[:2]):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(_arcs(a)[1], _arcs(c)[1])
    # Skewed: the top 1% of vertices hold far more than 1% of the arcs.
    deg = np.sort(a.out_degree)[::-1]
    assert deg[:10].sum() > 0.08 * deg.sum()


def _draw_with(where) -> dict:
    """The settings that generate with the NumPy kernels or the compiled ones, at any size."""
    if where != "numpy" and cpu.compiled() is None:
        pytest.skip("numba is not installed")
    return {"ingest.generate_kernel_min_edges": 0, "ingest.compiled_min_budget": 0, "cpu.compiled": where != "numpy"}


@pytest.mark.parametrize("kind", ["rmat", "urand"])
def test_generation_threads_and_kernels_do_not_change_the_graph(tmp_path, configure, kind):
    """Steps drawn out of order on 1 or 2 threads, by NumPy or the compiled kernels: one store."""
    configure({"ingest.generate_step": 500})  # many steps, generated out of order
    make = ooc_graph.generate.GENERATORS[kind]
    for where in ("numpy", "compiled"):
        for workers in (1, 2):
            with config.set(_draw_with(where)):
                assert ooc_graph.generate.implementation(10**6, "cpu") == where
                make(tmp_path / f"{where}{workers}.h5", 9, 8, seed=5, directed=True, weighted=True, workers=workers,
                     progress=False).close()
    for name in ("numpy2", "compiled1", "compiled2"):
        assert_same_store(tmp_path / "numpy1.h5", tmp_path / f"{name}.h5")


@pytest.mark.gpu
@pytest.mark.parametrize("kind", ["rmat", "urand"])
def test_edges_drawn_on_the_gpu_give_the_cpu_store(tmp_path, monkeypatch, configure, kind):
    configure({"ingest.generate_kernel_min_edges": 0})
    assert ooc_graph.generate.implementation(1, "gpu") == "gpu"
    for device in ("cpu", "gpu"):
        ooc_graph.generate.GENERATORS[kind](tmp_path / f"{device}.h5", 12, 8, seed=2, directed=True, weighted=True,
                                            device=device, progress=False).close()
    assert_same_store(tmp_path / "cpu.h5", tmp_path / "gpu.h5")


def test_permutation_renames_the_vertices(tmp_path):
    """With ``permute`` the graph is the unpermuted one, vertex v renamed by the seed's bijection."""
    plain = ooc_graph.generate.rmat(tmp_path / "p.h5", 10, 8, seed=7, directed=True, permute=False, progress=False)
    renamed = ooc_graph.generate.rmat(tmp_path / "r.h5", 10, 8, seed=7, directed=True, progress=False)
    consts = cpu_generate.permutation(10, cpu_generate.seed_keys(7)[1:])
    src, dst, _ = _arcs(plain)
    src, dst = (cpu_generate.permute(x.astype(np.uint64), consts).astype(np.int64) for x in (src, dst))
    order = np.lexsort((dst, src))
    got = _arcs(renamed)
    np.testing.assert_array_equal(got[0], src[order])
    np.testing.assert_array_equal(got[1], dst[order])
    assert plain.out_degree.argmax() == 0 and renamed.out_degree.argmax() != 0  # the hub moved


def test_rmat_quadrant_probabilities_without_permutation(tmp_path):
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 1, 4096, seed=0, directed=True, permute=False,
                                dedupe=False, progress=False)
    src, dst, _ = _arcs(G)
    counts = np.bincount(src * 2 + dst, minlength=4) / src.size
    np.testing.assert_allclose(counts, [0.57, 0.19, 0.19, 0.05], atol=0.02)


def test_urand_and_weights(tmp_path):
    G = ooc_graph.generate.urand(tmp_path / "u.h5", 9, 4, seed=1, weighted=True, directed=True, progress=False)
    assert G.num_vertices == 512 and G.weighted and G.directed
    _, _, w = _arcs(G)
    assert (w > 0).all() and (w <= 1).all()


def test_grid_is_a_mesh(tmp_path):
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 7, 5, progress=False)
    src, dst, _ = _arcs(G)
    H = nx.Graph(list(zip(src.tolist(), dst.tolist())))
    assert nx.is_isomorphic(H, nx.grid_2d_graph(7, 5))
    assert G.num_edges == 7 * 4 + 6 * 5
    assert ooc_graph.bfs(G, 0, device="cpu").depth.max() == 7 + 5 - 2


@pytest.mark.parametrize("call", [lambda p: ooc_graph.generate.rmat(p, -1), lambda p: ooc_graph.generate.rmat(p, 4, 0),
                                  lambda p: ooc_graph.generate.rmat(p, 4, a=0.9, b=0.2),
                                  lambda p: ooc_graph.generate.grid(p, 0, 3),
                                  lambda p: ooc_graph.generate.urand(p, 4, workers=0)])
def test_bad_parameters(tmp_path, call):
    with pytest.raises(ParameterError):
        call(tmp_path / "x.h5")
    assert list(tmp_path.iterdir()) == []
