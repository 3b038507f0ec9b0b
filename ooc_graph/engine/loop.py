"""The engine loop of iterative algorithms (Gunrock essentials' enactor): an algorithm supplies
its steps (:class:`Steps`), the loop owns iteration, the double buffer, looking at each
iteration's convergence measure one step late, and the result's hand-off during the last pass.

On a GPU (alone, or with NCCL among the ranks) the host looks at each step's sums one step late:
it queues step i + 1 (into the second buffer, reading step i's carried sums on the device) before
waiting for step i's measure, so the device never idles while the host decides. Where step i has
converged, step i + 1 is dropped: the answer and the iteration count are those of looking at
once. Where the measures so far say step i will probably converge, the host looks at it before
queuing more (a wasted step costs a pass, a wrong guess a pause); on one GPU that step runs by
destination stripes, each sent to the host as it is done, so the result's copy overlaps the pass
instead of following it (a fifth of a pass on R-MAT-25).
"""

from __future__ import annotations

import logging

log = logging.getLogger("ooc_graph.engine")


class Steps:
    """What an iterative algorithm gives :func:`iterate` (PageRank's is the model): each step
    pulls over the arcs, then updates x from the pull, giving sums whose first value is the
    step's convergence measure."""

    shared = None  # what each rank shares with the others after a step (its range, gathered)
    stripeable = False  # whether pull() can run by destination stripes (then=)

    def pull(self, then=None):
        """The step's pass over the arcs; with ``then(lo, hi)`` by destination stripes, calling
        it on each stripe once pulled and returning the list of what it returned."""
        raise NotImplementedError

    def update(self, x, out, part: slice, final: bool):
        """Update the vertices ``part`` from ``x`` (into ``out``, or ``x`` itself where None);
        ``final``: a stripe of the last step, whose shared values no pull will read. Returns the
        device sums (the measure first) of ``part``."""
        raise NotImplementedError

    def carry(self, sums, late: bool) -> None:
        """Keep what the next step needs of the step's sums over the ranks (:class:`~.core.Sums`;
        ``late``: read them on the device, their host copy not yet there)."""

    def reshare(self, x, part: slice) -> None:
        """Recompute the shared values of ``part`` from ``x`` (a final step left them out)."""
        raise NotImplementedError


def iterate(eng, steps: Steps, x, *, max_iter: int, tol: float, until_tol: bool = True,
            measure: str = "change", logger=log):
    """Run ``steps`` from ``x`` until a step's measure falls below ``tol`` (with ``until_tol``)
    or ``max_iter`` steps; returns ``(x, iterations, converged)``. Each step is reported to the
    engine with its measure."""
    xp = eng.backend.xp
    lo, hi = eng.owned
    mine = slice(lo, hi)  # each rank updates its own vertices (all of them in one process)
    ahead = eng.sums_arrive_late
    spare = xp.empty_like(x) if ahead else x
    by_stripes = ahead and steps.stripeable and eng.sends_results
    seen = []  # the measures looked at so far

    def look(i, sums) -> bool:
        err = float(sums.host()[0])
        seen.append(err)
        eng.report(i, err)
        logger.info("iteration %d: %s %.3e (stop below %.3e)", i, measure, err, tol)
        return until_tol and err < tol

    def update(part: slice, final: bool = False):
        sums = steps.update(x, spare if ahead else None, part, final)
        if final:  # a stripe of the probable last step, sent to the host at once
            eng.send_result(spare, part.start, part.stop)
        return sums

    converged, it, late = x.size == 0, 0, None  # late: (iteration, Sums) not looked at yet
    while not converged and it < max_iter:
        it += 1
        final = by_stripes and (it == max_iter or (until_tol and probably_last(seen, tol, 2 if late else 1)))
        if final:
            sums = xp.stack(steps.pull(then=lambda a, b: update(slice(a, b), final=True))).sum(axis=0)
        else:
            steps.pull()
            sums = update(mine)
        if not ahead:
            eng.gather(steps.shared, wait=False)  # queued: the sums below wait for it
            now = eng.sum_over_workers(sums, wait=False)
            steps.carry(now, late=False)
            converged = look(it, now)
            continue
        if late is not None and look(*late):
            it, converged = it - 1, True  # step it - 1 had converged: x is its result, step it is dropped
            break
        # Whether step it is probably the last (the measures so far say it converges, or max_iter):
        # then the host looks at it at once, and its shared values, which only a next pull reads,
        # are sent only if it was not.
        last = final or it == max_iter or (until_tol and probably_last(seen, tol))
        if not last:
            eng.gather(steps.shared, wait=False)  # queued: the sums below go with it
        now = eng.sum_over_workers(sums, wait=False)
        x, spare = spare, x
        steps.carry(now, late=True)
        late = (it, now)
        if last:
            converged, late = look(*late), None
            if not converged and it < max_iter:
                if final:  # its step left them out, and its values sent are not the answer
                    steps.reshare(x, mine)
                    eng.unsend()
                eng.gather(steps.shared, wait=False)  # the next pull needs them after all
    return x, it, converged


def probably_last(seen, tol: float, steps: int = 1) -> bool:
    """Whether the ``steps``-th step after the last one looked at will probably have a measure
    below ``tol``: the last measure times the last ratio of measures to that power (they shrink
    about geometrically), with a margin of a quarter."""
    if len(seen) < 2 or not seen[-2] > 0:
        return False
    return seen[-1] * min(1.0, seen[-1] / seen[-2]) ** steps < 1.25 * tol
