"""What the kernels index with is checked once per store, before its first use
(store/contents.py), and recorded so that later opens skip it (store/stamps.py). A crafted store
used to crash the compiled kernels (SIGSEGV) or give wrong answers; each case runs in a
subprocess, so that a crash fails the test instead of ending pytest."""

import json
import os
import subprocess
import sys
import time

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import StoreError
from ooc_graph.store import contents, stamps

N = 3000


def _build(path, *, augment=False):
    rng = np.random.default_rng(1)
    src, dst = rng.integers(0, N, 20000), rng.integers(0, N, 20000)
    w = rng.integers(1, 8, 20000).astype(float)
    ooc_graph.convert((src, dst, w), path, num_vertices=N, progress=False, interval_size=1000, chunk_arcs=4096,
                      augment=augment).close()


def _set(name, at, value):
    def tamper(h5):
        h5[name][at] = value
    return tamper


def _swap_blocks(h5):  # a block named with another source interval: wrong answers before
    bsrc = h5["cel/block_src_interval"]
    bsrc[0], bsrc[1] = bsrc[1], bsrc[0]


CASES = [  # (what, tamper, algorithm call, words in the error)
    ("indices past n", _set("csr/out/indices", 5, 10 ** 8), "ooc_graph.bfs(G, 0, device='cpu')",
     ["dataset csr/out/indices", "100000000", "position 5"]),
    ("negative indices", _set("csr/out/indices", 5, -7), "ooc_graph.sssp(G, 0, device='cpu')",
     ["dataset csr/out/indices", "-7", "position 5"]),
    ("in-CSR index past n", _set("csr/in/indices", 9, N), "ooc_graph.bfs(G, 0, device='cpu')",
     ["dataset csr/in/indices", f"{N}", "position 9"]),
    ("indptr not monotone", _set("csr/out/indptr", 10, 10 ** 6), "ooc_graph.sssp(G, 0, device='cpu')",
     ["dataset csr/out/indptr", "position 11", "below the offset before it"]),
    ("degree disagrees", _set("vertex/out_degree", 3, 10 ** 6), "ooc_graph.pagerank(G, device='cpu')",
     ["dataset vertex/out_degree", "1000000", "position 3", "csr/out/indptr"]),
    ("CEL source id past its interval", _set("cel/src", 7, 60000), "ooc_graph.pagerank(G, device='cpu')",
     ["dataset cel/src", "60000", "position 7", "0..999"]),
    ("CEL destination id past its interval", _set("cel/dst", 8, 1000), "ooc_graph.pagerank(G, device='cpu')",
     ["dataset cel/dst", "1000", "position 8"]),
    ("negative CEL weight", _set("cel/weight", 7, -5.0), "ooc_graph.pagerank(G, device='cpu', weight='weight')",
     ["dataset cel/weight", "-5.0", "position 7", "min_weight"]),
    ("negative CSR weight", _set("csr/out/weights", 7, -5.0), "ooc_graph.sssp(G, 0, device='cpu')",
     ["dataset csr/out/weights", "-5.0", "position 7", "min_weight"]),
    ("NaN weight", _set("csr/out/weights", 4, np.nan), "ooc_graph.sssp(G, 0, device='cpu')",
     ["dataset csr/out/weights", "nan", "position 4"]),
    ("block intervals disagree", _swap_blocks, "ooc_graph.pagerank(G, device='cpu')",
     ["cel/block_src_interval", "out of order"]),
    ("augmentation id past its interval", _set("cel_aug/dst", 3, 2000),  # what async passes read
     "G.read_back_arcs(0, 2, 3, 10 ** 6)", ["dataset cel_aug/dst", "2000", "position 3"]),
]


@pytest.mark.parametrize("what,tamper,call,words", CASES, ids=[c[0] for c in CASES])
def test_crafted_contents_are_one_error_not_a_crash(tmp_path, what, tamper, call, words):
    path = tmp_path / "t.h5"
    _build(path, augment="augmentation" in what)
    with h5py.File(path, "r+") as h5:
        tamper(h5)
    code = ("import ooc_graph\nfrom ooc_graph.errors import StoreError\n"
            f"try:\n    G = ooc_graph.open({str(path)!r})\n    r = {call}\n    print('NO ERROR')\n"
            "except StoreError as err:\n    print('REFUSED', err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, f"exit status {out.returncode}: {out.stderr[-1500:]}"
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("REFUSED"), out.stdout
    for word in words:
        assert word in lines[0], (word, lines[0])


@pytest.fixture
def counted(monkeypatch):
    """The content checks that run, by group."""
    ran = []
    for name, check in list(contents.CHECKS.items()):
        def counting(graph, *args, _check=check, _name=name):
            ran.append(":".join((_name,) + args))
            return _check(graph, *args)
        monkeypatch.setitem(contents.CHECKS, name, counting)
    return ran


def test_checked_once_and_recorded_beside_not_in_the_store(tmp_path, counted):
    path = tmp_path / "g.h5"
    _build(path)
    before = path.stat()
    stamps._MEMO.clear()
    with h5py.File(path, "r+") as h5:  # as a store written before the checks existed: no record
        h5.attrs["store_id"] = h5.attrs["store_id"]
    time.sleep(stamps.RACY_NS / 1e9)
    G = ooc_graph.open(path)
    ooc_graph.pagerank(G, device="cpu")
    ooc_graph.pagerank(G, device="cpu")
    assert counted == ["degree:out", "cel"]  # lazily, once: PageRank streams the CEL, never reads the CSR
    ooc_graph.bfs(G, 0, device="cpu")
    ooc_graph.bfs(G, 1, device="cpu")
    assert {"csr:out", "degree:out"} <= set(counted) <= {"cel", "csr:out", "degree:out", "csr:in", "degree:in"}
    assert len(counted) == len(set(counted))  # each once
    done = list(counted)
    G.close()
    assert path.stat().st_size == before.st_size  # nothing written into the store
    stamps._MEMO.clear()  # another process: the record in the cache folder
    G = ooc_graph.open(path)
    ooc_graph.bfs(G, 0, device="cpu")
    ooc_graph.pagerank(G, device="cpu")
    G.close()
    assert counted == done
    records = os.listdir(os.environ[stamps.CACHE_ENV])
    assert any(r.endswith(".json") for r in records)
    with h5py.File(path, "r+") as h5:  # changed since: checked again, and found
        h5["cel/src"][7] = 60000
    G = ooc_graph.open(path)
    with pytest.raises(StoreError, match="cel/src holds 60000 at position 7"):
        ooc_graph.pagerank(G, device="cpu")


def test_stores_this_library_writes_are_not_checked_again(tmp_path, counted):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), tmp_path / "c.h5", progress=False)
    ooc_graph.bfs(G, 0, device="cpu")
    ooc_graph.wcc(G, device="cpu")
    G.close()
    G = ooc_graph.generate.rmat(tmp_path / "r.h5", 8, progress=False)
    ooc_graph.pagerank(G, device="cpu")
    G.close()
    assert counted == []


def test_racy_stamp_is_not_trusted(tmp_path):
    """A record made in the same clock tick as the file's last write could miss a write in that
    tick: it is not trusted (git's racily clean entries)."""
    path = tmp_path / "g.h5"
    path.write_bytes(b"x")
    st = path.stat()
    stamp = stamps.stamp_of(st, "id")
    stamps.record(stamp, {"cel"}, st.st_ctime_ns + 1000)
    assert stamps.trusted(stamp) == frozenset()
    stamps.record(stamp, {"cel"}, st.st_ctime_ns + stamps.RACY_NS)
    assert stamps.trusted(stamp) == {"cel"}
    other = stamps.stamp_of(st, "another id")
    assert stamps.trusted(other) == frozenset()


def test_cache_folder_others_may_write_to_is_not_used(tmp_path, monkeypatch):
    folder = tmp_path / "open"
    folder.mkdir()
    os.chmod(folder, 0o777)
    monkeypatch.setenv(stamps.CACHE_ENV, str(folder))
    stamp = (1, 2, 3, 4, 5, "id")
    stamps.record(stamp, {"cel"}, 5 + stamps.RACY_NS)
    assert os.listdir(folder) == []
    (folder / "1-2.json").write_text(json.dumps({"stamp": list(stamp), "taken_ns": 5 + stamps.RACY_NS,
                                                 "groups": ["cel"]}))
    stamps._MEMO.clear()
    assert stamps.trusted(stamp) == frozenset()  # anyone could have written that record
