"""The last PageRank pull on one GPU by destination stripes, each stripe's values sent to the host
as it is done: the stripes cut every arc once, and the answers, iteration counts and convergence
stay the CPU's whichever step the host guesses to be the last. Skipped where CuPy finds no device."""

import importlib

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.engine import Engine, hostbuf

from conftest import LAST_STEP_GUESSES, assert_guessed_run, guess_last_step, pagerank_guess_cases

pytestmark = pytest.mark.gpu
pagerank_module = importlib.import_module("ooc_graph.algorithms.pagerank")  # the package exports the function


@pytest.mark.parametrize("seed", range(4))
def test_destination_stripes_cut_every_arc_once(monkeypatch, configure, seed):
    import cupy as cp

    from ooc_graph.kernels import gpu as kgpu
    configure({"gpu.segment_bits": 4})
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 400))
    m = int(rng.integers(0, 3000))
    src, dst = (cp.asarray(rng.integers(0, n, m), dtype=cp.int32) for _ in range(2))
    whole = kgpu.source_blocked([kgpu.Batch(0, n, src, dst, None)], n)
    every = sorted(zip(src.get().tolist(), dst.get().tolist()))
    for stripes in (1, 3, 8, n - 1, n, n + 5):
        cut = kgpu.destination_stripes(whole, n, stripes)
        assert cut[0][0] == 0 and cut[-1][1] == n and all(a[1] == b[0] for a, b in zip(cut, cut[1:]))
        assert len(cut) <= stripes
        arcs = []
        for lo, hi, parts in cut:
            assert lo < hi
            for part in parts:
                s, d = part.src.get(), part.dst.get()
                assert part.num_arcs and ((d >= lo) & (d < hi)).all()
                assert (s >> 4 == s[0] >> 4).all()  # one source segment a part
                arcs += zip(s.tolist(), d.tolist())
            assert len({int(p.src[0].get()) >> 4 for p in parts}) == len(parts)
        assert sorted(arcs) == every


@pytest.mark.parametrize("guess", LAST_STEP_GUESSES)
def test_pagerank_sent_by_stripes_stops_where_the_cpu_stops(guess_graph, monkeypatch, configure, guess):
    """Whether the guess is right (the step converges), early (the contributions the striped step
    left out are made after all, and the values sent are not the answer even where a later step
    writes the same array) or one step late (the step before had converged: its values, not the
    sent ones, are the answer), the GPU's result is the CPU's."""
    from ooc_graph.kernels import gpu as kgpu
    configure({"gpu.segment_bits": 6})  # a cache-blocked copy of a small graph
    configure({"stream.prepare_min_bytes": 0})  # its result memory prepared, page-locked
    monkeypatch.setattr(hostbuf.Prepared, "ready", property(lambda self: self._thread.join() or True))
    guess_last_step(monkeypatch, guess)
    sent, stripes = [], []
    send = Engine.send_result
    monkeypatch.setattr(Engine, "send_result", lambda self, a, lo, hi: sent.append(send(self, a, lo, hi)) or sent[-1])
    cut = kgpu.destination_stripes
    monkeypatch.setattr(kgpu, "destination_stripes", lambda *a: stripes.append(a[2]) or cut(*a))
    guess_graph.release()
    for kw in pagerank_guess_cases({3: 1.0, 70: 0.5, 2900: 2.0}):
        sent.clear()
        cpu = ooc_graph.pagerank(guess_graph, device="cpu", **kw)
        gpu = ooc_graph.pagerank(guess_graph, device="gpu", **kw)
        assert_guessed_run(guess, kw, cpu, gpu, sent, 1e-10)
        if kw.get("mode") == "graphalytics":  # its last step is known: every stripe of it sent
            assert len(sent) >= config.Config().algorithms.pagerank_result_stripes and all(sent[-config.Config().algorithms.pagerank_result_stripes:])
    assert stripes == [config.Config().algorithms.pagerank_result_stripes]  # cut once for the graph's copy
    guess_graph.release()


def test_a_sent_result_is_the_host_array_returned(guess_graph, monkeypatch, configure):
    """Where every stripe was sent, the call returns that page-locked host array itself (no
    copy after the pass); output='cupy' sends nothing."""
    from ooc_graph.kernels import gpu as kgpu
    configure({"gpu.segment_bits": 6})
    configure({"stream.prepare_min_bytes": 0})
    monkeypatch.setattr(hostbuf.Prepared, "ready", property(lambda self: self._thread.join() or True))
    hosts = []
    sent = Engine._sent
    monkeypatch.setattr(Engine, "_sent", lambda self, a: hosts.append(sent(self, a)) or hosts[-1])
    monkeypatch.setattr(kgpu, "to_host", lambda *a: pytest.fail("copied after the pass"))
    guess_graph.release()
    cpu = ooc_graph.pagerank(guess_graph, device="cpu", mode="graphalytics", max_iter=5)
    gpu = ooc_graph.pagerank(guess_graph, device="gpu", mode="graphalytics", max_iter=5)
    assert [whole for host, whole in hosts if host is gpu.values] == [True] and kgpu.page_locked(gpu.values)
    np.testing.assert_allclose(gpu.values, cpu.values, rtol=1e-10, atol=1e-15)
    monkeypatch.undo()
    on_device = ooc_graph.pagerank(guess_graph, device="gpu", mode="graphalytics", max_iter=5, output="cupy")
    np.testing.assert_allclose(on_device.values.get(), cpu.values, rtol=1e-10, atol=1e-15)
    guess_graph.release()
