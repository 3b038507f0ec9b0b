"""A job's lifecycle as its client knows it: a small state machine, testable without a cluster.

::

    pending ──rank 0 reports──▶ running ──result──▶ finished
       │                          │
       ├──────────────────────────┴──error──▶ failed
       └──────────────────────────┴──cancel──▶ cancelled

``finished``, ``failed`` and ``cancelled`` are final: whatever happens after (a late result, a
second error, a cancel) changes nothing. A cancel takes effect at once on the client's side (the
job says ``cancelled`` from then on, and its result is not taken), while the ranks stop at their
next look. The error a job ends with is kept and raised again by every later ``result()``.

:class:`~.jobs.Job` keeps one :class:`Lifecycle` and asks the cluster only while it has not
ended.

>>> life = Lifecycle()
>>> life.state, life.ended
('pending', False)
>>> life.running(); life.state
'running'
>>> life.finish("the result")
True
>>> life.cancel(), life.fail(RuntimeError("late")), life.state, life.result
(False, False, 'finished', 'the result')
"""

from __future__ import annotations

from ooc_graph.errors import JobCancelled

STATES = ("pending", "running", "finished", "failed", "cancelled")
ENDED = frozenset(("finished", "failed", "cancelled"))


class Lifecycle:
    """Where a job stands (:data:`STATES`), its result once finished, and the error it ended
    with (a cancelled job's is the :class:`~ooc_graph.errors.JobCancelled` its ``result()``
    raised; ``None`` until then)."""

    __slots__ = ("state", "result", "error")

    def __init__(self):
        self.state, self.result, self.error = "pending", None, None

    def __repr__(self):
        return f"<Lifecycle {self.state}>"

    @property
    def ended(self) -> bool:
        return self.state in ENDED

    def running(self) -> None:
        """Rank 0 has reported: a pending job runs (any other state stays)."""
        if self.state == "pending":
            self.state = "running"

    def finish(self, result) -> bool:
        """The job's result has arrived: whether it is taken (not after an end, a cancel included)."""
        if self.ended:
            return False
        self.state, self.result = "finished", result
        return True

    def cancel(self) -> bool:
        """Cancel asked: whether that changed anything (a job that has ended stays as it ended)."""
        if self.ended:
            return False
        self.state = "cancelled"
        return True

    def fail(self, error: BaseException) -> bool:
        """The job ended with ``error``: ``failed``, or ``cancelled`` for :class:`JobCancelled` or
        after a cancel (the error it is cancelled with is recorded then). Whether it was taken:
        not after a result or an earlier error."""
        if self.state in ("finished", "failed") or self.error is not None:
            return False
        if isinstance(error, JobCancelled):
            self.state = "cancelled"
        elif self.state != "cancelled":
            self.state = "failed"
        self.error = error
        return True
