"""Result memory made ready in the background (engine.hostbuf)."""

import numpy as np
import pytest

from ooc_graph.engine import hostbuf


@pytest.mark.parametrize("part", [slice(None), slice(3, 4097 * 3), slice(1, 2), slice(5, 5)])
def test_populate_keeps_contents_of_any_slice(part):
    a = np.arange(1 << 16, dtype=np.float64)
    hostbuf.populate(a[part])
    np.testing.assert_array_equal(a, np.arange(1 << 16))


@pytest.mark.parametrize("threads", [1, 3, 8])
def test_populate_in_pieces_keeps_contents(monkeypatch, configure, threads):
    configure({"stream.populate_threads": threads})
    monkeypatch.setattr(hostbuf, "_POPULATE_PIECE", 4096)
    a = np.arange(100_003, dtype=np.int64)
    hostbuf.populate_parallel(a[5:99_999])
    np.testing.assert_array_equal(a, np.arange(100_003))


def test_populate_without_madvise(monkeypatch):
    monkeypatch.setattr(hostbuf, "_madvise", lambda: None)
    a = np.arange(10_000, dtype=np.int64)
    hostbuf.populate(a[7:9000])
    np.testing.assert_array_equal(a, np.arange(10_000))


def test_prepared_hands_out_matching_arrays_once():
    p = hostbuf.Prepared([((1000,), np.int64), ((1000,), np.float64), ((1000,), np.int64)])
    a, b = p.take((1000,), np.int64), p.take((1000,), np.int64)
    assert a is not None and b is not None and a is not b and a.dtype == np.int64
    assert p.take((1000,), np.int64) is None and p.take((999,), np.float64) is None
    assert p.take((1000,), np.float64).shape == (1000,)
