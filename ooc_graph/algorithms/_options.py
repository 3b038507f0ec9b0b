"""Command-line options that several algorithms share (each algorithm lists its own in its
``@algorithm(options=...)``; the CLI builds its sub-commands from the registry)."""

from __future__ import annotations

from ooc_graph.registry import Option


def vertex_id(text: str):
    """An original vertex id from the command line: an integer where it reads as one, else the
    string (stores with string ids)."""
    try:
        return int(text)
    except ValueError:
        return text


SOURCE = Option("--source", vertex_id, "source vertex (an original vertex id: a number, or a string in a store "
                "with string ids)", required=True)
EXECUTION = Option("--execution", str, "iterate loaded chunks to local convergence (async), never (sync) "
                   "or once a streamed traversal needs many passes (auto)", "auto", ("auto", "sync", "async"))
TOL = Option("--tol", float, "stop when the L1 change of an iteration falls below this", 1e-6)
WEIGHT = Option("--weight", str, "use the arc weights (as networkx's weight=; any name: a store keeps one "
                "weight per arc), e.g. --weight weight")


STRICT = Option("--raise-on-nonconvergence", bool, "fail (exit 1) when max-iter is reached before the "
                "iteration converges; --no-raise-on-nonconvergence keeps the values", True)


def max_iter(default: int) -> Option:
    return Option("--max-iter", int, "iteration limit (the result says whether it converged)", default)
