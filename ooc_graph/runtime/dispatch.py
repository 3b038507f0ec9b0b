"""``gpus=``, ``client=`` and ``workers=`` on every algorithm: the same call, run as a job."""

from __future__ import annotations

import functools
import inspect

_RUNTIME = ("gpus", "client", "workers")


def distributable(fn):
    """Give algorithm ``fn`` the keywords ``gpus`` (local GPUs: ``[0, 1]``, ``"0,1"``, ``"all"``),
    ``client`` (a ``distributed.Client`` or a scheduler address) and ``workers`` (that many local
    CPU worker processes). With none of them the call runs in this process, as before; with one,
    it runs on the cluster (:func:`ooc_graph.runtime.jobs.run_distributed`) and returns the same
    result."""
    sig = inspect.signature(fn)

    @functools.wraps(fn)
    def wrapper(*args, gpus=None, client=None, workers=None, **kwargs):
        if gpus is None and client is None and workers is None:
            return fn(*args, **kwargs)
        from .jobs import run_distributed
        try:
            bound = sig.bind(*args, **kwargs)
        except TypeError as err:
            from ooc_graph.errors import ParameterError
            raise ParameterError(f"{fn.__name__}: {err}") from None
        arguments = dict(bound.arguments)
        graph = arguments.pop(next(iter(sig.parameters)))
        return run_distributed(fn.__name__, graph, arguments, gpus=gpus, client=client, workers=workers)

    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in _RUNTIME]
    wrapper.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
    return wrapper
