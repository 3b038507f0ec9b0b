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


PLAIN_TEXTS = [
    "0 1\n1 2\n2 0\n",
    "# SNAP header\n# Nodes: 3\n\n0\t1\n1\t2\n2\t0\n",
    "0 1\r\n1 2\r\n\r\n2 0",
    "  0   1  \n\n1 2\n   \n-5 7\n",
    "0 1 0.5\n1 2 1e-3\n2 0 7\n",
    "% c\n1e3 2 0.25\n3 4 1\n",          # a float id: loadtxt refuses it, the Block reads 1000
    "0 1\n1 2\n# a comment in the middle\n2 0\n",
    "9223372036854775807 0\n-9223372036854775808 1\n",
]


@pytest.mark.parametrize("text", PLAIN_TEXTS)
def test_plain_blocks_read_as_the_precise_reader_does(tmp_path, monkeypatch, text):
    """``numpy.loadtxt`` on plain blocks gives the edges the line-by-line Block reader gives."""
    from ooc_graph.ingest import formats

    path = tmp_path / "e.txt"
    path.write_text(text)

    def chunks():
        src = formats.read_edgelist(path, {"block_bytes": 16})
        return [(s.tolist(), d.tolist(), None if w is None else w.tolist()) for s, d, w, _ in src.chunks]
    fast = chunks()
    monkeypatch.setattr(formats, "parse_plain", lambda *a: None)
    assert fast == chunks()


@pytest.mark.parametrize("text,line", [
    ("# h\n\n0 1 0.5\n1 2 1e300\n", 4),      # a weight float32 cannot hold, found by the builder
    ("0 1\n\n\n1 5\n", 4),                    # an id outside num_vertices
])
def test_plain_blocks_name_the_line(tmp_path, text, line):
    path = tmp_path / "e.txt"
    path.write_text(text)
    with pytest.raises(ooc_graph.errors.InputError, match=rf"e\.txt, line {line}:"):
        ooc_graph.convert(path, tmp_path / "g.h5", num_vertices=3, progress=False)
