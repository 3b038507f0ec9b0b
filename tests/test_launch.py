"""Direct starts of a job's ranks (runtime/launch.py): each rank runs once, from whichever of the
client's start and dask's task comes first; a hub takes starts only with its token."""

import socket
import threading
import time

import numpy as np
import pytest

import ooc_graph
from ooc_graph.runtime import launch, mesh, wire

from conftest import dask_client, random_edges


def test_a_started_rank_runs_once_and_its_task_returns_its_outcome():
    ranks, calls, gate = launch.Ranks(), [], threading.Event()

    def body(x):
        calls.append(x)
        gate.wait(10)
        return x * 2

    assert ranks.pushed("job-1", body, 21)
    assert not ranks.pushed("job-1", body, 21)  # a second start of the same job runs nothing
    gate.set()
    assert ranks.task("job-1", body, 21) == 42
    assert calls == [21]


def test_a_task_that_comes_first_runs_its_rank_and_a_later_start_is_ignored():
    ranks, calls = launch.Ranks(), []
    assert ranks.task("job-2", lambda: calls.append("task") or "ran") == "ran"
    assert not ranks.pushed("job-2", lambda: calls.append("late start"))
    time.sleep(0.05)
    assert calls == ["task"]


def test_a_started_rank_that_fails_fails_its_task():
    ranks = launch.Ranks()

    def body():
        raise ValueError("bad rank")

    assert ranks.pushed("job-3", body)
    with pytest.raises(ValueError, match="bad rank"):
        ranks.task("job-3", body)


def test_started_ranks_beyond_the_limit_wait_for_their_tasks(monkeypatch):
    monkeypatch.setattr(launch, "PUSHED", 1)
    ranks, gate = launch.Ranks(), threading.Event()
    assert ranks.pushed("job-a", gate.wait, 10)
    assert not ranks.pushed("job-b", lambda: None)  # one runs already
    assert ranks.task("job-b", lambda: "by its task") == "by its task"
    gate.set()
    assert ranks.task("job-a", lambda: "not run") is True
    assert ranks.pushed("job-c", lambda: "now") and ranks.task("job-c", lambda: None) == "now"


def test_a_forgotten_job_keeps_nothing_and_never_starts_again():
    ranks = launch.Ranks()
    assert ranks.pushed("job-4", lambda: np.zeros(10))
    ranks.forget("job-4")
    assert not ranks.pushed("job-4", lambda: None)


def test_a_cancel_outlives_the_client_forgetting_the_job():
    """The client forgets a job as soon as it raises JobCancelled: ranks that have not looked at
    the cancel yet must still see it (they ran on to the end before), and old cancels are let go."""
    from ooc_graph.runtime.worker_state import WorkerState
    state = WorkerState(keep=3)
    state.cancel("job-x")
    state.record("job-x", state="running", iteration=1)
    state.forget("job-x")
    assert state.cancelled("job-x") and not state.cancelled("job-y") and state.progress("job-x") is None
    for i in range(3):
        state.cancel(f"job-{i}")
    assert not state.cancelled("job-x") and state.cancelled("job-2")


def _send_start(address, token: str, rank: int, payload: bytes):
    with socket.create_connection(address, timeout=5) as sock:
        wire.introduce(sock, wire.START, "job-s", rank, token.encode(), payload)


def test_a_hub_takes_starts_only_with_its_token():
    hub = mesh.Hub("127.0.0.1")
    got, arrived = [], threading.Event()
    hub.on_start = lambda h, rank, payload: (got.append((h, rank, wire.loads(payload))), arrived.set())
    token = launch.hub_token(hub)
    assert launch.hub_token(hub) == token and len(token) >= 32
    _send_start(hub.address, "0" * len(token), 1, wire.dumps("forged"))
    _send_start(hub.address, token, 1, wire.dumps("start"))
    assert arrived.wait(5)
    time.sleep(0.05)
    assert got == [(hub, 1, "start")]
    # push() reaches it too, and says which ranks it could not reach (no token, or no hub there)
    dead = socket.create_server(("127.0.0.1", 0))
    closed = dead.getsockname()[:2]
    dead.close()
    arrived.clear()
    missed = launch.push("job-5", [hub.address, hub.address, closed], [token, None, "x" * 32], wire.dumps("pushed"))
    assert missed == [1, 2] and arrived.wait(5)
    assert got[-1] == (hub, 0, "pushed")
    hub.close()


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")  # only the job test needs it
    with dask_client(2, 1) as c:  # one task slot a worker
        yield c


@pytest.mark.timeout(300)
def test_jobs_start_directly_or_from_their_tasks_and_agree(client, tmp_path, monkeypatch):
    """Ranks the client starts directly give the answers of ranks their tasks start; two jobs
    submitted at once on workers of one task slot each both finish (a task waiting for its
    started rank gives its slot back)."""
    g = ooc_graph.convert(random_edges(np.random.default_rng(3), n=300, m=2000), tmp_path / "g.h5", progress=False)
    local = ooc_graph.pagerank(g, tol=1e-12, device="cpu").values
    jobs = [ooc_graph.submit(client, "pagerank", g, tol=1e-12), ooc_graph.submit(client, "bfs", g, source=0)]
    first, second = (j.result(timeout=120) for j in jobs)
    assert np.abs(first.values - local).sum() <= 1e-12
    np.testing.assert_array_equal(second.depth, ooc_graph.bfs(g, source=0, device="cpu").depth)
    starts = [r["start"] for r in first.stats["ranks"] + second.stats["ranks"]]
    assert set(starts) <= {"direct", "task"} and "direct" in starts
    monkeypatch.setattr(launch, "push", lambda job, addresses, tokens, payload: list(range(len(addresses))))
    by_tasks = ooc_graph.submit(client, "pagerank", g, tol=1e-12).result(timeout=120)
    assert [r["start"] for r in by_tasks.stats["ranks"]] == ["task", "task"]
    assert np.abs(by_tasks.values - local).sum() <= 1e-12
