"""Bad attributes and labels in a store are one-line StoreErrors naming the attribute or the
dataset (they were raw JSONDecodeError, RecursionError, UnicodeDecodeError or ValueError)."""

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import ParameterError, StoreError


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "g.h5"
    ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), path, progress=False).close()
    return path


@pytest.fixture
def named(tmp_path):
    path = tmp_path / "s.h5"
    ooc_graph.convert(np.array([["ann", "bob"], ["bob", "cy"], ["cy", "dee"]]), path, progress=False).close()
    return path


def _utf8_attr(h5, name, raw: bytes):
    """An attribute holding bytes that are not UTF-8, in a UTF-8 string type."""
    if name in h5.attrs:
        del h5.attrs[name]
    h5.attrs.create(name, np.array(raw, dtype=h5py.string_dtype("utf-8")))


@pytest.mark.parametrize("value,words", [
    ("{not json", ["built_by", "not JSON"]),
    ("[" * 100_000 + "]" * 100_000, ["built_by", "nested too deeply"]),
    ("[1, 2]", ["built_by", "not dict"]),
], ids=["not json", "deep", "a list"])
def test_bad_built_by(store, value, words):
    with h5py.File(store, "r+") as h5:
        h5.attrs["built_by"] = value
    G = ooc_graph.open(store)
    with pytest.raises(StoreError) as info:
        G.built_by
    assert "\n" not in str(info.value) and str(store) in str(info.value)
    for word in words:
        assert word in str(info.value)


def test_attribute_that_is_not_utf8(store):
    with h5py.File(store, "r+") as h5:
        _utf8_attr(h5, "built_by", b"\xff\xfe{")
    with pytest.raises(StoreError, match="attribute built_by of / is not valid UTF-8 text"):
        ooc_graph.open(store)


def test_format_attribute_that_is_an_array(store):
    with h5py.File(store, "r+") as h5:
        h5.attrs["format"] = np.array([1, 2, 3])
    with pytest.raises(StoreError, match="not an ooc_graph store"):
        ooc_graph.open(store)
    with pytest.raises(StoreError, match="is not an ooc_graph store; refusing to replace it"):
        ooc_graph.convert(np.array([[0, 1]]), store, progress=False, overwrite=True)


def test_cli_info_on_a_bad_attribute_is_one_line(store, capsys):
    from ooc_graph.cli import main

    with h5py.File(store, "r+") as h5:
        h5.attrs["built_by"] = "[" * 100_000
    assert main(["info", str(store)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "built_by" in err[0] and "internal error" not in err[0], err


def test_labels_not_utf8(named):
    with h5py.File(named, "r+") as h5:
        h5["vertex/label_bytes"][4] = 0xFF  # inside "bob"
    G = ooc_graph.open(named)
    with pytest.raises(StoreError, match="dataset vertex/label_bytes holds .* the id of vertex 1, which is not UTF-8"):
        G.labels


def test_label_offsets_out_of_order(named):
    with h5py.File(named, "r+") as h5:
        h5["vertex/label_offsets"][1] = 100
    G = ooc_graph.open(named)
    with pytest.raises(StoreError, match="dataset vertex/label_offsets holds"):
        ooc_graph.wcc(G, device="cpu").to_dict()


@pytest.mark.parametrize("kind", ["integers", "strings"])
def test_labels_not_increasing(tmp_path, named, kind):
    if kind == "strings":
        path = named
        with h5py.File(path, "r+") as h5:  # "ann", "bob" -> "bob", "ann": same bytes, same offsets
            data = h5["vertex/label_bytes"]
            data[0:6] = np.frombuffer(b"bobann", np.uint8)
    else:
        path = tmp_path / "i.h5"
        ooc_graph.convert(np.array([[10, 20], [20, 30]]), path, progress=False).close()
        with h5py.File(path, "r+") as h5:
            h5["vertex/labels"][0] = 25
    G = ooc_graph.open(path)
    with pytest.raises(StoreError, match="position 1, not above the id before it"):
        ooc_graph.wcc(G, device="cpu").to_dict()  # wrong ids before: searchsorted on unsorted labels


def test_empty_store_says_it_has_no_vertices(tmp_path):
    G = ooc_graph.convert(np.zeros((0, 2), np.int64), tmp_path / "e.h5", progress=False)
    with pytest.raises(ParameterError, match=r"vertex 0 is not in the graph \(the store has no vertices\)"):
        ooc_graph.bfs(G, 0, device="cpu")
