"""Nothing lost, nothing silently wrong: bad inputs, bad outputs and faults during a conversion are
one-line package errors that leave the folder exactly as it was (inputs and old stores intact, no
scratch, no partial store)."""

import bz2
import errno
import gzip
import lzma
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

import ooc_graph
from ooc_graph.errors import InputError, ParameterError, StoreError


def snapshot(folder):
    """Every entry under ``folder`` (hidden ones included) with its bytes (links by target)."""
    out = {}
    for root, dirs, files in os.walk(folder):
        for name in dirs + files:
            p = os.path.join(root, name)
            rel = os.path.relpath(p, folder)
            if os.path.islink(p):
                out[rel] = ("link", os.readlink(p))
            elif os.path.isdir(p):
                out[rel] = ("dir",)
            else:
                with open(p, "rb") as f:
                    out[rel] = ("file", f.read())
    return out


def store(path):
    ooc_graph.convert(np.array([[0, 1], [1, 2]]), path, progress=False).close()


EDGES = "".join(f"{i} {i * 7 % 5003}\n" for i in range(5000)).encode()


def half(data):
    return data[:len(data) // 2]


def mtx(text):
    return "%%MatrixMarket matrix coordinate pattern general\n" + text


# Each case: files to create (name -> text, bytes, or a callable(folder)), the convert call's
# (input, output, keyword arguments), the error type and words its message must hold.
CASES = [
    # -- the input is never the output --
    ("output is the input", {"e.txt": "0 1\n"}, ("e.txt", "e.txt", {}), StoreError, ["e.txt", "is the input"]),
    ("output spelled differently", {"e.txt": "0 1\n", "sub/": None}, ("e.txt", "sub/../e.txt", {}),
     StoreError, ["is the input"]),
    ("output a link to the input", {"e.txt": "0 1\n", "g.h5": ("link", "e.txt")}, ("e.txt", "g.h5", {}),
     StoreError, ["is the input"]),
    ("output a hard link to the input", {"e.txt": "0 1\n", "g.h5": ("hardlink", "e.txt")},
     ("e.txt", "g.h5", {}), StoreError, ["is the input"]),
    ("output the vertex file of the input", {"g.e": "1 2\n", "g.v": "1\n2\n"}, ("g.e", "g.v", {}),
     StoreError, ["is the input", "g.v"]),
    ("output the input, overwrite or not", {"e.txt": "0 1\n"}, ("e.txt", "e.txt", {"overwrite": True}),
     StoreError, ["is the input"]),
    # -- never over a file that is not a store; over a store only when asked --
    ("output a text file", {"e.txt": "0 1\n", "notes.h5": "my notes\n"}, ("e.txt", "notes.h5", {"overwrite": True}),
     StoreError, ["notes.h5", "not an ooc_graph store"]),
    ("output an HDF5 file that is not a store", {"e.txt": "0 1\n", "other.h5": "hdf5"},
     ("e.txt", "other.h5", {"overwrite": True}), StoreError, ["not an ooc_graph store"]),
    ("output an existing store", {"e.txt": "0 1\n", "g.h5": "store"}, ("e.txt", "g.h5", {}), StoreError,
     ["g.h5", "already exists", "overwrite=True", "--overwrite"]),
    ("output a folder", {"e.txt": "0 1\n", "out/": None}, ("e.txt", "out", {}), StoreError, ["is a folder"]),
    ("output folder missing", {"e.txt": "0 1\n"}, ("e.txt", "nope/g.h5", {}), StoreError,
     ["nope", "does not exist"]),
    ("output folder a file", {"e.txt": "0 1\n"}, ("e.txt", "e.txt/g.h5", {}), StoreError, ["is not a folder"]),
    # -- ids and weights never altered --
    ("id 2**63", {"big.txt": "9223372036854775808 0\n9223372036854775809 1\n"}, ("big.txt", "g.h5", {}),
     InputError, ["big.txt, line 1", "64-bit", "9223372036854775808"]),
    ("id below -2**63", {"neg.txt": "0 1\n-9223372036854775809 1\n"}, ("neg.txt", "g.h5", {}), InputError,
     ["line 2", "-9223372036854775809"]),
    ("id 10**30 in an adjacency list", {"a.adj": "1 2\n2 1000000000000000000000000000000\n"},
     ("a.adj", "g.h5", {}), InputError, ["a.adj, line 2", "1000000000000000000000000000000"]),
    ("weight overflows float32", {"w.txt": "0 1 1.0\n1 2 1e300\n"}, ("w.txt", "g.h5", {}), InputError,
     ["w.txt, line 2", "1e+300", "inf", 'weight_dtype="float64"']),
    ("weight underflows float32", {"w.txt": "0 1 1.0\n1 2 1e-50\n"}, ("w.txt", "g.h5", {}), InputError,
     ["w.txt, line 2", "1e-50", "stored as 0", 'weight_dtype="float64"']),
    ("weight overflows float32 in a DIMACS file", {"d.gr": "p sp 3 2\na 1 2 1\na 2 3 4e38\n"},
     ("d.gr", "g.h5", {}), InputError, ["d.gr, line 3", "4e+38"]),
    # -- declared counts, BOMs, long lines, compressed files --
    ("Matrix Market with fewer entries", {"m.mtx": mtx("3 3 3\n1 2\n2 3\n")}, ("m.mtx", "g.h5", {}), InputError,
     ["m.mtx", "entries declared in the header: 3; found in the file: 2"]),
    ("Matrix Market with more entries", {"m.mtx": mtx("3 3 1\n1 2\n2 3\n3 1\n")}, ("m.mtx", "g.h5", {}),
     InputError, ["declared in the header: 1; found in the file: 3"]),
    ("DIMACS with more arcs", {"d.gr": "p sp 3 1\na 1 2 1\na 2 3 1\n"}, ("d.gr", "g.h5", {}), InputError,
     ["d.gr", "arcs declared in the header: 1; found in the file: 2"]),
    ("PACE with fewer edges", {"p.gr": "p tw 3 5\n1 2\n"}, ("p.gr", "g.h5", {}), InputError,
     ["edges declared in the header: 5; found in the file: 1"]),
    ("a 20 MB malformed line", {"long.txt": "0 1\n" + "x" * 20_000_000 + "\n"}, ("long.txt", "g.h5", {}),
     InputError, ["long.txt, line 2", "20,000,000 long"]),
    ("a 20 MB malformed token", {"long.txt": "0 1\n1 " + "7" * 20_000_000 + "x\n"}, ("long.txt", "g.h5", {}),
     InputError, ["long.txt, line 2", "long"]),
    ("a line without an end", {"long.txt": "0 1\n" + "1" * 3_000_000}, ("long.txt", "g.h5", {"memory": "64KiB"}),
     InputError, ["long.txt, line 2", "longer than"]),
    ("not gzip", {"e.txt.gz": b"0 1\n1 2\n"}, ("e.txt.gz", "g.h5", {}), InputError,
     ["e.txt.gz", "not a valid gzip file"]),
    ("truncated gzip", {"e.txt.gz": half(gzip.compress(EDGES))}, ("e.txt.gz", "g.h5", {}), InputError,
     ["e.txt.gz", "truncated"]),
    ("corrupted gzip", {"e.txt.gz": lambda d: _corrupt(gzip.compress(EDGES))}, ("e.txt.gz", "g.h5", {}),
     InputError, ["e.txt.gz", "not a valid gzip file"]),
    ("garbage xz", {"e.txt.xz": b"garbage, not xz\n"}, ("e.txt.xz", "g.h5", {}), InputError,
     ["e.txt.xz", "not a valid xz file"]),
    ("truncated xz", {"e.txt.xz": half(lzma.compress(EDGES))}, ("e.txt.xz", "g.h5", {}), InputError,
     ["truncated"]),
    ("garbage bz2", {"e.txt.bz2": b"garbage, not bz2\n"}, ("e.txt.bz2", "g.h5", {}), InputError,
     ["e.txt.bz2", "not a valid bzip2 file"]),
    ("truncated bz2", {"e.txt.bz2": half(bz2.compress(EDGES))}, ("e.txt.bz2", "g.h5", {}), InputError,
     ["truncated"]),
    ("compressed raw pairs", {"e.bin64": gzip.compress(b"\0" * 64)}, ("e.bin64", "g.h5", {}), InputError,
     ["decompress"]),
    ("a gzipped edge list named .dat", {"x.dat": gzip.compress(b"0 1\n")}, ("x.dat", "g.h5", {}), InputError,
     ["x.dat", "gzip-compressed", "format='edgelist'", "--format edgelist", "bin32", "bin64"]),
    ("a store as input", {"g.h5": "store"}, ("g.h5", "o.h5", {}), InputError, ["g.h5", "HDF5"]),
    # -- inputs that are not files --
    ("a folder as input", {"in.txt/": None}, ("in.txt", "g.h5", {}), InputError, ["in.txt", "is a directory"]),
    ("a link loop as input", {"a.txt": ("link", "b.txt"), "b.txt": ("link", "a.txt")}, ("a.txt", "g.h5", {}),
     InputError, ["a.txt", "symbolic link loop"]),
    ("a missing input", {}, ("nope.txt", "g.h5", {}), InputError, ["nope.txt", "no such file"]),
    # -- budgets --
    ("per-vertex arrays beyond the budget", {"e.txt": "0 1\n"}, ("e.txt", "g.h5", {"num_vertices": 10**11}),
     ParameterError, ["100,000,000,000 vertices", "memory budget"]),
    ("num_vertices not an integer", {"e.txt": "0 1\n"}, ("e.txt", "g.h5", {"num_vertices": 1e3}), ParameterError,
     ["num_vertices", "1000.0"]),
    # -- options of the wrong type, never read as something else --
    ("overwrite a string", {"e.txt": "0 1\n", "g.h5": "store"}, ("e.txt", "g.h5", {"overwrite": "no"}), ParameterError,
     ["overwrite must be True or False", "'no'"]),
    ("directed a string", {"e.txt": "0 1\n"}, ("e.txt", "g.h5", {"directed": "no"}), ParameterError,
     ["directed must be True or False", "'no'"]),
    ("dedupe None", {"e.txt": "0 1\n"}, ("e.txt", "g.h5", {"dedupe": None}), ParameterError, ["dedupe", "None"]),
    ("interval_size not an integer", {"e.txt": "0 1\n"}, ("e.txt", "g.h5", {"interval_size": 1.5}), ParameterError,
     ["interval_size", "1.5"]),
    ("delimiter not a string", {"e.csv": "0,1\n"}, ("e.csv", "g.h5", {"delimiter": 5}), ParameterError,
     ["delimiter", "5"]),
    ("output not a path", {"e.txt": "0 1\n"}, ("e.txt", None, {}), ParameterError, ["output must be a path"]),
]


def _corrupt(data):
    data = bytearray(data)
    data[20:30] = b"x" * 10
    return bytes(data)


def make(folder, files):
    for name, content in files.items():
        path = folder / name
        if name.endswith("/"):
            path.mkdir()
        elif isinstance(content, tuple) and content[0] == "link":
            os.symlink(content[1], path)
        elif isinstance(content, tuple) and content[0] == "hardlink":
            os.link(folder / content[1], path)
        elif content == "store":
            store(path)
        elif content == "hdf5":
            import h5py
            with h5py.File(path, "w") as h5:
                h5["x"] = np.arange(3)
        elif callable(content):
            path.write_bytes(content(folder))
        elif isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_bad_input_or_output_is_one_line_and_changes_nothing(tmp_path, monkeypatch, case):
    _, files, (src, out, kw), kind, words = case
    monkeypatch.chdir(tmp_path)
    make(tmp_path, files)
    before = snapshot(tmp_path)
    with pytest.raises(kind) as info:
        ooc_graph.convert(src, out, progress=False, **kw)
    message = str(info.value)
    assert "\n" not in message and len(message) < 400, message
    for word in words:
        assert word in message, (word, message)
    assert snapshot(tmp_path) == before  # inputs and old stores intact, nothing left behind


def test_stores_are_replaced_only_when_asked(tmp_path):
    out = tmp_path / "g.h5"
    store(out)
    (tmp_path / "e.txt").write_text("0 1\n1 2\n2 3\n")
    G = ooc_graph.convert(tmp_path / "e.txt", out, overwrite=True, progress=False)
    assert G.num_vertices == 4
    G.close()
    for make_store in (lambda: ooc_graph.generate.grid(out, 2, 2, progress=False),
                       lambda: ooc_graph.generate.rmat(out, 3, 2, progress=False),
                       lambda: ooc_graph.generate.urand(out, 3, 2, progress=False)):
        with pytest.raises(StoreError, match="overwrite=True"):
            make_store()
    assert ooc_graph.generate.grid(out, 2, 3, overwrite=True, progress=False).num_vertices == 6
    (tmp_path / "notes.txt").write_text("keep me")
    with pytest.raises(StoreError, match="not an ooc_graph store"):
        ooc_graph.generate.grid(tmp_path / "notes.txt", 2, 2, overwrite=True, progress=False)
    assert (tmp_path / "notes.txt").read_text() == "keep me"


def test_a_generator_checks_before_drawing(tmp_path):
    with pytest.raises(ParameterError, match="memory budget"):
        ooc_graph.generate.rmat(tmp_path / "r.h5", 40, 1, memory="1GB", progress=False)  # 2**40 vertices
    store(tmp_path / "g.h5")
    before = snapshot(tmp_path)
    for kw, words in ((dict(seed="x"), "seed must be"), (dict(seed=-1), "seed must be"),
                      (dict(weighted="no"), "weighted must be"), (dict(overwrite="no"), "overwrite must be"),
                      (dict(interval_size=0.5), "interval_size must be")):
        with pytest.raises(ParameterError, match=words):
            ooc_graph.generate.rmat(tmp_path / "g.h5", 3, 2, progress=False, **kw)
    assert snapshot(tmp_path) == before


def test_ids_and_weights_kept_exactly(tmp_path):
    big, small = 2**63 - 1, -2**63
    (tmp_path / "e.txt").write_text(f"{big} 0\n{small} {big}\n")
    G = ooc_graph.convert(tmp_path / "e.txt", tmp_path / "a.h5", progress=False)
    assert G.labels.tolist() == [small, 0, big]
    (tmp_path / "w.txt").write_text("0 1 1e300\n1 2 1e-50\n")
    G = ooc_graph.convert(tmp_path / "w.txt", tmp_path / "b.h5", weight_dtype="float64", progress=False)
    assert sorted(G.csr("out")[2].tolist()) == [1e-50, 1e300]


@pytest.mark.parametrize("cols,words", [
    ((np.array([2**63, 1], np.uint64), np.array([0, 1], np.uint64)), ["above 2**63-1", "9223372036854775808"]),
    ((np.array([1e30, 1.0]), np.array([0.0, 1.0])), ["64-bit", "1e+30"]),
    ((np.array([np.inf, 1.0]), np.array([0.0, 1.0])), ["64-bit", "inf"]),
    ((np.array([np.nan, 1.0]), np.array([0.0, 1.0])), ["nan"]),
    ((np.array([1.5, 1.0]), np.array([0.0, 1.0])), ["not an integer", "1.5"]),
    ((np.array([0, 1]), np.array([1, 2]), np.array([1.0, 1e300])), ["too large for float32", "1e+300"]),
    ((np.array([0, 1]), np.array([1, 2]), np.array(["1", "x"], dtype=object)), ["weights must be numbers"]),
])
def test_python_ids_and_weights_never_wrap(tmp_path, cols, words):
    with pytest.raises(InputError) as info:
        ooc_graph.convert(cols, tmp_path / "g.h5", progress=False)
    for word in words:
        assert word in str(info.value)
    assert list(tmp_path.iterdir()) == []


def test_uint64_ids_through_the_builder(tmp_path):
    from ooc_graph.ingest import GraphBuilder
    with pytest.raises(InputError, match="above 2"):
        with GraphBuilder(tmp_path / "g.h5", directed=True, weighted=False, progress=False) as b:
            b.add(np.array([2**64 - 1], np.uint64), np.array([0], np.uint64))
    assert list(tmp_path.iterdir()) == []


def test_networkx_bad_weights_and_huge_labels(tmp_path):
    import networkx as nx
    H = nx.DiGraph()
    H.add_edge(0, 1, weight="heavy")
    with pytest.raises(InputError, match="weights must be numbers"):
        ooc_graph.convert(H, tmp_path / "g.h5", progress=False)
    H = nx.DiGraph()
    H.add_edge(0, 2**64)
    with pytest.raises(InputError, match="64-bit"):
        ooc_graph.convert(H, tmp_path / "g.h5", progress=False)


@pytest.mark.parametrize("name,text", [("e.csv", "\ufeff0,1\n1,2\n"), ("e.txt", "\ufeff0 1\n1 2\n"),
                                       ("h.csv", "\ufeffsrc,dst\n0,1\n1,2\n")])
def test_a_byte_order_mark_is_skipped(tmp_path, name, text):
    (tmp_path / name).write_text(text, encoding="utf-8")
    G = ooc_graph.convert(tmp_path / name, tmp_path / "g.h5", progress=False)
    indptr, indices, _ = G.csr("out")
    assert (G.num_vertices, indptr.tolist(), indices.tolist()) == (3, [0, 1, 2, 2], [1, 2])


def test_compressed_by_content_and_explicit_format(tmp_path):
    (tmp_path / "x.dat").write_bytes(gzip.compress(b"\xef\xbb\xbf0 1\n1 2\n"))
    G = ooc_graph.convert(tmp_path / "x.dat", tmp_path / "g.h5", format="edgelist", progress=False)
    assert G.num_arcs == 2


def test_umask_is_honoured(tmp_path):
    old = os.umask(0o027)
    try:
        ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False).close()
    finally:
        os.umask(old)
    assert (tmp_path / "g.h5").stat().st_mode & 0o777 == 0o640


def test_temporary_store_is_made_not_truncated(tmp_path, monkeypatch):
    """The store's temporary file is created by HDF5 with O_EXCL, never opened over an existing
    file with O_TRUNC (after which ext4 writes the whole file back on close: seconds for a large
    store); a file already at a name it creates is refused and left as it was."""
    from ooc_graph.store import writer
    opened = []
    real = writer.WrittenFile.__init__  # every file this library writes

    def record(self, path, mode, **kw):
        opened.append((Path(path), mode))
        real(self, path, mode, **kw)
    monkeypatch.setattr(writer.WrittenFile, "__init__", record)
    ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False).close()
    assert [(p.parent.name.startswith(".g.h5.partial-"), m) for p, m in opened if m != "r"] == [(True, "x")]
    f = writer.AtomicFile(tmp_path / "h.h5")
    assert f.tmp is None  # nothing is made until create()
    (tmp_path / "taken.h5").write_bytes(b"someone else's")
    with pytest.raises(OSError):
        writer.create_h5(tmp_path / "taken.h5")
    assert (tmp_path / "taken.h5").read_bytes() == b"someone else's"


# -- faults while writing ---------------------------------------------------------------------------
def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device")


@pytest.mark.parametrize("where", ["scratch", "store", "chunks", "rename"])
def test_disk_full_is_one_line_and_leaves_nothing(tmp_path, monkeypatch, configure, where):
    from ooc_graph.ingest import scratch
    from ooc_graph.store import chunks, writer
    out = tmp_path / "g.h5"
    store(out)
    before = snapshot(tmp_path)
    if where == "scratch":
        monkeypatch.setattr(scratch.Spill, "append", _enospc)
    elif where == "store":  # appended through h5py
        monkeypatch.setattr(chunks.Appender, "append", _enospc)
    elif where == "chunks":  # written chunk by chunk
        pytest.importorskip("numba")
        configure({"store.chunk_writer_min_chunks": 0})
        configure({"ingest.compiled_min_budget": 0})
        monkeypatch.setattr(chunks.DirectAppender, "_write_chunk", _enospc)
    else:
        monkeypatch.setattr(writer.os, "replace", _enospc)
    rng = np.random.default_rng(0)
    with pytest.raises(StoreError) as info:
        if where == "chunks":  # whole chunks of 16-bit local ids to write
            ooc_graph.convert(rng.integers(0, 1000, (1000, 2)), out, overwrite=True, progress=False, chunk_arcs=100)
        ooc_graph.convert(rng.integers(0, 100, (1000, 2)), out, overwrite=True, progress=False)
    assert str(info.value).startswith(f"{out}: cannot write the store: no space left on the device (disk full)")
    assert "\n" not in str(info.value)
    assert snapshot(tmp_path) == before


def test_unwritable_folder(tmp_path, monkeypatch):
    (tmp_path / "e.txt").write_text("0 1\n")
    real_access = os.access
    # Root may write anywhere: pretend the folder is read-only.
    monkeypatch.setattr(os, "access", lambda path, mode: real_access(path, mode) and str(path) != str(tmp_path))
    with pytest.raises(StoreError, match="is not writable"):
        ooc_graph.convert(tmp_path / "e.txt", tmp_path / "g.h5", progress=False)
    monkeypatch.undo()
    from ooc_graph.store import temporary

    def refuse(*a, **k):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path))
    monkeypatch.setattr(temporary.tempfile, "mkdtemp", refuse)
    with pytest.raises(StoreError, match="cannot write the store: permission denied"):
        ooc_graph.convert(tmp_path / "e.txt", tmp_path / "g.h5", progress=False)
    assert [p.name for p in tmp_path.iterdir()] == ["e.txt"]


# -- scratch: stale, SIGTERM ------------------------------------------------------------------------
def dead_pid():
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _marked(folder, pid, target, host=None):
    """A temporary folder as process ``pid`` of this project would have left it."""
    import json
    import socket
    from ooc_graph.store import temporary
    folder.mkdir()
    (folder / "input.src").write_bytes(b"\0" * 8)
    (folder / temporary.MARKER).write_text(json.dumps(
        {"owner": "ooc_graph", "host": host or socket.gethostname(), "pid": pid, "target": target}))
    return folder


def test_stale_scratch_of_dead_processes_is_removed(tmp_path):
    dead, alive = dead_pid(), os.getpid()
    stale = [_marked(tmp_path / f".g.h5.build-{dead}-abc123", dead, "g.h5"),
             _marked(tmp_path / f".x.h5.partial-{dead}-k2j_4", dead, "x.h5")]
    kept = [_marked(tmp_path / f".g.h5.build-{alive}-def456", alive, "g.h5"),
            _marked(tmp_path / f".g.h5.build-{dead}-aaa111", dead, "g.h5", host="another-host"),
            _marked(tmp_path / f".g.h5.build-{dead}-bbb222", dead, "other.h5"),  # marker of another target
            _marked(tmp_path / f".g.h5.build-{dead}-ccc333", dead + 1, "g.h5")]  # marker of another pid
    ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False).close()
    assert not any(p.exists() for p in stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([p.name for p in kept] + ["g.h5"])


def test_files_that_only_look_like_scratch_are_never_removed(tmp_path):
    """A conversion removes only what this project made: a user's folders and files named like its
    scratch or temporary stores, of processes long gone, stay with their contents."""
    dead = dead_pid()
    (tmp_path / ".proj.build-1999-v2").mkdir()
    (tmp_path / ".proj.build-1999-v2" / "notes.txt").write_text("x")
    (tmp_path / f".g.h5.build-{dead}-abc123").mkdir()
    (tmp_path / f".g.h5.build-{dead}-abc123" / "input.src").write_bytes(b"\0" * 8)
    (tmp_path / f".g.h5.build-{dead}-bad").mkdir()
    (tmp_path / f".g.h5.build-{dead}-bad" / ".ooc_graph-temporary").write_text("{not json")
    (tmp_path / f".x.h5.{dead}-k2j_4.partial").write_bytes(b"mine")
    (tmp_path / f".x.h5.partial-{dead}-k2j_4").write_bytes(b"a file, not a folder")
    (tmp_path / "notes.partial").write_bytes(b"")
    (tmp_path / "in.txt").write_text("0 1\n")
    before = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    from ooc_graph.cli import main
    assert main(["convert", "--quiet", str(tmp_path / "in.txt"), str(tmp_path / "g.h5")]) == 0
    after = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*"))
    assert after == sorted(before + ["g.h5"])
    assert (tmp_path / ".proj.build-1999-v2" / "notes.txt").read_text() == "x"


def test_a_killed_conversion_is_swept_by_the_next(tmp_path):
    script = tmp_path / "kill.py"
    script.write_text("import os, signal, sys, numpy as np, ooc_graph\n"
                      "from ooc_graph.ingest import builder\n"
                      "real = builder.GraphBuilder.finish\n"
                      "def die(self, *a, **k):\n"
                      "    os.kill(os.getpid(), signal.SIGKILL)\n"
                      "builder.GraphBuilder.finish = die\n"
                      "ooc_graph.convert(np.array([[0, 1]]), sys.argv[1], progress=False)\n")
    out = tmp_path / "out"
    out.mkdir()
    p = subprocess.run([sys.executable, str(script), str(out / "g.h5")], capture_output=True, text=True)
    assert p.returncode == -signal.SIGKILL, p.stderr
    left = [q.name for q in out.iterdir()]
    assert left and all(n.startswith(".g.h5.build-") for n in left)
    ooc_graph.convert(np.array([[0, 1]]), out / "g.h5", progress=False).close()
    assert [q.name for q in out.iterdir()] == ["g.h5"]


def test_scratch_names_carry_the_pid(tmp_path, monkeypatch):
    from ooc_graph.ingest import builder
    seen = []
    real = builder.Spill.append

    def spy(self, *a, **k):
        seen.extend(p.name for p in tmp_path.iterdir())
        real(self, *a, **k)
    monkeypatch.setattr(builder.Spill, "append", spy)
    ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False).close()
    assert any(name.startswith(f".g.h5.build-{os.getpid()}-") for name in seen), seen


def test_sigterm_handler_restored(tmp_path):
    before = signal.getsignal(signal.SIGTERM)
    ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False).close()
    with pytest.raises(InputError):
        ooc_graph.convert(np.array([[0, 1.5]]), tmp_path / "h.h5", progress=False)
    assert signal.getsignal(signal.SIGTERM) is before


_KILL = """
import os, signal, sys, time
import numpy as np
import ooc_graph
from ooc_graph.ingest import builder, writing
when, handler = sys.argv[2], sys.argv[3]
if handler == "exit7":
    signal.signal(signal.SIGTERM, lambda s, f: sys.exit(7))
if when == "finish":  # SIGTERM while the store is being written
    real = writing.write_array
    def term(*a, **k):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(1)
        return real(*a, **k)
    writing.write_array = term
def edges():
    yield np.arange(1000), np.arange(1, 1001), None
    if when == "add":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(5)
    yield np.arange(10), np.arange(10), None
with builder.GraphBuilder(sys.argv[1], directed=True, weighted=False, progress=False) as b:
    b._memory_cap = -1  # spill to scratch files, as a large input does
    for s, d, w in edges():
        b.add(s, d, w)
    b.finish()
print("finished")
"""


@pytest.mark.parametrize("when", ["add", "finish"])
@pytest.mark.parametrize("handler", ["default", "exit7"])
def test_sigterm_removes_scratch_and_partial(tmp_path, when, handler):
    script = tmp_path / "kill.py"
    script.write_text(textwrap.dedent(_KILL))
    folder = tmp_path / "out"
    folder.mkdir()
    r = subprocess.run([sys.executable, str(script), str(folder / "g.h5"), when, handler],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == (-signal.SIGTERM if handler == "default" else 7), r.stderr
    assert "finished" not in r.stdout
    assert list(folder.iterdir()) == []


# -- progress --------------------------------------------------------------------------------------
def test_reading_progress_counts_the_input_bytes(tmp_path, monkeypatch):
    import ooc_graph.ingest as ingest
    bars = {}

    class Bar:
        def __init__(self, *, total=None, unit="it", desc="", progress=None):
            self.total, self.n, self.unit = total, 0, unit
            bars[desc] = self

        def update(self, k):
            self.n += k

        def close(self):
            pass
    monkeypatch.setattr(ingest, "progress_bar", Bar)
    path = tmp_path / "e.txt.gz"
    with gzip.open(path, "wt") as f:
        f.write("".join(f"{i} {i + 1}\n" for i in range(20000)))
    ooc_graph.convert(path, tmp_path / "g.h5", memory="4MB").close()
    assert bars["reading"].unit == "B" and bars["reading"].total == path.stat().st_size
    assert bars["reading"].n == path.stat().st_size
    ooc_graph.convert(np.array([[0, 1]] * 10), tmp_path / "h.h5").close()
    assert (bars["reading"].unit, bars["reading"].total, bars["reading"].n) == ("edge", 10, 10)
