"""The one list of algorithms: each registers itself with :func:`algorithm`, and the package, the
command line, the networkx backend and the distributed runtime read :func:`algorithms` / :func:`get`
/ :func:`names` (none keeps a list of its own). Each algorithm's module is imported when first
needed (:data:`ooc_graph.algorithms.ALGORITHMS` names it): :func:`get` imports that one,
:func:`names` none, :func:`algorithms` all of them.

The decorator also gives every algorithm the same front door:

- the call's arguments are bound to the function's signature first, so an unknown keyword, a
  missing or repeated ``source`` is a one-line :class:`~ooc_graph.errors.ParameterError` listing
  the valid keywords, never a ``TypeError`` from inside;
- the keywords every algorithm shares (``device``, ``memory``, ``device_memory``, ``profile``,
  ``store``, ``output``) are checked the same way everywhere, before anything is read;
- every algorithm takes ``progress=``: ``None`` (the default: a bar where stderr is a terminal,
  nothing elsewhere, or the reports go to whoever already watches, as the command line's bar),
  ``True`` (a ``tqdm.auto`` bar wherever it runs: Jupyter, a log), ``False`` (nothing), or a
  callable ``progress(iteration, measure)`` — the iteration rising at every report, the measure a
  residual (float), a count of vertices changed or moved (int), or None. The reports are the
  engine's (:meth:`~ooc_graph.engine.Engine.report`, through
  :func:`~ooc_graph.engine.monitor.watching`) and the in-memory algorithms' blocks and sweeps; a
  job on a cluster forwards rank 0's (see :mod:`ooc_graph._progress`);
- an algorithm that ``distributes`` takes ``gpus=``, ``client=`` and ``workers=`` and then runs as
  a job on a cluster (:func:`ooc_graph.runtime.calls.run_distributed`), returning the same result.

nx-cugraph's ``networkx_algorithm`` decorator and networkx's ``_dispatchable`` are the models.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from ._progress import check_progress, listening
from ._records import record
from .errors import ParameterError, choice

__all__ = ["Algorithm", "Option", "algorithm", "algorithms", "names", "get", "DEVICES", "OUTPUTS", "RUNTIME"]

DEVICES = ("auto", "cpu", "gpu")
# Where a call returns its per-vertex arrays (``output=``).
OUTPUTS = ("numpy", "cupy")
# The keywords that run an algorithm that distributes as a job on a cluster.
RUNTIME = ("gpus", "client", "workers")


@record(frozen=True)
class Option:
    """One of an algorithm's keywords on the command line (``--max-iter`` for ``max_iter``); type
    ``bool`` gives a ``--x/--no-x`` pair."""

    flag: str
    type: object
    help: str
    default: object = None
    choices: tuple | None = None
    required: bool = False

    @property
    def keyword(self) -> str:
        return self.flag[2:].replace("-", "_")


@record(frozen=True)
class Algorithm:
    """What the registry knows of an algorithm."""

    name: str
    function: object        # the public function (the decorated one)
    result: type            # the class of what it returns
    distributes: bool       # takes gpus=/client=/workers= and runs as a job
    options: tuple          # its Options on the command line
    summary: str            # the first line of its docstring

    @property
    def parameters(self):
        """Its own keywords (not the runtime's), in order, as ``inspect.Parameter``s."""
        return inspect.signature(self.function.__wrapped__).parameters


_REGISTRY: dict[str, Algorithm] = {}


def algorithm(*, result: type, options=(), distributes: bool = True):
    """Register the decorated function under its name (see the module's docstring)."""
    def register(fn):
        sig = inspect.signature(fn)
        name = fn.__name__

        @functools.wraps(fn)
        def call(*args, gpus=None, client=None, workers=None, progress=None, **kwargs):
            arguments = _bind(name, sig, args, kwargs)
            check_progress(progress)
            total = arguments.get("max_iter", sig.parameters["max_iter"].default) \
                if "max_iter" in sig.parameters else None
            if gpus is None and client is None and workers is None:
                # values that overflow are caught where the iteration reports them (a clear
                # ConvergenceError), not warned about by NumPy on the way there
                with listening(name, progress, total), np.errstate(over="ignore", invalid="ignore"):
                    return fn(*args, **kwargs)
            if not distributes:
                raise ParameterError(f"{name} runs in one process (it holds the graph in memory); call it "
                                     "without gpus=/client=/workers=")
            from .runtime.calls import run_distributed
            graph = arguments.pop(next(iter(sig.parameters)))
            with listening(name, progress, total) as listener:
                return run_distributed(name, graph, arguments, gpus=gpus, client=client, workers=workers,
                                       on_report=listener)

        extra = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=None)
                 for k in (RUNTIME if distributes else ()) + ("progress",)]
        # (without the runtime keywords, calling with them is still a clear error: see call)
        call.__signature__ = sig.replace(parameters=list(sig.parameters.values()) + extra)
        doc = (fn.__doc__ or "").strip()
        _REGISTRY[name] = Algorithm(name, call, result, distributes, tuple(options),
                                    doc.split("\n")[0].rstrip(".").replace("``", "") if doc else "")
        return call
    return register


def _bind(name: str, sig, args, kwargs) -> dict:
    """The call's arguments by name, defaults left out (a ParameterError for a call that does not
    fit the signature), with the shared keywords checked."""
    try:
        bound = sig.bind(*args, **kwargs)
    except TypeError as err:
        valid = [p for p in sig.parameters if p != next(iter(sig.parameters))]
        raise ParameterError(f"{name}: {err} (its keywords: {', '.join(valid)})") from None
    arguments = dict(bound.arguments)
    _check_shared(arguments)
    return arguments


def _check_shared(arguments: dict) -> None:
    """The keywords every algorithm means the same by: checked here, once, for all of them."""
    from ._memory import parse_size
    if "device" in arguments and arguments["device"] not in DEVICES:
        raise choice("device", arguments["device"], DEVICES)
    for key in ("memory", "device_memory"):
        if arguments.get(key) is not None:
            try:
                parse_size(arguments[key])
            except ParameterError as err:
                raise ParameterError(f"{key}: {err}") from None
    if "profile" in arguments and not isinstance(arguments["profile"], bool):
        raise ParameterError(f"profile must be True or False (got {arguments['profile']!r})")
    if "output" in arguments and arguments["output"] not in OUTPUTS:
        raise choice("output", arguments["output"], OUTPUTS)
    store = arguments.get("store", False)
    if not isinstance(store, bool):
        if not isinstance(store, str):
            raise ParameterError(f"store must be True, False or a result name (got {store!r})")
        from .store.results import check_result_name
        check_result_name(store)


def names() -> list[str]:
    """Every algorithm's name, in order, without importing their modules (the command line's list)."""
    from .algorithms import ALGORITHMS
    return list(ALGORITHMS) + [name for name in _REGISTRY if name not in ALGORITHMS]


def algorithms() -> dict[str, Algorithm]:
    """Every registered algorithm by name, in the order of :func:`names` (each module registers
    its algorithm when first imported: this imports them all)."""
    from . import algorithms as package
    for name in package.ALGORITHMS:
        if name not in _REGISTRY:
            getattr(package, name)
    return {name: _REGISTRY[name] for name in names()}


def get(name: str) -> Algorithm:
    """The algorithm ``name`` (importing its module only), or a ParameterError listing the valid names."""
    found = _REGISTRY.get(name)
    if found is None:
        from . import algorithms as package
        if name in package.ALGORITHMS:
            getattr(package, name)
            found = _REGISTRY[name]
    if found is None:
        raise choice("algorithm", name, sorted(names()))
    return found
