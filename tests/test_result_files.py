"""Result files and result names from outside: a crafted result file is refused by
``import_result`` in one line; names with control characters are refused when saving and
importing, and shown escaped by the CLI where a store already holds them."""

import json

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import ParameterError, StoreError
from ooc_graph.store import _format as F
from ooc_graph.store.results import RESULT_FILE_FORMAT

ESCAPE = "\x1b]0;pwned\x07\x1b[2J"  # sets the terminal's title, clears the screen


@pytest.fixture
def graph(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 3]]), tmp_path / "g.h5", progress=False)
    yield G
    G.close()


def _result_file(path, G, name="wcc", length=None, extra=None):
    """A result file as ``write_beside`` makes one, with a name and arrays of our choosing."""
    with h5py.File(path, "w") as h5:
        h5.attrs.update({"format": RESULT_FILE_FORMAT, "format_version": 1, "store": str(G.path),
                         F.STORE_ID: G.store_id, "num_vertices": G.num_vertices, "reason": "test"})
        grp = h5.create_group(F.RESULTS).create_group(name)
        grp.create_dataset("labels", data=np.zeros(length or G.num_vertices, np.int64), chunks=True,
                           maxshape=(None,), fletcher32=True)
        grp.attrs.update({"algorithm": "wcc", "parameters": "{}", "stats": "{}", "iterations": 1})
        if extra:
            extra(h5)
    return path


@pytest.mark.parametrize("name,length,words", [
    (".x", None, ["'.x'", "result name"]),
    (ESCAPE, None, ["result name", repr(ESCAPE)]),
    ("wcc", 3, ["results/wcc/labels", "shape (3,)", "4 vertices"]),
    ("wcc", 9, ["results/wcc/labels", "shape (9,)"]),
], ids=["hidden name", "escape sequence", "too short", "too long"])
def test_crafted_result_file_is_refused(tmp_path, graph, name, length, words):
    path = _result_file(tmp_path / "r.result.h5", graph, name, length)
    with pytest.raises(StoreError) as info:
        graph.import_result(path)
    message = str(info.value)
    assert "\n" not in message and "\x1b" not in message and str(path) in message
    for word in words:
        assert word in message, (word, message)
    assert graph.results() == [] and path.exists()  # nothing imported, nothing removed


def test_result_file_with_external_link_is_refused(tmp_path, graph):
    (tmp_path / "secret.txt").write_bytes(b"secret" * 10)

    def link(h5):
        del h5["results/wcc/labels"]
        h5["results/wcc/labels"] = h5py.ExternalLink(str(graph.path), "/vertex/in_degree")
    path = _result_file(tmp_path / "r.result.h5", graph, extra=link)
    with pytest.raises(StoreError, match="results/wcc/labels is an external link"):
        graph.import_result(path)


def test_result_file_roundtrip_still_imports(tmp_path, graph):
    path = _result_file(tmp_path / "r.result.h5", graph)
    assert graph.import_result(path) == "wcc"
    assert graph.load_result("wcc")["labels"].tolist() == [0, 0, 0, 0]


@pytest.mark.parametrize("name", [ESCAPE, "a\nb", "tab\there", "bidi\u202etxt.exe"])
def test_control_characters_in_result_names_are_refused(graph, name):
    r = ooc_graph.wcc(graph, device="cpu")
    with pytest.raises(ParameterError, match="printable"):
        r.save(name)
    with pytest.raises(ParameterError, match="printable"):
        graph.save_result(name, {"labels": r.labels}, {})
    assert graph.results() == []


def test_cli_shows_stored_names_escaped(graph, capsys):
    from ooc_graph.cli import main

    ooc_graph.wcc(graph, device="cpu", store=True)
    path = graph.path
    graph.close()
    with h5py.File(path, "r+") as h5:  # a store written elsewhere, holding such a name
        h5.copy(h5["results/wcc"], h5["results"], ESCAPE)
        h5["results"][ESCAPE].attrs["algorithm"] = "wcc" + ESCAPE
    for args in (["results", "list", str(path)], ["info", str(path)]):
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "\x1b" not in out and "\x07" not in out
        assert repr(ESCAPE) in out and repr("wcc" + ESCAPE) in out


def test_damaged_result_parameters_are_one_store_error(graph):
    ooc_graph.wcc(graph, device="cpu", store=True)
    path = graph.path
    graph.close()
    with h5py.File(path, "r+") as h5:
        h5["results/wcc"].attrs["parameters"] = "[" * 100_000 + "]" * 100_000
    G = ooc_graph.open(path)
    with pytest.raises(StoreError, match="attribute parameters is nested too deeply"):
        G.load_result("wcc")
    G.close()
    with h5py.File(path, "r+") as h5:
        h5["results/wcc"].attrs["stats"] = json.dumps([1, 2])
        h5["results/wcc"].attrs["parameters"] = "{}"
    G = ooc_graph.open(path)
    with pytest.raises(StoreError, match="attribute stats is list JSON, not dict"):
        G.load_result("wcc")
