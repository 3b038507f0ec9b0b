"""A cold process's GPU call loads what the call uses (issue 31): no compiler for the store's
checksums (numba), and gives the same answer as a warm call."""

import json
import subprocess
import sys

import numpy as np
import pytest

import ooc_graph

pytestmark = pytest.mark.gpu

PROBE = r"""
import json, sys, numpy as np, ooc_graph
from ooc_graph import _cuda_start, config
config.update({"store.direct_min_bytes": 0})  # the store's datasets read as a large one's are
G = ooc_graph.open(sys.argv[1])
r = ooc_graph.pagerank(G, device="gpu")
_cuda_start.wait()
print(json.dumps({"loaded": [m for m in ("numba", "llvmlite") if m in sys.modules],
                  "cuda_started": [t.name for t in _cuda_start._started],
                  "direct": G._direct is not None and any(t is not None for t in G._direct[2].values()),
                  "values": np.asarray(r.values).tolist()}))
"""


def test_a_cold_gpu_pagerank_loads_no_compiler(tmp_path):
    edges = np.random.default_rng(5).integers(0, 3000, (30_000, 2))
    G = ooc_graph.convert(edges, tmp_path / "g.h5", progress=False, chunk_arcs=4000)
    warm = ooc_graph.pagerank(G, device="gpu").values
    G.close()
    r = subprocess.run([sys.executable, "-c", PROBE, str(G.path)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["direct"], "the store was not read directly"
    assert out["loaded"] == []
    assert out["cuda_started"] == ["ooc-graph-cuda-start"]  # CUDA started beside CuPy's import
    np.testing.assert_allclose(out["values"], warm, rtol=1e-12, atol=0)


def test_the_command_line_starts_cuda_early_and_agrees(tmp_path):
    """``ooc-graph run`` on a GPU starts CUDA on a thread before its imports, and ends quickly
    after: the same summary as the API's call, status 0."""
    G = ooc_graph.generate.grid(tmp_path / "g.h5", 40, 30, progress=False)
    warm = ooc_graph.pagerank(G, device="gpu")
    G.close()
    r = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "run", "pagerank", str(G.path), "--device", "gpu",
                        "--quiet", "--no-store"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.startswith(f"pagerank: {warm.iterations} iterations (converged)")
    assert r.stdout.rstrip().endswith("device gpu")
