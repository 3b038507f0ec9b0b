"""progress= on every algorithm (issue 31): a callable hears rising iterations, True draws a bar
off a terminal too, None draws nothing there and leaves an enclosing watcher (the command
line's) in charge; conversion and generation take the same values."""

import inspect
import io
import sys

import numpy as np
import pytest

import ooc_graph
from ooc_graph import registry
from ooc_graph._progress import Listener
from ooc_graph.engine.monitor import watching
from ooc_graph.errors import ParameterError


@pytest.fixture(scope="module")
def graph(tmp_path_factory):
    return ooc_graph.generate.rmat(tmp_path_factory.mktemp("p") / "r.h5", 7, seed=2, progress=False)


def _call(name, G, **kw):
    found = registry.get(name)
    required = {p: 0 for p, v in found.parameters.items() if v.default is inspect.Parameter.empty and p != "G"}
    extra = {"alpha": 0.01} if name == "katz_centrality" else {}
    return found.function(G, **required, **extra, device="cpu", **kw)


@pytest.mark.parametrize("name", sorted(registry.algorithms()))
def test_a_callable_hears_rising_iterations(graph, name):
    heard = []
    _call(name, graph, progress=lambda iteration, measure: heard.append((iteration, measure)))
    assert heard, f"{name} reported nothing"
    steps = [i for i, _ in heard]
    assert all(isinstance(i, int) for i in steps) and steps[0] >= 1
    assert all(b > a for a, b in zip(steps, steps[1:])), steps
    assert all(m is None or isinstance(m, (int, float)) for _, m in heard)


def test_in_memory_algorithms_report_their_parts(graph, configure):
    for compiled in (True, False):
        configure({"cpu.compiled": compiled})
        for name in ("triangle_count", "lcc"):
            heard = []
            r = _call(name, graph, progress=lambda i, m: heard.append(i))
            quiet = _call(name, graph)
            assert heard == list(range(1, 17))  # _wedges.REPORTS parts
            values = (r.counts, quiet.counts) if name == "triangle_count" else (r.values, quiet.values)
            assert np.array_equal(*values)  # done in parts or whole, the same answer
        heard = []
        r = _call("louvain", graph, progress=lambda i, m: heard.append((i, m)))
        assert [i for i, _ in heard] == list(range(1, r.stats["sweeps"] + 1))  # every sweep
        assert heard[-1][1] == 0 and all(isinstance(m, int) for _, m in heard)  # vertices moved


def test_true_draws_a_bar_off_a_terminal_and_none_does_not(graph, monkeypatch):
    err = io.StringIO()  # not a terminal
    monkeypatch.setattr(sys, "stderr", err)
    _call("pagerank", graph, progress=True)
    _call("louvain", graph, progress=True)
    # the CLI's line: the iteration and measure, no total (max_iter) and no time left
    assert "pagerank: iteration " in err.getvalue() and "louvain: iteration " in err.getvalue()
    assert "/100" not in err.getvalue()
    err.truncate(0)
    err.seek(0)
    _call("pagerank", graph)
    _call("pagerank", graph, progress=False)
    assert err.getvalue() == ""


def test_none_leaves_reports_to_the_watcher_around(graph, monkeypatch):
    """The command line's bar watches the call (engine.monitor.watching); progress=None keeps it."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    heard = []
    with watching(lambda i, m: heard.append(i)):
        _call("pagerank", graph)
        _call("louvain", graph)
    assert len(heard) > 2


def test_listener_counts_on_across_loops():
    heard = []
    listen = Listener("x", lambda i, m: heard.append(i))
    for i in (1, 2, 3, 1, 2, 0, 0, 5, 4):
        listen(i, None)
    assert heard == [1, 2, 3, 4, 5, 6, 7, 12, 16]


def test_bad_progress_is_one_line(graph):
    for bad in ("yes", 1, [print]):
        with pytest.raises(ParameterError, match="progress must be None, True, False or a callable"):
            ooc_graph.pagerank(graph, progress=bad)
    assert "progress" in inspect.signature(ooc_graph.louvain).parameters


def test_conversion_and_generation_bars_off_a_terminal(tmp_path, monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    edges = np.array([[0, 1], [1, 2]])
    ooc_graph.convert(edges, tmp_path / "a.h5")  # default: a terminal only
    assert err.getvalue() == ""
    ooc_graph.convert(edges, tmp_path / "b.h5", progress=True)
    assert "partitioning" in err.getvalue()
    ooc_graph.generate.rmat(tmp_path / "r.h5", 6, progress=True)
    with pytest.raises(ParameterError, match="progress must be True or False"):
        ooc_graph.convert(edges, tmp_path / "c.h5", progress="yes")


def test_a_job_on_a_cluster_forwards_rank_zeros_reports(monkeypatch):
    """calls.follow passes each new report of rank 0 on once while the job runs, then the final
    one (Ctrl-C cancels it), and the registry gives run_distributed the listener (gpus=/client=/workers=)."""
    from ooc_graph.runtime import calls

    class Job:
        def __init__(self, records):
            self.records, self.cancelled = list(records), False

        def status(self):
            return "running" if self.records else "finished"

        def progress(self):
            if not self.records:  # ended: the final record (Job.progress after the end)
                return {"state": "finished", "iteration": 3, "measure": 0.01}
            record = self.records.pop(0)
            if isinstance(record, BaseException):
                raise record
            return record

        def cancel(self):
            self.cancelled = True

    heard = []
    job = Job([None, {"state": "running", "iteration": 1, "measure": 0.5}, {"state": "running", "iteration": 1},
               {"state": "unresponsive", "worker": "w", "waited": 1.0}, {"iteration": 2, "measure": 0.1}])
    calls.follow(job, lambda i, m: heard.append((i, m)), poll=0)
    assert heard == [(1, 0.5), (2, 0.1), (3, 0.01)] and not job.cancelled  # the last iteration too
    job = Job([{"iteration": 1}, KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        calls.follow(job, lambda i, m: None, poll=0)
    assert job.cancelled
    given = {}

    def run_distributed(name, graph, arguments, **kw):
        given.update(kw, name=name)
        if kw["on_report"] is not None:
            kw["on_report"](3, 0.25)

    monkeypatch.setattr(calls, "run_distributed", run_distributed)
    heard = []
    ooc_graph.pagerank("unused.h5", workers=2, progress=lambda i, m: heard.append((i, m)))
    assert given["name"] == "pagerank" and given["workers"] == 2 and heard == [(3, 0.25)]
    ooc_graph.pagerank("unused.h5", workers=2, progress=False)
    assert given["on_report"] is None
