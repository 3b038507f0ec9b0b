"""A worker's state (runtime/worker_state.py) without a cluster: idle stores kept between jobs,
never shared by two at once, plans made once per open store, progress records and
cancels bounded, and the worker plugin closing the stores at teardown."""

import os

import numpy as np
import pytest

import ooc_graph
from ooc_graph.runtime.worker_state import WorkerState


@pytest.fixture
def store(tmp_path):
    path = tmp_path / "g.h5"
    ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 3], [3, 0]]), path, progress=False).close()
    return str(path)


def test_stores_are_never_shared_by_jobs_at_once_and_plans_are_made_once(store):
    """(Replaced stores: test_distributed.py::test_a_worker_does_not_reuse_a_graph_whose_store_was_replaced.)"""
    s = WorkerState()
    g, state = s.checkout(store)
    other, _ = s.checkout(store)  # a job running at the same time gets its own
    assert other is not g
    parts = s.plan(g, 2)
    assert sum(p.num_arcs for p in parts) == 4 and s.plan(g, 2) is parts and s.plan(other, 2) is not parts
    s.checkin(store, g, state)
    s.checkin(store, other, state)
    assert {s.checkout(store)[0], s.checkout(store)[0]} == {g, other}
    s.checkin(store, g, state)
    s.checkin(store, other, state)
    assert s.release_all() == 2 and s.release_all() == 0 and g.closed and other.closed


def test_progress_records_are_bounded_and_copied():
    s = WorkerState(keep=2)
    s.record("a", state="running", iteration=1)
    s.record("a", iteration=2)
    record = s.progress("a")
    assert record["state"] == "running" and record["iteration"] == 2 and record["pid"] == os.getpid()
    record["iteration"] = 99
    assert s.progress("a")["iteration"] == 2
    s.record("b", iteration=1)
    s.record("c", iteration=1)
    assert s.progress("a") is None and s.progress("c") is not None


def test_the_plugin_closes_the_stores_at_teardown(store):
    pytest.importorskip("distributed")
    from ooc_graph.runtime import plugins, worker_state
    plugin = plugins.KeepWorkerState()
    plugin.setup(None)
    s = worker_state.current()  # this process's, as on a worker
    s.release_all()
    g, state = s.checkout(store)
    g.csr("out")
    s.checkin(store, g, state)
    plugin.teardown(None)
    assert s.release_all() == 0 and s.checkout(store)[0] is not g
