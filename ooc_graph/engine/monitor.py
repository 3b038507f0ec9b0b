"""Listening to a run as it goes: a callback for every convergence report of engines made inside
:func:`watching` (the command line draws its progress bar with it)."""

from __future__ import annotations

import contextlib
import contextvars

_WATCHER: contextvars.ContextVar = contextvars.ContextVar("ooc_graph_watcher", default=None)


@contextlib.contextmanager
def watching(on_report):
    """Call ``on_report(iteration, measure)`` at every convergence report of the runs made in
    this block (the residual for PageRank, the vertices changed for traversals).

    >>> from ooc_graph.engine.monitor import watching, current_watcher
    >>> with watching(print):
    ...     current_watcher()(3, 0.5)
    3 0.5
    """
    token = _WATCHER.set(on_report)
    try:
        yield
    finally:
        _WATCHER.reset(token)


def current_watcher():
    return _WATCHER.get()
