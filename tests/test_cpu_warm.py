"""The compiled CPU kernels imported on a thread as the CPU backend is chosen (kernels.cpu.warm),
where the process has config cpu.warm_min_cores cores: started once, waited for by the first
kernel, and never where the cores are fewer. Each case runs in a fresh process, where numba is
not imported yet."""

import subprocess
import sys

import pytest

pytest.importorskip("numba")

_CASE = r"""
import sys, numpy as np, os, tempfile
import ooc_graph
from ooc_graph import config
from ooc_graph.engine.backend import get_backend
from ooc_graph.kernels import cpu
config.update({"cpu.warm_min_cores": int(sys.argv[1])})
assert "numba" not in sys.modules
get_backend("cpu")
get_backend("cpu")  # once per process
started = len(cpu._warming)
if not started:
    assert "numba" not in sys.modules  # nothing imported it meanwhile
G = ooc_graph.convert(np.array([[0, 1], [1, 2], [3, 2]]), os.path.join(tempfile.mkdtemp(), "w.h5"), progress=False)
r = ooc_graph.bfs(G, 0, device="cpu")
print(started, sum(t.is_alive() for t in cpu._warming), r.depth.tolist()[:3], cpu.compiled() is not None)
"""


@pytest.mark.parametrize("cores, started", [(1, 1), (10**6, 0)])
def test_when_the_kernels_warm(cores, started):
    r = subprocess.run([sys.executable, "-c", _CASE, str(cores)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split("[")[0].split() == [str(started), "0"]  # started once at most, and waited for
    assert "[0, 1, 2] True" in r.stdout
