"""The example scripts run and print what they promise."""

import subprocess
import sys
import time
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script,args,expect", [
    ("quickstart.py", ["--device", "cpu"], "stored results: ['wcc']"),
    ("custom_algorithm.py", ["--device", "cpu"], "90,000 vertices reached"),
    ("edge_map_algorithm.py", ["--device", "cpu", "--memory", "200KiB", "--check"], "check: same widths"),
    pytest.param("edge_map_algorithm.py", ["--device", "gpu", "--check"], "check: same widths",
                 marks=pytest.mark.gpu, id="edge_map_algorithm.py-gpu"),
    ("dask_cluster.py", ["--scale", "10"], "stored results: pagerank_job"),
    ("friendster.py", ["--scale", "9", "--device", "cpu"], "wcc (2 CPU workers)"),
    ("twitter.py", ["--scale", "9", "--edge-factor", "8", "--device", "cpu"], "bfs (1 process)"),
    ("twitter.py", ["--scale", "15", "--edge-factor", "16", "--device", "cpu", "--report-every", "0.05"],
     "generate + convert: "),  # progress lines off a terminal
])
def test_example_runs(script, args, expect, tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLES / script)] + args, capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert expect in r.stdout
    assert "Traceback" not in r.stderr, r.stderr[-2000:]  # nothing at exit either (clusters closing)


@pytest.mark.parametrize("script", ["dask_cluster.py", "friendster.py", "twitter.py", "edge_map_algorithm.py"])
def test_example_help(script):
    r = subprocess.run([sys.executable, str(EXAMPLES / script), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "usage" in r.stdout


def test_edge_map_example_on_a_directed_store(tmp_path):
    """The example's widest paths on a directed weighted store with unreachable vertices, streamed."""
    import numpy as np

    import ooc_graph
    rng = np.random.default_rng(5)
    edges = np.column_stack([rng.integers(0, 300, 900), rng.integers(0, 300, 900), rng.random(900)])
    store = tmp_path / "d.h5"
    ooc_graph.convert(edges, store, weighted=True, num_vertices=320, interval_size=32, chunk_arcs=64,
                      progress=False).close()
    r = subprocess.run([sys.executable, str(EXAMPLES / "edge_map_algorithm.py"), str(store), "--source", "7",
                        "--device", "cpu", "--memory", "80KiB", "--check"], capture_output=True, text=True,
                       timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "check: same widths" in r.stdout and "widest paths from 7" in r.stdout


def test_dask_example_without_gpus_is_one_line():
    """``dask_cluster.py --gpus all`` on a machine without GPUs ended in a traceback."""
    from ooc_graph.engine import gpu_available
    if gpu_available():
        pytest.skip("CuPy sees a GPU here")
    r = subprocess.run([sys.executable, str(EXAMPLES / "dask_cluster.py"), "--gpus", "all"], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr == ("dask_cluster.py: error: gpus='all' but CuPy finds no CUDA device (use workers= for CPU "
                        "worker processes)\n")


def test_large_jobs_say_their_sizes_and_ask_first(tmp_path):
    """``friendster.py`` started a 1.8-billion-edge generation (~50 GB) at once, GPU or not, with no
    word off a terminal: now it says where it runs and what it needs, and off a terminal refuses
    without --yes, having made nothing."""
    import os
    r = subprocess.run([sys.executable, str(EXAMPLES / "friendster.py")], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path, env={**os.environ, "TMPDIR": str(tmp_path)}, stdin=subprocess.DEVNULL)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert "graph: an R-MAT of 67,108,864 vertices and 1,811,939,328 edges (undirected)" in r.stdout
    assert r.stdout.startswith("device: ") and "GB of disk while it is built" in r.stdout
    assert r.stderr.startswith("friendster.py: ") and "pass --yes to go ahead" in r.stderr
    assert list(tmp_path.iterdir()) == []
    r = subprocess.run([sys.executable, str(EXAMPLES / "twitter.py"), "--scale", "40", "--yes"], capture_output=True,
                       text=True, timeout=120, cwd=tmp_path, env={**os.environ, "TMPDIR": str(tmp_path)})
    assert r.returncode == 1 and "free (--store puts it elsewhere)" in r.stderr and "Traceback" not in r.stderr
    assert list(tmp_path.iterdir()) == []


def test_sigterm_removes_the_temporary_store(tmp_path):
    """SIGTERM left the example's empty ``ooc-graph-large-*`` folder behind."""
    import os
    import signal
    p = subprocess.Popen([sys.executable, str(EXAMPLES / "twitter.py"), "--scale", "16", "--device", "cpu"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tmp_path,
                         env={**os.environ, "TMPDIR": str(tmp_path)})
    try:
        line = "-"
        while line and not line.startswith("memory: "):  # the checks are done: the build begins
            line = p.stdout.readline()
        while not list(tmp_path.glob("ooc-graph-large-*")):
            time.sleep(0.01)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.communicate()
    assert p.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err
    assert list(tmp_path.iterdir()) == []
