"""Every fast path of conversion writes the same store, byte for byte, as the plain one: relabelling
by lookup table or by binary search, any worker count, and (on a device) buckets sorted on the GPU."""

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.ingest import builder as builder_module

from conftest import random_edges


def contents(path):
    """Every dataset's bytes and every attribute but the build's identity and timing."""
    out = {}
    with h5py.File(path, "r") as h5:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = (obj.dtype.str, obj.shape, obj[()].tobytes())
        h5.visititems(visit)
        out["attrs"] = {k: v for k, v in h5.attrs.items() if k not in ("store_id", "built_by")}
    return out


def assert_same_store(a, b):
    ca, cb = contents(a), contents(b)
    assert ca.keys() == cb.keys()
    for name in ca:
        if name == "attrs":
            assert ca[name].keys() == cb[name].keys()
            for k in ca[name]:
                assert np.array_equal(ca[name][k], cb[name][k]), k
        else:
            assert ca[name] == cb[name], name


@pytest.mark.parametrize("directed", [True, False])
def test_relabelling_by_table_or_by_search(tmp_path, monkeypatch, directed):
    rng = np.random.default_rng(3)
    src, dst, w = random_edges(rng, n=5000, m=30000, weighted=True)
    src, dst = src * 3 + 7, dst * 3 + 7  # ids with gaps: relabelled
    G = ooc_graph.convert((src, dst, w), tmp_path / "table.h5", directed=directed, memory="2MB", progress=False)
    assert G.labels is not None
    G.close()
    monkeypatch.setattr(builder_module.GraphBuilder, "_lookup_table", staticmethod(lambda *a: (None, 0)))
    ooc_graph.convert((src, dst, w), tmp_path / "search.h5", directed=directed, memory="2MB",
                      progress=False).close()
    assert_same_store(tmp_path / "table.h5", tmp_path / "search.h5")


def test_stages_are_recorded(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("0 1\n1 2\n2 0\n")
    with ooc_graph.convert(path, tmp_path / "g.h5", progress=False) as G:
        stages = G.built_by["stages"]
    assert {"parse", "add", "ids", "degrees", "scatter", "sort", "csr", "cel"} <= stages.keys()
    assert all(v >= 0 for v in stages.values())
