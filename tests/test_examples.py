"""The example scripts run and print what they promise."""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


@pytest.mark.parametrize("script,expect", [("quickstart.py", "stored results: ['wcc']"),
                                           ("custom_algorithm.py", "90,000 vertices reached")])
def test_example_runs(script, expect, tmp_path):
    r = subprocess.run([sys.executable, str(EXAMPLES / script), "--device", "cpu"], capture_output=True,
                       text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert expect in r.stdout
