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


SCIPY_PROBE = r"""
import json, sys, traceback

class Who:  # where SciPy is first imported from: the failure's message
    stack = None
    def find_spec(self, name, path=None, target=None):
        if name == "scipy" and Who.stack is None:
            Who.stack = [f"{f.filename}:{f.lineno}" for f in traceback.extract_stack()
                         if "importlib" not in f.filename][-12:]

sys.meta_path.insert(0, Who())
import ooc_graph
from ooc_graph import config
config.update({"gpu.parent_first_arcs": 4})  # the hub's row is heavy: SSSP's heavy-row parents run
G = ooc_graph.open(sys.argv[1])
call = {"pagerank": lambda: ooc_graph.pagerank(G, device="gpu"), "wcc": lambda: ooc_graph.wcc(G, device="gpu"),
        "bfs": lambda: ooc_graph.bfs(G, 0, device="gpu"), "sssp": lambda: ooc_graph.sssp(G, 0, device="gpu")}
call[sys.argv[2]]()
print(json.dumps({"imported": [m for m in ("scipy", "cupyx.scipy.sparse") if m in sys.modules], "by": Who.stack}))
"""


@pytest.mark.parametrize("algorithm", ["pagerank", "wcc", "bfs", "sssp"])
def test_a_cold_gpu_call_imports_no_scipy(tmp_path, algorithm):
    """CuPy's operators with a scalar operand (``a + 1``) import cupyx and SciPy's sparse modules
    (~0.5 s of a cold call; a thread that imported them ahead cost as much by holding the GIL):
    the four calls a newcomer makes first use kernels and ufuncs instead."""
    rng = np.random.default_rng(3)
    src = np.concatenate([np.zeros(200, np.int64), rng.integers(0, 2000, 20_000)])
    dst = np.concatenate([np.arange(1, 201), rng.integers(0, 2000, 20_000)])
    w = rng.integers(1, 256, src.size).astype(np.float32)
    G = ooc_graph.convert((src, dst, w), tmp_path / "g.h5", progress=False, chunk_arcs=4000)
    G.close()
    r = subprocess.run([sys.executable, "-c", SCIPY_PROBE, str(G.path), algorithm], capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    assert out["imported"] == [], "\n".join(out["by"])
