"""A full disk is one line naming the file, "disk full" and the bytes free; nothing is left behind,
the process does not crash, an existing store is never damaged. The real thing where this process
may mount a small tmpfs (root), a simulated ENOSPC otherwise."""

import errno
import os
import subprocess
import sys
import uuid

import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import StoreError


def _mount(folder, size="2m", *extra):
    folder.mkdir(exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip() or done.returncode}")
    return folder


@pytest.fixture
def full_disk(tmp_path):
    """A 2 MiB file system, unmounted afterwards."""
    if os.geteuid() != 0:
        pytest.skip("mounting a small file system needs root")
    mounted = []

    def make(name="full", size="2m"):
        mounted.append(_mount(tmp_path / name, size))
        return mounted[-1]
    yield make
    for folder in reversed(mounted):
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def _fill(folder, leave: int) -> None:
    """Fill the file system of ``folder`` until ``leave`` bytes are free."""
    st = os.statvfs(folder)
    with open(folder / "filler", "wb") as f:
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))


def _edges(m, n=50_000, seed=0):
    rng = np.random.default_rng(seed)
    return rng.integers(0, n, m), rng.integers(0, n, m)


def _one_line_disk_full(message: str, *names):
    assert "\n" not in message, message
    assert "disk full" in message and "bytes free" in message, message
    assert "requested and" not in message and "internal error" not in message, message
    for name in names:
        assert str(name) in message, (name, message)


def test_convert_onto_a_full_disk_keeps_the_store_there(full_disk):
    folder = full_disk()
    out = folder / "g.h5"
    ooc_graph.convert(np.array([[0, 1], [1, 2]]), out, progress=False).close()
    before = out.read_bytes()
    for memory in (None, "2MB"):  # in memory, and through scratch files beside the store
        with pytest.raises(StoreError) as info:
            ooc_graph.convert(_edges(300_000), out, progress=False, overwrite=True, memory=memory)
        _one_line_disk_full(str(info.value), out)
        assert sorted(os.listdir(folder)) == ["g.h5"]  # no temporary folder or file left
        assert out.read_bytes() == before
    assert ooc_graph.open(out).num_arcs == 2


def test_result_on_a_full_disk(full_disk, monkeypatch):
    folder = full_disk(size="4m")
    store = folder / "s.h5"
    G = ooc_graph.convert(_edges(30_000, n=20_000), store, progress=False, num_vertices=20_000)
    r = ooc_graph.pagerank(G, device="cpu")
    before = store.read_bytes()
    _fill(folder, 60_000)
    monkeypatch.chdir(folder)  # the fallback folder is full too
    from ooc_graph.store import results
    for check_room in (True, False):  # the check before writing; then the reservation within it
        if not check_room:
            monkeypatch.setattr(results, "_check_room", lambda folder, nbytes: None)
        with pytest.raises(StoreError) as info:
            r.save("pr")
        _one_line_disk_full(str(info.value), store)
        assert sorted(os.listdir(folder)) == ["filler", "s.h5"]
        assert store.read_bytes() == before  # never damaged
    G.close()
    assert ooc_graph.open(store).results() == []


def test_cli_run_with_a_read_only_store_and_a_full_working_folder(full_disk):
    """It segfaulted: HDF5 met ENOSPC closing the result file beside the store."""
    ro, full = full_disk("ro", "20m"), full_disk("full")
    ooc_graph.convert(_edges(400_000, n=200_000), ro / "g.h5", progress=False, num_vertices=200_000).close()
    done = subprocess.run(["mount", "-o", "remount,ro", str(ro)], capture_output=True)
    if done.returncode != 0:
        pytest.skip("cannot remount read-only")
    _fill(full, 150_000)
    run = subprocess.run([sys.executable, "-m", "ooc_graph.cli", "run", "pagerank", str(ro / "g.h5"), "--quiet"],
                         cwd=full, capture_output=True, text=True, timeout=600)
    assert run.returncode == 2, (run.returncode, run.stderr[-2000:])
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "read-only" in lines[0] and "disk full" in lines[0], lines
    assert sorted(os.listdir(full)) == ["filler"]


def test_disk_full_while_closing_an_hdf5_file_is_one_error_not_a_crash(full_disk):
    """HDF5 writes what it holds when a file closes; a full disk there gave "internal error" on
    several lines, then SIGSEGV at exit."""
    folder = full_disk()
    _fill(folder, 200_000)
    code = ("import numpy as np\nfrom ooc_graph.store.writer import AtomicFile\n"
            f"out = AtomicFile({str(folder / 'x.h5')!r})\n"
            "try:\n    with out.create() as h5:\n"
            "        h5.create_dataset('a', data=np.arange(50_000), chunks=(25_000,), fletcher32=True)\n"
            "    out.commit()\nexcept OSError as err:\n    out.discard()\n    print('ERR', err)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, (run.returncode, run.stderr[-2000:])
    assert run.stdout.startswith("ERR") and "disk full" in run.stdout and len(run.stdout.splitlines()) == 1
    assert "Traceback" not in run.stderr, run.stderr[-2000:]
    assert sorted(os.listdir(folder)) == ["filler"]


# -- without a small file system: ENOSPC simulated ---------------------------------------------------
def test_scratch_full_is_disk_full_not_requested_and_written(tmp_path, monkeypatch):
    """Scratch files written to /dev/full (every write ENOSPC); NumPy's tofile said "N requested
    and 0 written"."""
    from ooc_graph.ingest import scratch

    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    real = open
    monkeypatch.setattr(scratch, "open", lambda path, mode="r", *args: real("/dev/full", mode) if mode == "ab"
                        else real(path, mode, *args), raising=False)
    with pytest.raises(StoreError) as info:
        ooc_graph.convert(_edges(300_000), tmp_path / "g.h5", progress=False, memory="2MB")
    _one_line_disk_full(str(info.value), tmp_path / "g.h5", "input.")
    assert os.listdir(tmp_path) == []


def test_no_room_to_reserve_leaves_the_store_as_it_was(tmp_path, monkeypatch):
    G = ooc_graph.convert(np.array([[0, 1], [1, 2], [2, 0]]), tmp_path / "g.h5", progress=False)
    r = ooc_graph.wcc(G, device="cpu")
    before = G.path.read_bytes()

    def full(fd, offset, length):
        raise OSError(errno.ENOSPC, "No space left on device")
    monkeypatch.setattr(os, "posix_fallocate", full)
    monkeypatch.chdir(tmp_path)
    name = f"wcc{uuid.uuid4().hex[:6]}"
    with pytest.warns(ooc_graph.errors.ResultNotStoredWarning, match="disk full.*bytes free and .* needed"):
        saved = r.save(name)
    assert not saved.in_store and saved.path.exists()  # in a file beside the store instead
    assert G.path.read_bytes() == before
    monkeypatch.undo()
    assert G.import_result(saved.path) == name and G.results() == [name]
