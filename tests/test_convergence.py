"""Iterative algorithms that do not converge raise (unless asked not to), values that become
infinite or NaN stop the run at once, and parameters that are not finite numbers are refused."""

import warnings

import numpy as np
import pytest

import ooc_graph
from ooc_graph import ConvergenceError, ParameterError
from ooc_graph.cli import main

ITERATIVE = [("pagerank", {"tol": 1e-15}), ("hits", {"tol": 1e-15}), ("katz_centrality", {"tol": 1e-15}),
             ("eigenvector_centrality", {"tol": 1e-15})]


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    rng = np.random.default_rng(3)
    src, dst = rng.integers(0, 300, 3000), rng.integers(0, 300, 3000)
    return ooc_graph.convert((src, dst), tmp_path_factory.mktemp("c") / "g.h5", directed=False, progress=False)


@pytest.mark.parametrize("algo, kw", ITERATIVE)
def test_not_converging_raises_with_the_result_inside(graph, algo, kw):
    fn = getattr(ooc_graph, algo)
    with pytest.raises(ConvergenceError, match=rf"^{algo} did not converge in 2 iterations, the last change") as err:
        fn(graph, max_iter=2, device="cpu", **kw)
    assert err.value.result is not None and err.value.result.converged is False
    assert err.value.result.iterations == 2
    r = fn(graph, max_iter=2, device="cpu", raise_on_nonconvergence=False, **kw)
    assert r.converged is False and r.iterations == 2
    for name, a in r.arrays().items():
        np.testing.assert_array_equal(a, err.value.result.arrays()[name])
    assert "pagerank" not in graph.results()  # nothing was saved by the failed call


def test_the_graphalytics_definition_runs_its_iterations(graph):
    assert ooc_graph.pagerank(graph, mode="graphalytics", max_iter=2, device="cpu").converged


def test_divergence_stops_at_once_with_a_clear_error(graph):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no NumPy overflow warnings on the way
        with pytest.raises(ConvergenceError, match="the iteration diverged: its change became inf at iteration"):
            ooc_graph.katz_centrality(graph, alpha=5.0, device="cpu", raise_on_nonconvergence=False)


@pytest.mark.parametrize("kw", [{"alpha": float("nan")}, {"alpha": float("inf")}, {"beta": float("nan")},
                                {"beta": float("-inf")}, {"tol": float("nan")}])
def test_parameters_that_are_not_finite_are_refused(graph, kw):
    with pytest.raises(ParameterError, match="must be a finite number"):
        ooc_graph.katz_centrality(graph, device="cpu", **kw)


def test_the_command_line_fails_or_keeps_the_values(graph, capsys):
    assert main(["run", "pagerank", str(graph.path), "--max-iter", "2", "--tol", "1e-15", "--no-store",
                 "--device", "cpu", "--quiet"]) == 2  # the command line's exit for a caller's mistake
    assert "pagerank did not converge in 2 iterations" in capsys.readouterr().err
    assert main(["run", "pagerank", str(graph.path), "--max-iter", "2", "--tol", "1e-15", "--no-store",
                 "--device", "cpu", "--quiet", "--no-raise-on-nonconvergence"]) == 0
