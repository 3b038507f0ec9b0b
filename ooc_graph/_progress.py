"""Progress: tqdm bars (``tqdm.auto``: a widget in Jupyter, text on stderr elsewhere) and what an
algorithm's ``progress=`` keyword becomes.

Everywhere ``progress=`` takes ``None`` (a bar where stderr is a terminal, nothing elsewhere: the
default), ``True`` (a bar wherever the call runs: a notebook, a log file), ``False`` (nothing);
an algorithm's takes also a callable ``progress(iteration, measure)``. An algorithm's reports
reach it through the engine's watcher (:func:`ooc_graph.engine.monitor.watching`, the path the
command line's bar takes): every convergence report of the engine's runs, and the blocks, levels
or sweeps of the algorithms that hold the graph in memory.
"""

from __future__ import annotations

import contextlib
import sys

from .errors import ParameterError


def on_terminal() -> bool:
    stderr = sys.stderr
    return bool(stderr is not None and getattr(stderr, "isatty", lambda: False)())


def shown(progress) -> bool:
    """Whether a bar is drawn for this ``progress=``: True always, False never, None on a terminal."""
    return on_terminal() if progress is None else bool(progress)


# An iterative run's line, ``pagerank: iteration 7, residual 0.0013 [00:04]``: no total and no time
# left, since a run ends on its measure far before its iteration limit (PageRank's max_iter showed
# as "1.00/100 it" with the ETA of a hundred iterations). tqdm puts ", " before the postfix.
LINE = "{desc}: iteration {n}{postfix} [{elapsed}]"


def progress_bar(*, total=None, unit="it", desc="", progress=None, disable=False, bar_format=None):
    """A tqdm bar with SI-scaled rates (arcs/s), drawn as :func:`shown` says (never with ``disable``);
    ``bar_format`` as tqdm's (:data:`LINE` for an iterative run)."""
    from tqdm.auto import tqdm  # on first use: tqdm.auto imports asyncio and looks for IPython (~0.15 s)
    return tqdm(total=total, unit=unit, unit_scale=True, desc=desc, leave=False, dynamic_ncols=True,
                disable=disable or not shown(progress), bar_format=bar_format)


def check_progress(progress) -> None:
    """An algorithm's ``progress=``: None, True, False or a callable (ParameterError otherwise)."""
    if progress is not None and not isinstance(progress, bool) and not callable(progress):
        raise ParameterError(f"progress must be None, True, False or a callable progress(iteration, measure) "
                             f"(got {progress!r})")


class Listener:
    """An algorithm's reports to a callable or a bar. The iteration passed on rises at every
    report: a run made of several loops (SCC's rounds and their traversals, betweenness's
    sources) reports each loop's iterations after the last loop's, not from 1 again."""

    def __init__(self, name: str, progress, total=None):
        self.call = progress if callable(progress) and not isinstance(progress, bool) else None
        self.bar = None
        self.name, self.total, self.progress = name, total, progress
        self.last = self.step = 0

    def __call__(self, iteration, measure) -> None:
        iteration = int(iteration)
        if iteration > self.last:
            self.step += iteration - self.last
        else:  # a new loop began: its iterations count on from here
            self.step += max(iteration, 1)
        self.last = iteration
        if self.call is not None:
            self.call(self.step, measure)
            return
        if self.bar is None:
            # the iteration and measure (:data:`LINE`), not a bar to ``total`` (max_iter, rarely reached)
            self.bar = progress_bar(unit="it", desc=self.name, progress=self.progress, bar_format=LINE)
        self.bar.update(self.step - self.bar.n)
        if isinstance(measure, float):
            self.bar.set_postfix_str(f"residual {measure:.3g}", refresh=False)
        elif measure is not None:
            self.bar.set_postfix_str(f"changed {int(measure):,}", refresh=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


@contextlib.contextmanager
def listening(name: str, progress, total=None):
    """The block's engine runs and in-memory algorithms report to ``progress`` (checked by
    :func:`check_progress`); yields the :class:`Listener`, or None where nothing listens. With
    ``None`` inside a block that is already watched (the command line's bar, an algorithm that
    calls another), the reports go where they went."""
    from .engine.monitor import current_watcher, watching
    if progress is False or (progress is None and (current_watcher() is not None or not on_terminal())):
        yield None
        return
    listener = Listener(name, progress, total)
    try:
        with watching(listener):
            yield listener
    finally:
        listener.close()
