"""Results belong to their graph: saving under locks, beside a store that cannot take them, never
into another graph; no half-written results; bounded growth; several processes and handles."""

import logging
import os
import signal
import subprocess
import sys
import threading
import time
import warnings

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import ParameterError, ResultNotStoredWarning, StoreBusyError, StoreError
from ooc_graph.store import results as R
from ooc_graph.store.results import read_result_file

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.fixture
def store(tmp_path):
    edges = np.random.default_rng(0).integers(0, 2000, (8000, 2))
    ooc_graph.convert(edges, tmp_path / "g.h5", progress=False).close()
    return tmp_path / "g.h5"


def partials(path):
    with h5py.File(path, "r") as h5:
        return [k for k in h5.get("results", {}) if k.startswith(".")]


# A child inherits an ignored SIGINT (a shell's background job ignores it, and so would every
# process it starts): the children here take Ctrl-C as a terminal's foreground process does.
_INTERRUPTIBLE = "import signal; signal.signal(signal.SIGINT, signal.default_int_handler)\n"


def spawn(script, *args, env=None):
    """A Python process running ``script`` with the test's interpreter and this checkout."""
    return subprocess.Popen([sys.executable, "-c", _INTERRUPTIBLE + script, *map(str, args)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": ROOT, **(env or {})})


def wait_for(path, seconds=20):
    deadline = time.monotonic() + seconds
    while not os.path.exists(path):
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.01)


# -- in one process ----------------------------------------------------------------------------------
def test_two_handles_in_one_process_both_save_and_read(store):
    G, H = ooc_graph.open(store), ooc_graph.open(store)
    a = ooc_graph.pagerank(G, device="cpu", store=True)
    b = ooc_graph.wcc(H, device="cpu", store=True)
    assert a.saved.in_store and b.saved.in_store and str(a.saved) == f"{store}:results/pagerank"
    assert G.results() == H.results() == ["pagerank", "wcc"]
    np.testing.assert_array_equal(H.load_result("pagerank")["values"], a.values)
    ooc_graph.bfs(G, 0, device="cpu", store=True)  # G was detached by H's save: reopens
    assert H.results() == ["bfs", "pagerank", "wcc"]


def test_reader_thread_runs_while_another_handle_saves(tmp_path):
    path = tmp_path / "r.h5"
    edges = np.random.default_rng(0).integers(0, 2000, (8000, 2))
    ooc_graph.convert(edges, path, chunk_arcs=500, progress=False).close()
    G, H = ooc_graph.open(path), ooc_graph.open(path)
    kw = dict(device="cpu", memory="200KiB", max_iter=5, mode="graphalytics")  # chunks streamed every pass
    expected = ooc_graph.pagerank(G, **kw).values
    errors, done, runs = [], threading.Event(), [0]

    def read():
        try:
            while not done.is_set():
                np.testing.assert_allclose(ooc_graph.pagerank(G, **kw).values, expected)
                runs[0] += 1
        except Exception as err:  # noqa: BLE001
            errors.append(err)

    t = threading.Thread(target=read)
    t.start()
    try:
        for i in range(8):
            assert ooc_graph.wcc(H, device="cpu", store=f"w{i}").saved.in_store
    finally:
        done.set()
        t.join()
    assert not errors and runs[0] > 0


def test_load_result_gives_dicts(store):
    G = ooc_graph.open(store)
    ooc_graph.pagerank(G, device="cpu", store=True, alpha=0.9)
    attrs = G.load_result("pagerank")["attrs"]
    assert attrs["parameters"]["alpha"] == 0.9 and isinstance(attrs["stats"], dict)
    assert attrs["algorithm"] == "pagerank" and attrs["converged"] is True


@pytest.mark.parametrize("name", [".", "..", ".partial-x", ".hidden", "", "a/b", "x\0y", 7])
def test_bad_result_names_leave_nothing(store, name):
    G = ooc_graph.open(store)
    before = store.read_bytes()
    r = ooc_graph.wcc(G, device="cpu")
    with pytest.raises(ParameterError, match="result name"):
        r.save(name)
    assert store.read_bytes() == before and G.results() == []


def test_drop_and_compact(store):
    G = ooc_graph.open(store)
    for name in ("a", "b"):
        ooc_graph.pagerank(G, device="cpu", store=name)
    G.drop_result("a")
    assert G.results() == ["b"] and G.unused_bytes() > 0
    with pytest.raises(ParameterError, match="no result 'a'.*stored: b"):
        G.drop_result("a")
    sid, ino = G.store_id, os.stat(store).st_ino
    before, after = G.compact()
    assert after < before == before and os.stat(store).st_ino != ino
    assert G.store_id == sid and ooc_graph.open(store).store_id == sid
    assert G.results() == ["b"] and G.unused_bytes() == 0  # G reopened the new file
    with h5py.File(store, "r") as h5:  # chunks and checksums kept, links still links
        assert h5["cel/src"].fletcher32 and h5["cel/src"].chunks == (G.chunk_arcs,)
        assert isinstance(h5.get("vertex/out_degree", getlink=True), h5py.SoftLink) != G.directed
    np.testing.assert_allclose(G.load_result("b")["values"], ooc_graph.pagerank(G, device="cpu").values)


@pytest.mark.parametrize("mode", [0o600, 0o640, 0o664], ids=oct)
def test_compaction_keeps_the_permissions(store, mode):
    os.chmod(store, mode)
    G = ooc_graph.open(store)
    ooc_graph.wcc(G, device="cpu", store="a")
    G.drop_result("a")
    G.compact()
    assert store.stat().st_mode & 0o777 == mode  # a private store stays private


def test_resaving_does_not_grow_the_file(tmp_path):
    """Ten re-saves of one result on a new store: the file grows by less than 1.5 results."""
    path = tmp_path / "grow.h5"
    G = ooc_graph.convert(np.random.default_rng(1).integers(0, 100_000, (100_000, 2)), path, progress=False)
    r = ooc_graph.pagerank(G, device="cpu", max_iter=3, mode="graphalytics")
    r.save()
    first = os.path.getsize(path)
    sizes = []
    for _ in range(10):
        r.save()
        sizes.append(os.path.getsize(path))
    growth = max(sizes) - first
    assert growth < 1.5 * r.values.nbytes, (first, sizes)
    np.testing.assert_array_equal(G.load_result("pagerank")["values"], r.values)


def test_half_written_result_is_cleaned_on_next_write(store):
    with h5py.File(store, "r+") as h5:  # what a writer killed mid-save leaves
        h5["results"].create_group(".partial-pagerank").create_dataset("values", data=np.zeros(3))
    G = ooc_graph.open(store)
    assert G.results() == []
    ooc_graph.wcc(G, device="cpu", store=True)
    assert partials(store) == [] and G.results() == ["wcc"]


def test_failed_write_leaves_no_partial_and_falls_back(store, monkeypatch):
    G = ooc_graph.open(store)
    ooc_graph.wcc(G, device="cpu", store=True)
    calls = []

    def full(grp, key, values):
        calls.append(key)
        if len(calls) == 1:
            grp.create_dataset(key, data=values[:1])
            raise OSError(28, "No space left on device")
        grp.create_dataset(key, data=values)

    monkeypatch.setattr(R, "write_array", full)
    with pytest.warns(ResultNotStoredWarning, match=r"no space left on the device \(disk full\), [0-9,]+ bytes free"):
        saved = ooc_graph.wcc(G, device="cpu", store=True).saved
    assert not saved.in_store and saved.path.name == "g.h5.wcc.result.h5"
    assert partials(store) == [] and G.results() == ["wcc"]  # the older result is intact
    G.load_result("wcc")


def test_full_disk_is_seen_before_writing(store, monkeypatch):
    G = ooc_graph.open(store)
    r = ooc_graph.wcc(G, device="cpu")
    monkeypatch.setattr(R.shutil, "disk_usage", lambda p: type("U", (), {"free": 100})())
    with pytest.warns(ResultNotStoredWarning, match="100 B free"):
        assert not r.save().in_store


def test_read_only_store_reads_and_saves_beside(store, monkeypatch, tmp_path):
    os.chmod(store, 0o444)
    if os.geteuid() == 0:  # root writes anyway: refuse the way a read-only file does
        real = R._open_file
        monkeypatch.setattr(R, "_open_file", lambda p, mode: (_ for _ in ()).throw(
            PermissionError(13, "Permission denied")) if mode != "r" else real(p, mode))
    G = ooc_graph.open(store)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = ooc_graph.pagerank(G, device="cpu", store=True)
    assert [w.category for w in caught] == [ResultNotStoredWarning]
    message = str(caught[0].message)
    assert "read-only" in message and str(r.saved.path) in message and "\n" not in message
    assert r.saved.reason == "the store is read-only" and G.results() == []
    assert G.fallback_results() == [r.saved.path]
    stored = read_result_file(r.saved.path)
    assert stored["name"] == "pagerank" and stored["store_id"] == G.store_id
    np.testing.assert_array_equal(stored["values"], r.values)
    # Once the store is writable again, the result moves in.
    monkeypatch.undo()
    os.chmod(store, 0o644)
    assert G.import_result(r.saved.path) == "pagerank"
    assert G.results() == ["pagerank"] and not r.saved.path.exists()
    assert G.load_result("pagerank")["attrs"]["parameters"]["alpha"] == 0.85


def test_replaced_file_gets_no_result(store, tmp_path):
    G = ooc_graph.open(store)
    small = ooc_graph.convert(np.array([[0, 1], [1, 2]]), tmp_path / "small.h5", progress=False)
    small.close()
    os.replace(tmp_path / "small.h5", store)  # `convert small.txt g.h5` while a run computes
    with pytest.warns(ResultNotStoredWarning, match="replaced by another graph"):
        r = ooc_graph.pagerank(G, device="cpu", store=True)
    assert ooc_graph.open(store).results() == []
    assert read_result_file(r.saved.path)["store_id"] == G.store_id
    other = ooc_graph.open(store)
    assert other.fallback_results() == []  # not this graph's
    with pytest.raises(ParameterError, match="another graph"):
        other.import_result(r.saved.path)


def test_detached_handle_sees_replacement(store, tmp_path):
    G, H = ooc_graph.open(store), ooc_graph.open(store)
    ooc_graph.wcc(H, device="cpu", store=True)  # detaches G
    ooc_graph.convert(np.array([[0, 1]]), tmp_path / "s.h5", progress=False).close()
    os.replace(tmp_path / "s.h5", store)
    with pytest.raises(StoreError, match="replaced by another graph since it was opened"):
        G.results()


def test_lock_timeout_settings(store, monkeypatch):
    monkeypatch.setenv("OOC_GRAPH_LOCK_TIMEOUT", "soon")
    with pytest.raises(ParameterError, match="OOC_GRAPH_LOCK_TIMEOUT"):
        ooc_graph.open(store)
    monkeypatch.setenv("OOC_GRAPH_LOCK_TIMEOUT", "2.5")
    assert ooc_graph.open(store)._timeout == 2.5
    with pytest.raises(ParameterError, match="lock_timeout"):
        ooc_graph.open(store, lock_timeout=-1)


# -- several processes -------------------------------------------------------------------------------
RUN = """
import os, sys, time, ooc_graph
G = ooc_graph.open(sys.argv[1])
print("ready", flush=True)
while not os.path.exists(sys.argv[2]):
    time.sleep(0.005)
r = ooc_graph.pagerank(G, device="cpu", store=sys.argv[3])
print(r.saved.in_store, r.saved, flush=True)
"""

HOLD = """
import sys, time, h5py
f = h5py.File(sys.argv[1], "r")
print("ready", flush=True)
sys.stdin.readline()
"""


def test_three_processes_save_at_once(store, tmp_path):
    go = tmp_path / "go"
    procs = [spawn(RUN, store, go, name) for name in ("pagerank", "pagerank", "pr3")]
    for p in procs:
        assert p.stdout.readline().strip() == "ready"
    go.touch()
    outs = [p.communicate(timeout=60) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0 and "Traceback" not in err, err
        assert out.splitlines()[-1].startswith("True "), (out, err)
    assert ooc_graph.open(store).results() == ["pagerank", "pr3"] and partials(store) == []


def test_file_replaced_during_a_run_gets_no_result(store, tmp_path):
    p = spawn(RUN, store, tmp_path / "go", "pagerank")
    assert p.stdout.readline().strip() == "ready"
    ooc_graph.convert(np.array([[0, 1], [1, 2]]), tmp_path / "small.h5", progress=False).close()
    os.replace(tmp_path / "small.h5", store)  # `convert small.txt g.h5` while `run pagerank g.h5` computes
    (tmp_path / "go").touch()
    out, err = p.communicate(timeout=60)
    assert p.returncode == 0 and "Traceback" not in err, err
    assert out.splitlines()[-1] == f"False {store}.pagerank.result.h5" and "replaced by another graph" in err
    assert ooc_graph.open(store).results() == [] and partials(store) == []
    assert read_result_file(f"{store}.pagerank.result.h5")["values"].shape == (2000,)


def test_store_held_past_the_timeout_saves_beside(store, tmp_path, caplog):
    holder = spawn(HOLD, store)
    try:
        assert holder.stdout.readline().strip() == "ready"
        # In another process, with a short timeout: the result goes beside the store, with a warning.
        p = spawn(RUN, store, tmp_path, "pagerank", env={"OOC_GRAPH_LOCK_TIMEOUT": "0.3"})
        out, err = p.communicate(timeout=60)
        assert p.returncode == 0 and "Traceback" not in err, err
        assert out.splitlines()[-1].startswith("False ") and "ResultNotStoredWarning" in err
        assert "g.h5.pagerank.result.h5" in err
        # Here: waiting is logged once; compaction refuses.
        G = ooc_graph.open(store)
        with caplog.at_level(logging.INFO, logger="ooc_graph.store"):
            with pytest.warns(ResultNotStoredWarning, match="locked for 0.2 s"):
                r = ooc_graph.wcc(G, device="cpu").save(lock_timeout=0.2)
        assert sum("waiting up to 0.2 s" in m for m in caplog.messages) == 1
        assert r.path == store.parent / "g.h5.wcc.result.h5"
        with pytest.raises(StoreBusyError, match="another process kept the store locked for 0.2 s"):
            G.compact(lock_timeout=0.2)
    finally:
        holder.communicate("\n", timeout=10)
    assert ooc_graph.open(store).results() == []
    assert sorted(p.name for p in ooc_graph.open(store).fallback_results()) == ["g.h5.pagerank.result.h5",
                                                                                 "g.h5.wcc.result.h5"]


def test_a_save_waits_for_a_reader_to_detach(store, tmp_path):
    G = ooc_graph.open(store)  # holds HDF5's shared lock while open
    p = spawn(RUN, store, tmp_path / "go", "pagerank", env={"OOC_GRAPH_LOCK_TIMEOUT": "20"})
    assert p.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    time.sleep(0.5)
    assert p.poll() is None  # waiting for this process's lock
    G.detach()
    out, err = p.communicate(timeout=30)
    assert out.splitlines()[-1].startswith("True ") and "Traceback" not in err, err
    assert G.results() == ["pagerank"]  # reopened on demand


def test_an_idle_graph_lets_go_of_the_file_after_a_call(store, tmp_path):
    G = ooc_graph.open(store)
    first = ooc_graph.wcc(G, device="cpu")
    p = spawn(RUN, store, tmp_path / "go", "pagerank", env={"OOC_GRAPH_LOCK_TIMEOUT": "20"})
    assert p.stdout.readline().strip() == "ready"
    (tmp_path / "go").touch()
    out, err = p.communicate(timeout=30)  # no wait for this process: the call detached
    assert out.splitlines()[-1].startswith("True ") and "Traceback" not in err, err
    again = ooc_graph.wcc(G, device="cpu")  # caches stay, the file reopens on demand
    assert (again.labels == first.labels).all() and G.results() == ["pagerank"]


KILLED = """
import os, sys, time, ooc_graph
from ooc_graph.store import results
real = results.write_array
def slow(grp, key, values):
    real(grp, key, values)
    grp.file.flush()           # the half-written group reaches the disk
    open(sys.argv[2], "w").close()
    time.sleep(float(sys.argv[3]))
results.write_array = slow
G = ooc_graph.open(sys.argv[1])
r = ooc_graph.pagerank(G, device="cpu", store=True)
print(r.saved.in_store, flush=True)
"""


def test_killed_during_save_leaves_nothing_after_next_save(store, tmp_path):
    G = ooc_graph.open(store)
    ooc_graph.wcc(G, device="cpu", store=True)
    G.close()
    p = spawn(KILLED, store, tmp_path / "in-save", 60)
    wait_for(tmp_path / "in-save")
    p.kill()
    p.communicate(timeout=10)
    assert [k.rsplit(".", 1)[0] for k in partials(store)] == [".partial-pagerank"]  # debris, hidden from results()
    G = ooc_graph.open(store)
    assert G.results() == ["wcc"]
    ooc_graph.bfs(G, 0, device="cpu", store=True)
    assert partials(store) == [] and G.results() == ["bfs", "wcc"]
    G.load_result("wcc")


def test_interrupted_save_completes_first(store, tmp_path):
    p = spawn(KILLED, store, tmp_path / "in-save", 0.5)
    wait_for(tmp_path / "in-save")
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=20)
    assert "KeyboardInterrupt" in err and p.returncode != 0  # delivered once the write was done
    assert partials(store) == [] and ooc_graph.open(store).results() == ["pagerank"]


def test_temporary_result_files_of_dead_processes_are_removed(store, monkeypatch):
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    from ooc_graph.store import temporary
    dead = temporary.make(store.parent, "g.h5.wcc.result.h5", "partial")
    dead = dead.rename(dead.parent / f".g.h5.wcc.result.h5.partial-{p.pid}-0a1b")
    marker = (dead / temporary.MARKER).read_text().replace(f'"pid": {os.getpid()}', f'"pid": {p.pid}')
    (dead / temporary.MARKER).write_text(marker)
    alive = temporary.make(store.parent, "g.h5.wcc.result.h5", "partial")  # this process's
    unmarked = store.parent / f".g.h5.wcc.result.h5.{p.pid}-0a1b.partial"  # not ours to remove
    unmarked.touch()
    monkeypatch.setattr(R, "_check_room", lambda *a: (_ for _ in ()).throw(R._NotWritable("test")))
    G = ooc_graph.open(store)
    with pytest.warns(ResultNotStoredWarning):
        ooc_graph.wcc(G, device="cpu", store=True)
    assert not dead.exists() and alive.exists() and unmarked.exists()


WAIT = """
import logging, sys, ooc_graph
logging.basicConfig(level=logging.INFO, format="%(message)s")
G = ooc_graph.open(sys.argv[1])
r = ooc_graph.wcc(G, device="cpu")
print("computed", flush=True)
r.save()
"""


def test_interrupted_while_waiting_for_the_lock_keeps_the_result(store):
    holder = spawn(HOLD, store)
    try:
        assert holder.stdout.readline().strip() == "ready"
        p = spawn(WAIT, store)
        assert p.stdout.readline().strip() == "computed"
        for line in p.stderr:
            if "waiting up to 60 s" in line:
                break
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=20)
    finally:
        holder.communicate("\n", timeout=10)
    assert "KeyboardInterrupt" in err and "interrupted while waiting for the lock" in err
    assert read_result_file(f"{store}.wcc.result.h5")["attrs"]["algorithm"] == "wcc"
    assert ooc_graph.open(store).results() == []


def test_damaged_result_is_a_store_error_and_compaction_leaves_it_out(store):
    G = ooc_graph.open(store)
    ooc_graph.wcc(G, device="cpu", store=True)
    expected = ooc_graph.pagerank(G, device="cpu", store=True).values
    G.close()
    with h5py.File(store, "r") as h5:  # what a writer killed at the wrong moment can leave
        addr = h5py.h5o.get_info(h5["results/wcc"].id).addr
    raw = bytearray(store.read_bytes())
    raw[addr:addr + 64] = bytes(b ^ 0xFF for b in raw[addr:addr + 64])
    store.write_bytes(bytes(raw))
    G = ooc_graph.open(store)
    assert G.results() == ["pagerank", "wcc"]
    with pytest.raises(StoreError, match="result 'wcc' is damaged"):
        G.load_result("wcc")
    with pytest.raises(StoreError, match="cannot be dropped.*compact"):
        G.drop_result("wcc")
    ooc_graph.bfs(G, 0, device="cpu", store=True)  # saving still works
    G.compact()
    assert G.results() == ["bfs", "pagerank"]
    np.testing.assert_array_equal(G.load_result("pagerank")["values"], expected)


def test_a_save_waits_for_a_graph_of_this_process_opening_the_store_again(tmp_path):
    """A save that finds the file open in this process while one of its graphs is between opening
    the store again and attaching it (a reader thread after a save detached it) tries again until
    it can write, and saves into the store (it once gave up at once: a flaky side file); a handle
    of another program in this process (an h5py.File) still sends the result beside the store."""
    from ooc_graph.store import locking
    path = tmp_path / "r.h5"
    G = ooc_graph.convert(np.random.default_rng(0).integers(0, 50, (200, 2)), path, progress=False)
    r = ooc_graph.wcc(G, device="cpu")
    held = h5py.File(path, "r")
    closer = threading.Timer(0.3, held.close)
    with locking.reopening(G.path):
        closer.start()
        t = time.perf_counter()
        r.save("w")
        assert r.saved.in_store and time.perf_counter() - t >= 0.25
    closer.join()
    with h5py.File(path, "r"), pytest.warns(UserWarning):
        r.save("v")
    assert not r.saved.in_store
    G.close()
