"""Input that used to be altered without a word: complex weights (their real part was kept) and a
mistaken delimiter (the first line became a header, or the ids strings)."""

import numpy as np
import pytest
import scipy.sparse as sp

import ooc_graph
from ooc_graph.errors import InputError


def test_complex_scipy_weights_are_refused(tmp_path):
    m = sp.coo_matrix((np.array([1 + 2j, 3 + 0j]), (np.array([0, 1]), np.array([1, 2]))), shape=(3, 3))
    with pytest.raises(InputError, match=r"scipy.sparse matrix: weights are complex numbers \(dtype complex128\)"):
        ooc_graph.convert(m, tmp_path / "c.h5", progress=False)
    assert not (tmp_path / "c.h5").exists()


@pytest.mark.parametrize("weights", [np.array([1 + 1j, 2 + 0j]), np.array([1.0, 2.0], np.complex64)])
def test_complex_numpy_weights_are_refused(tmp_path, weights):
    with pytest.raises(InputError, match="weights are complex numbers") as info:
        ooc_graph.convert((np.array([0, 1]), np.array([1, 2]), weights), tmp_path / "c.h5", progress=False)
    assert "\n" not in str(info.value)
    builder = ooc_graph.ingest.GraphBuilder(None, directed=True, weighted=True)
    with pytest.raises(InputError, match="weights are complex numbers"):
        builder.add(np.array([0, 1]), np.array([1, 2]), weights)
    builder.abort()


def test_real_weights_still_convert(tmp_path):
    m = sp.csr_matrix(np.array([[0, 2.5], [1.5, 0]]))
    G = ooc_graph.convert(m, tmp_path / "r.h5", progress=False)
    assert G.weighted and G.attrs["max_weight"] == 2.5


@pytest.mark.parametrize("text,delimiter,fmt,words", [
    ("0;1\n1;2\n", None, "csv", ["line 1", "delimiter ','", "does not split"]),
    ("0;1\n", None, "csv", ["line 1", "delimiter ','"]),  # was: an empty graph, the line taken for a header
    ("src,dst\n0,1\n", ";", "csv", ["line 1", "delimiter ';'"]),
    ("0;1;0.5\n1;2;2.5\n", ".", "csv", ["line 1", "delimiter '.'", "with ';' it is an edge"]),
    ("# comment\n0;1\n1;2\n", ",", "edgelist", ["line 2", "delimiter ','"]),
    ("0;1;0.5\n1;2;2.5\n", ".", "edgelist", ["line 1", "with ';' it is an edge"]),
], ids=["csv default comma", "one line", "header with another delimiter", "decimal point as delimiter",
        "edgelist after a comment", "edgelist string ids guessed"])
def test_wrong_delimiter_is_one_error(tmp_path, text, delimiter, fmt, words):
    path = tmp_path / f"e.{'csv' if fmt == 'csv' else 'txt'}"
    path.write_text(text)
    with pytest.raises(InputError) as info:
        ooc_graph.convert(path, tmp_path / "e.h5", delimiter=delimiter, progress=False)
    message = str(info.value)
    assert "\n" not in message and str(path) in message
    for word in words:
        assert word in message, (word, message)


@pytest.mark.parametrize("text,delimiter,edges", [
    ("src,dst\n0,1\n1,2\n", None, 2),  # a header: still guessed
    ("0;1\n1;2\n", ";", 2),
    ("0 1\n1 2\n", None, 2),  # whitespace separates in a csv too
    ("a b\nb c\n", ",", 2),  # string ids split by whitespace
], ids=["header", "semicolons", "spaces", "string ids"])
def test_right_delimiter_still_converts(tmp_path, text, delimiter, edges):
    path = tmp_path / ("e.csv" if "src" in text or ";" in text or " " not in text else "e.txt")
    path.write_text(text)
    G = ooc_graph.convert(path, tmp_path / "e.h5", delimiter=delimiter, progress=False)
    assert G.num_edges == edges


def test_cli_names_file_line_and_delimiter(tmp_path, capsys):
    from ooc_graph.cli import main

    path = tmp_path / "e.csv"
    path.write_text("0;1\n1;2\n")
    assert main(["convert", str(path), str(tmp_path / "e.h5"), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}, line 1" in err[0] and "delimiter ','" in err[0], err
