"""The example scripts run and print what they promise."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script,args,expect", [
    ("quickstart.py", ["--device", "cpu"], "stored results: ['wcc']"),
    ("custom_algorithm.py", ["--device", "cpu"], "90,000 vertices reached"),
    ("dask_cluster.py", ["--scale", "10"], "stored results: pagerank_job"),
    ("friendster.py", ["--scale", "9", "--device", "cpu"], "wcc (2 CPU workers)"),
    ("twitter.py", ["--scale", "9", "--edge-factor", "8", "--device", "cpu"], "bfs (1 process)"),
])
def test_example_runs(script, args, expect, tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLES / script)] + args, capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert expect in r.stdout


@pytest.mark.parametrize("script", ["dask_cluster.py", "friendster.py", "twitter.py"])
def test_example_help(script):
    r = subprocess.run([sys.executable, str(EXAMPLES / script), "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "usage" in r.stdout
