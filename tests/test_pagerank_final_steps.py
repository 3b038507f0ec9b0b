"""PageRank's host loop where sums arrive late and results are sent during the last pass (one
GPU), run on the CPU with the device's parts stood in for: every guess of the last step, right,
early or one step late, gives the answer, iteration count and convergence of looking at once, and
a sent array is the answer only where its values are final."""

import pytest

import ooc_graph
from ooc_graph.engine import Engine, hostbuf
from ooc_graph.kernels import cpu

from conftest import LAST_STEP_GUESSES, assert_guessed_run, guess_last_step, pagerank_guess_cases


class _Landed:
    def synchronize(self):
        pass


def _as_on_one_gpu(monkeypatch):
    """The CPU engine with a GPU's protocol: sums looked at one step late, results sent as soon
    as they are final (copied at once here), into prepared host memory. Returns the sends."""
    sends = []

    def send(array, out):
        out[...] = array
        sends.append(True)
        return _Landed()

    monkeypatch.setattr(cpu, "to_host_later", lambda a: (a.copy(), None), raising=False)
    monkeypatch.setattr(cpu, "page_locked", lambda a: True, raising=False)
    monkeypatch.setattr(cpu, "to_host_behind", send, raising=False)
    monkeypatch.setattr(Engine, "sums_arrive_late", property(lambda self: True))
    monkeypatch.setattr(Engine, "sends_results", property(lambda self: True))
    monkeypatch.setattr(hostbuf.Prepared, "ready", property(lambda self: self._thread.join() or True))
    monkeypatch.setattr(Engine, "prepare_results", lambda self, dtypes: setattr(
        self, "_prepared", hostbuf.Prepared([((self.graph.num_vertices,), d) for d in dtypes])))
    return sends


@pytest.mark.parametrize("guess", LAST_STEP_GUESSES)
def test_every_guess_of_the_last_step_gives_the_answer_of_looking_at_once(guess_graph, monkeypatch, guess):
    kws = pagerank_guess_cases({3: 1.0, 70: 0.5, 2900: 2.0})
    refs = [ooc_graph.pagerank(guess_graph, device="cpu", **kw) for kw in kws]  # the CPU looks at once
    sends = _as_on_one_gpu(monkeypatch)
    guess_last_step(monkeypatch, guess)
    for kw, ref in zip(kws, refs):
        sends.clear()
        assert_guessed_run(guess, kw, ref, ooc_graph.pagerank(guess_graph, device="cpu", **kw), sends, 1e-12)
