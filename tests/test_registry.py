"""The registry: one list of algorithms that the package, the CLI and the runtime read, and the
same front door for every call (arguments bound before anything runs, shared keywords checked)."""

import inspect

import numpy as np
import pytest

import ooc_graph
from ooc_graph import registry
from ooc_graph.cli.parser import build_parser
from ooc_graph.errors import ParameterError

NAMES = list(registry.algorithms())


def test_every_public_algorithm_is_registered_once():
    assert len(NAMES) == len(set(NAMES)) == 14
    for name, algo in registry.algorithms().items():
        assert getattr(ooc_graph, name) is algo.function  # the package exports the registered function
        assert algo.summary and "``" not in algo.summary
        assert issubclass(algo.result, ooc_graph.algorithms.Result)
        keywords = set(algo.parameters)
        assert {o.keyword for o in algo.options} <= keywords, name  # every CLI option is a keyword
        runtime = {"gpus", "client", "workers"} <= set(inspect.signature(algo.function).parameters)
        assert runtime == algo.distributes, name


def test_the_command_line_has_a_subcommand_per_algorithm():
    parser = build_parser()
    run = next(a for a in parser._subparsers._group_actions[0].choices["run"]._actions
               if hasattr(a, "choices") and isinstance(a.choices, dict))
    assert list(run.choices) == NAMES


@pytest.mark.parametrize("argv", [
    ["run", "pagerank", "g.h5", "--alpha", "0.9", "--no-store"], ["-v", "run", "bfs", "g.h5", "--source", "3"],
    ["--debug", "run", "triangle_count", "g.h5", "--workers", "2"], ["info", "g.h5", "--json"],
    ["convert", "e.txt", "g.h5", "--format", "csv", "--undirected"], ["generate", "rmat", "g.h5", "--scale", "4"],
    ["results", "drop", "g.h5", "pagerank"], ["algorithms"], ["demo", "--device", "cpu"]])
def test_the_program_parses_as_the_whole_grammar(argv):
    """The program builds the arguments of the command (and algorithm) its command line names
    only (parser.named): what it parses is what the whole grammar parses."""
    from ooc_graph.cli.parser import named
    assert vars(build_parser(*named(argv)).parse_args(argv)) == vars(build_parser().parse_args(argv))


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ParameterError, match=r"unknown algorithm 'pagerrank' \(valid: betweenness_centrality, bfs, "):
        registry.get("pagerrank")


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    return ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), tmp_path_factory.mktemp("r") / "g.h5", progress=False)


@pytest.mark.parametrize("call, message", [
    (lambda G: ooc_graph.bfs(G), "bfs: missing a required argument: 'source' (its keywords: source, memory"),
    (lambda G: ooc_graph.bfs(G, 0, source=0), "bfs: multiple values for argument 'source'"),
    (lambda G: ooc_graph.pagerank(G, foo=1), "pagerank: got an unexpected keyword argument 'foo' (its keywords: "),
    (lambda G: ooc_graph.louvain(G, 1), "louvain: too many positional arguments"),
    (lambda G: ooc_graph.wcc(G, store=1), "store must be True, False or a result name (got 1)"),
    (lambda G: ooc_graph.wcc(G, store=".x"), "result name must be"),
    (lambda G: ooc_graph.wcc(G, device="cpu", device_memory="lots"), "device_memory: cannot read memory size 'lots'"),
    (lambda G: ooc_graph.wcc(G, memory=-5), "memory: memory size must be positive"),
    (lambda G: ooc_graph.wcc(G, device="tpu"), "unknown device 'tpu' (valid: auto, cpu, gpu)"),
    (lambda G: ooc_graph.wcc(G, profile=1), "profile must be True or False (got 1)"),
    (lambda G: ooc_graph.wcc(G, output="torch"), "unknown output 'torch' (valid: numpy, cupy)"),
    (lambda G: ooc_graph.louvain(G, workers=2), "louvain runs in one process"),
    (lambda G: ooc_graph.triangle_count(G, gpus=[0], client="x"), "give one of gpus=, client= or workers="),
])
def test_calls_that_do_not_fit_are_one_line_parameter_errors(small, call, message):
    with pytest.raises(ParameterError) as err:
        call(small)
    assert message in str(err.value) and "\n" not in str(err.value)
