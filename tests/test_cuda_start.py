"""CUDA's start on a thread (``ooc_graph._cuda_start``): only where CuPy is installed and not yet
imported, once per process, and quiet wherever the driver is missing."""

import importlib.util
import subprocess
import sys

import pytest

from ooc_graph import _cuda_start

_NO_CUPY = r"""
import importlib.util, sys
real = importlib.util.find_spec
importlib.util.find_spec = lambda name, *a: None if name == "cupy" else real(name, *a)
from ooc_graph import _cuda_start
_cuda_start.start_cuda()
print(len(_cuda_start._started))
"""


def test_nothing_starts_without_cupy():
    r = subprocess.run([sys.executable, "-c", _NO_CUPY], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["0"]


def test_nothing_starts_once_cupy_is_imported(monkeypatch):
    monkeypatch.setattr(_cuda_start, "_started", [])
    monkeypatch.setitem(sys.modules, "cupy", object())  # its user may have chosen a device
    _cuda_start.start_cuda()
    assert _cuda_start._started == []


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the driver is started on Linux only")
def test_a_missing_driver_ends_the_thread_quietly(monkeypatch, capfd):
    """CuPy installed, the driver library absent (a CPU machine): the thread ends without a word."""
    import ctypes

    def no_driver(name, *args, **kwargs):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(_cuda_start, "_started", [])
    monkeypatch.delitem(sys.modules, "cupy", raising=False)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: object() if name == "cupy" else None)
    monkeypatch.setattr(ctypes, "CDLL", no_driver)
    _cuda_start.start_cuda()
    _cuda_start.start_cuda()  # once per process
    assert len(_cuda_start._started) == 1
    _cuda_start.wait(30)
    assert not _cuda_start._started[0].is_alive()
    assert capfd.readouterr() == ("", "")
