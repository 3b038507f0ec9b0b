"""CUDA's start on a thread (``ooc_graph._cuda_start``): only where CuPy is installed and not yet
imported, once per process, and quiet wherever the driver is missing. Each case runs in a fresh
process, where nothing has started it yet."""

import subprocess
import sys

import pytest

_CASE = r"""
import ctypes, importlib.util, sys
real = importlib.util.find_spec
case = sys.argv[1]
if case == "no cupy":
    importlib.util.find_spec = lambda name, *a: None if name == "cupy" else real(name, *a)
elif case == "cupy imported":
    sys.modules["cupy"] = object()  # its user may have chosen a device
else:  # CuPy installed, the driver library absent: a CPU machine
    importlib.util.find_spec = lambda name, *a: object() if name == "cupy" else real(name, *a)
    def no_driver(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")
    ctypes.CDLL = no_driver
from ooc_graph import _cuda_start
_cuda_start.start_cuda()
_cuda_start.start_cuda()  # once per process
_cuda_start.wait(30)
print(len(_cuda_start._started), sum(t.is_alive() for t in _cuda_start._started))
"""


@pytest.mark.parametrize("case, started", [("no cupy", 0), ("cupy imported", 0), ("no driver", 1)])
def test_when_cuda_starts(case, started):
    if case == "no driver" and not sys.platform.startswith("linux"):
        pytest.skip("the driver is started on Linux only")
    r = subprocess.run([sys.executable, "-c", _CASE, case], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == [str(started), "0"]  # started once at most, and ended
    assert r.stderr == ""  # a missing driver says nothing: CuPy reports it where it matters
