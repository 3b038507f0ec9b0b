"""A job's lifecycle (runtime/lifecycle.py) and the Job handle on it, without a cluster: the
transitions, final states staying final, and Job.status/done/cancel/result/progress in each."""

import threading
from types import SimpleNamespace

import pytest

from ooc_graph.errors import JobCancelled, JobError, ParameterError
from ooc_graph.runtime import jobs
from ooc_graph.runtime.lifecycle import ENDED, STATES, Lifecycle


def _in(state):
    life = Lifecycle()
    if state == "running":
        life.running()
    elif state == "finished":
        life.finish("r")
    elif state == "failed":
        life.fail(RuntimeError("x"))
    elif state == "cancelled":
        life.cancel()
    assert life.state == state
    return life


@pytest.mark.parametrize("state", STATES)
def test_transitions_from_every_state(state):
    ended = state in ENDED
    life = _in(state)
    life.running()
    assert life.state == ("running" if state == "pending" else state)
    life = _in(state)
    assert life.finish("late") is (not ended) and life.state == ("finished" if not ended else state)
    life = _in(state)
    assert life.cancel() is (not ended) and life.state == ("cancelled" if not ended else state)
    life = _in(state)
    err = RuntimeError("boom")
    taken = life.fail(err)
    assert taken is (state != "finished" and state != "failed")
    assert life.state == {"finished": "finished", "failed": "failed", "cancelled": "cancelled"}.get(state, "failed")
    assert (life.error is err) is taken


def test_a_cancel_then_its_error_and_nothing_after():
    life = Lifecycle()
    assert life.cancel() and life.ended and life.error is None
    stop = JobCancelled("job j was cancelled")
    assert life.fail(stop) and life.state == "cancelled" and life.error is stop
    assert not life.fail(RuntimeError("later")) and life.error is stop
    assert not life.finish("r") and life.result is None
    life = Lifecycle()
    assert life.fail(JobCancelled("j")) and life.state == "cancelled"  # cancelled on the workers' side


# -- the Job handle on it, with stand-ins for the cluster ------------------------------------------
class _Future:
    def __init__(self, status="pending", error=None):
        self.status, self.error, self.cancelled = status, error, False

    def exception(self):
        return self.error

    def cancel(self):
        self.cancelled = True


@pytest.fixture
def cluster(monkeypatch):
    """Records what the Job asks of the workers; every worker alive."""
    asked = []
    monkeypatch.setattr(jobs, "on_workers", lambda client, fn, *a, **kw: asked.append(fn.__name__) or {})
    monkeypatch.setattr(jobs, "alive_workers", lambda client: ["w0", "w1"])
    monkeypatch.setattr(jobs._launch, "cancel", lambda *a: asked.append("direct cancel") or [0, 1])
    monkeypatch.setattr(jobs._segments, "remove_made", lambda job_id: None)
    monkeypatch.setattr(jobs._segments, "pool", lambda: SimpleNamespace(settle=lambda *a, **kw: None))
    return asked


def _job(futures):
    job = object.__new__(jobs.Job)
    job.client = SimpleNamespace(status="running")
    job.spec = SimpleNamespace(job_id="pagerank-1-x", algorithm="pagerank", path="/g.h5", workers=["w0", "w1"],
                               segments=[])
    job.id, job.graph, job.t0, job._seen = job.spec.job_id, None, 0.0, None
    job.life, job.futures, job._listener = jobs.Lifecycle(), futures, None
    job._wake, job._addresses, job._tokens = threading.Event(), ["a0", "a1"], ["t0", "t1"]
    job._sent = (0.0, 0.0)
    return job


def test_cancel_wins_over_a_result_not_yet_taken(cluster):
    job = _job([_Future("finished"), _Future("finished")])  # the ranks ended; result() not called yet
    job.cancel()
    assert cluster == ["cancel_job"] and job.status() == "cancelled" and job.done()
    with pytest.raises(JobCancelled, match="job pagerank-1-x .* was cancelled") as first:
        job.result()
    with pytest.raises(JobCancelled) as again:
        job.result()
    assert again.value is first.value and job.exception() is first.value
    job.cancel()  # ended: nothing sent
    assert cluster == ["cancel_job", "forget_job"] and all(f.cancelled for f in job.futures)
    assert job.progress()["state"] == "cancelled"


def test_a_finished_job_stays_finished(cluster, monkeypatch):
    result = SimpleNamespace(stats={"ranks": [{"started": 0.0}], "convergence": [(4, 1e-7)]}, iterations=4,
                             seconds=0.5)
    monkeypatch.setattr(jobs, "_combine", lambda parts, *a: result)
    job = _job([_Future("finished"), _Future("finished")])
    job.client.gather = lambda futures: [{"result": result}, {}]
    assert job.result() is result and job.status() == "finished" and job.done()
    assert job.progress() == {"state": "finished", "iteration": 4, "measure": 1e-7, "seconds": 0.5}
    job.cancel()
    assert job.status() == "finished" and job.result() is result and job.exception() is None
    assert cluster == []  # nothing asked of the workers after the end


def test_a_failed_rank_fails_the_job_with_its_own_error(cluster):
    own = ParameterError("source 99 is not a vertex (ids are 0..9)")
    job = _job([_Future("error", own), _Future("error", JobError("peer closed its connection"))])
    assert job.status() == "failed"
    with pytest.raises(ParameterError, match="source 99") as raised:
        job.result()
    assert raised.value is own and job.life.state == "failed" and job.done()
    job.cancel()  # ended: stays failed
    assert job.status() == "failed" and job.progress()["state"] == "failed"
    job = _job([_Future("pending"), _Future("pending")])
    job.client.status = "closed"  # the client went away: cancelled on the hubs, the job failed
    assert job.status() == "failed" and "direct cancel" in cluster
    with pytest.raises(JobError, match="its dask client was closed"):
        job.result()
