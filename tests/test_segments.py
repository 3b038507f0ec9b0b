"""Shared-memory result segments (runtime/segments.py): every rank of a job writes into the same
segment, the client maps it, and a dropped result's segment serves the next job."""

import gc
import os

import numpy as np
import pytest

from ooc_graph.runtime import segments

pytestmark = pytest.mark.skipif(not segments.SHARED_DIR.is_dir(), reason="no /dev/shm")


@pytest.fixture
def pool(monkeypatch):
    p = segments.Pool()
    monkeypatch.setattr(segments, "_POOL", p)
    yield p
    p.close()


def test_ranks_share_a_segment_the_client_maps_and_reuses(pool):
    ranks = [segments.allocator("job-a", pool.key, [], lock_pages=False) for _ in range(2)]
    (a, find_a), (b, _) = [(empty((10,), np.int64), find) for empty, find, _ in ranks]
    assert ranks[0][2]() == ranks[1][2]() == [find_a(a).path]  # made for the job, alike on every rank
    a[:5], b[5:] = np.arange(5), np.arange(5, 10)  # each rank its own vertices
    shared = find_a(a)
    assert shared is not None and find_a(np.arange(3)) is None
    pool.settle([], "job-a", used=[shared.path])
    assert pool.free == {}  # in use by the result
    result = shared.load()
    np.testing.assert_array_equal(result, np.arange(10))
    del result, a, b, ranks
    gc.collect()
    assert shared.path in pool.free  # dropped: free for the next job
    offered = pool.offer()
    assert [p for p, _ in offered] == [shared.path] and pool.free == {}
    again, find, new = segments.allocator("job-b", pool.key, offered, lock_pages=False)
    c = again((10,), np.float64)
    assert find(c).path == shared.path  # no new segment
    d = again((10,), np.int32)  # the one offered is taken: a new one
    assert find(d).path != shared.path and "job-b" in find(d).path
    assert new() == [find(d).path]
    pool.settle(offered, "job-b", used=[], made=new())  # as the ranks report them: no listing
    assert set(pool.free) == {shared.path, find(d).path}


def test_a_segment_much_larger_than_the_result_is_not_used(pool):
    big = segments.allocator("job-big", pool.key, [], lock_pages=False)
    shared = big[1](big[0]((1 << 20,), np.float64))
    pool.settle([], "job-big")
    offered = pool.offer()
    small, find, _ = segments.allocator("job-small", pool.key, offered, lock_pages=False)
    assert find(small((1000,), np.float64)).path != shared.path
    pool.settle(offered, "job-small")


def test_failed_jobs_leave_nothing_and_dead_clients_segments_go(pool, tmp_path):
    empty, _, _ = segments.allocator("job-fail", pool.key, [], lock_pages=False)
    empty((100,), np.int64)
    segments.remove_made("job-fail")
    assert not list(segments.SHARED_DIR.glob("*job-fail*"))
    dead = os.fork()
    if dead == 0:
        os._exit(0)
    os.waitpid(dead, 0)
    orphan = segments.SHARED_DIR / f"{segments.PREFIX}-{dead}-00000000-job-x-0"
    orphan.write_bytes(b"x")
    other = segments.Pool()
    try:
        assert not orphan.exists()
    finally:
        other.close()


def test_the_pool_keeps_a_bounded_number_of_free_segments(pool, monkeypatch):
    monkeypatch.setattr(segments, "POOL_SEGMENTS", 2)
    empty, find, _ = segments.allocator("job-many", pool.key, [], lock_pages=False)
    paths = [find(empty((8,), np.int64)).path for _ in range(4)]
    pool.settle([], "job-many")
    assert len(pool.free) == 2 and sum(os.path.exists(p) for p in paths) == 2
    pool.close()
    assert not any(os.path.exists(p) for p in paths)
