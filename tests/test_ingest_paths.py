"""Every fast path of conversion writes the same store, byte for byte, as the plain one: relabelling
by lookup table or by binary search, any worker count, and (on a device) buckets sorted on the GPU."""

import threading

import h5py
import numpy as np
import pytest

import ooc_graph
from ooc_graph.ingest import builder as builder_module

from conftest import random_edges


def contents(path):
    """Every dataset's bytes and every attribute but the build's identity and timing."""
    out = {}
    with h5py.File(path, "r") as h5:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                out[name] = (obj.dtype.str, obj.shape, obj[()].tobytes())
        h5.visititems(visit)
        out["attrs"] = {k: v for k, v in h5.attrs.items() if k not in ("store_id", "built_by")}
    return out


def assert_same_store(a, b):
    ca, cb = contents(a), contents(b)
    assert ca.keys() == cb.keys()
    for name in ca:
        if name == "attrs":
            assert ca[name].keys() == cb[name].keys()
            for k in ca[name]:
                assert np.array_equal(ca[name][k], cb[name][k]), k
        else:
            assert ca[name] == cb[name], name


@pytest.mark.parametrize("directed", [True, False])
def test_relabelling_by_table_or_by_search(tmp_path, monkeypatch, directed):
    rng = np.random.default_rng(3)
    src, dst, w = random_edges(rng, n=5000, m=30000, weighted=True)
    src, dst = src * 3 + 7, dst * 3 + 7  # ids with gaps: relabelled
    G = ooc_graph.convert((src, dst, w), tmp_path / "table.h5", directed=directed, memory="2MB", progress=False)
    assert G.labels is not None
    G.close()
    monkeypatch.setattr(builder_module.GraphBuilder, "_lookup_table", staticmethod(lambda *a: (None, 0)))
    ooc_graph.convert((src, dst, w), tmp_path / "search.h5", directed=directed, memory="2MB",
                      progress=False).close()
    assert_same_store(tmp_path / "table.h5", tmp_path / "search.h5")


def test_stages_are_recorded(tmp_path):
    path = tmp_path / "e.txt"
    path.write_text("0 1\n1 2\n2 0\n")
    with ooc_graph.convert(path, tmp_path / "g.h5", progress=False) as G:
        stages = G.built_by["stages"]
    assert {"parse", "add", "ids", "degrees", "scatter", "sort", "csr", "cel"} <= stages.keys()
    assert all(v >= 0 for v in stages.values())


PLAIN_TEXTS = [
    "0 1\n1 2\n2 0\n",
    "# SNAP header\n# Nodes: 3\n\n0\t1\n1\t2\n2\t0\n",
    "0 1\r\n1 2\r\n\r\n2 0",
    "  0   1  \n\n1 2\n   \n-5 7\n",
    "0 1 0.5\n1 2 1e-3\n2 0 7\n",
    "% c\n1e3 2 0.25\n3 4 1\n",          # a float id: loadtxt refuses it, the Block reads 1000
    "0 1\n1 2\n# a comment in the middle\n2 0\n",
    "9223372036854775807 0\n-9223372036854775808 1\n",
]


PLAIN_TEXTS += [
    '0 1\nNA 2\n', "0 1\n\"3\" 2\n", "0 1 nan\n", "0 1 0.5\n2 3 inf\n", "0\t1\n2  3\n",  # refused by pyarrow
    "0 1\n1 2 3\n", "1 2\n18446744073709551616 0\n",                                         # and by all
]


@pytest.mark.parametrize("reader", ["arrow", "loadtxt"])
@pytest.mark.parametrize("text", PLAIN_TEXTS)
def test_plain_blocks_read_as_the_precise_reader_does(tmp_path, monkeypatch, text, reader):
    """pyarrow's CSV reader and ``numpy.loadtxt`` on plain blocks give the edges (or the error)
    the line-by-line Block reader gives."""
    from ooc_graph.ingest import formats

    if reader == "arrow":
        pytest.importorskip("pyarrow")
    else:
        monkeypatch.setattr(formats, "parse_arrow", lambda *a: None)
    path = tmp_path / "e.txt"
    path.write_text(text)

    def chunks():
        try:
            src = formats.read_edgelist(path, {"block_bytes": 16})
            return [(s.tolist(), d.tolist(), None if w is None else w.tolist()) for s, d, w, _ in src.chunks]
        except ooc_graph.errors.InputError as err:
            return str(err)
    fast = chunks()
    monkeypatch.setattr(formats, "parse_arrow", lambda *a: None)
    monkeypatch.setattr(formats, "parse_plain", lambda *a: None)
    assert repr(fast) == repr(chunks())


def test_arrow_reads_plain_blocks(tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    from ooc_graph.ingest import formats, text

    used = []
    monkeypatch.setattr(formats, "parse_arrow", lambda *a: used.append(1) or text.parse_arrow(*a))
    path = tmp_path / "e.txt"
    path.write_text("# h\n0\t1\n1\t2\n")
    assert [s.tolist() for s, *_ in formats.read_edgelist(path, {}).chunks] == [[0, 1]]
    assert text.parse_arrow(b"0 1\n1 2\n", (2, 3))[1].tolist() == [1, 2] and used


@pytest.mark.parametrize("text,line", [
    ("# h\n\n0 1 0.5\n1 2 1e300\n", 4),      # a weight float32 cannot hold, found by the builder
    ("0 1\n\n\n1 5\n", 4),                    # an id outside num_vertices
])
def test_plain_blocks_name_the_line(tmp_path, text, line):
    path = tmp_path / "e.txt"
    path.write_text(text)
    with pytest.raises(ooc_graph.errors.InputError, match=rf"e\.txt, line {line}:"):
        ooc_graph.convert(path, tmp_path / "g.h5", num_vertices=3, progress=False)


class _FakeCupy:
    """NumPy dressed as the few CuPy calls ``sorting._sort_gpu`` makes, so that its logic runs
    without a device (``argsort`` stable, as Thrust's is)."""

    def __init__(self):
        self.cuda = type("cuda", (), {"Device": lambda *a: type("D", (), {"mem_info": (1 << 40, 1 << 40)})()})
        self.int64 = np.int64

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def asarray(a):
        return np.array(a)

    @staticmethod
    def asnumpy(a):
        return np.asarray(a)

    @staticmethod
    def argsort(a):
        return np.argsort(a, kind="stable")

    @staticmethod
    def get_default_memory_pool():
        return type("P", (), {"free_bytes": lambda self: 0})()


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("dedupe", [False, True])
def test_gpu_sort_logic_matches_the_cpu(monkeypatch, configure, weighted, dedupe):
    """The GPU bucket sort's steps, run on NumPy, give the CPU's arrays bit for bit."""
    import sys

    from ooc_graph.ingest import sorting

    monkeypatch.setitem(sys.modules, "cupy", _FakeCupy())
    configure({"ingest.gpu_sort_min_arcs": 0})
    rng = np.random.default_rng(4)
    rows = rng.integers(100, 140, 5000).astype(np.int32)
    cols = rng.integers(0, 300, 5000).astype(np.int32)
    w = rng.integers(0, 9, 5000).astype(np.float32) / 4 if weighted else None
    for id_dtype in (np.int32, np.int64):
        cpu = sorting.sort_bucket([rows, cols, w], 100, 140, 300, dedupe=dedupe, id_dtype=id_dtype)
        gpu = sorting.sort_bucket([rows, cols, w], 100, 140, 300, dedupe=dedupe, id_dtype=id_dtype, gpu=True)
        assert (cpu[3], gpu[3]) == ("cpu", "gpu" if dedupe or not weighted else "cpu")
        for a, b in zip(cpu[:3], gpu[:3]):
            assert (a is None and b is None) or (a.dtype == b.dtype and a.tobytes() == b.tobytes())


def test_device_option_is_checked(tmp_path):
    from ooc_graph.ingest.sorting import gpu_available

    with pytest.raises(ooc_graph.errors.ParameterError, match="valid"):
        ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", device="tpu", progress=False)
    if not gpu_available():
        with pytest.raises(ooc_graph.errors.DeviceError, match="finds no CUDA device"):
            ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", device="gpu", progress=False)
    assert list(tmp_path.iterdir()) == []


@pytest.mark.gpu
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("weighted", [False, True])
def test_gpu_sorted_store_is_the_cpu_sorted_store(tmp_path, monkeypatch, configure, directed, weighted):
    """Buckets sorted on the GPU (every bucket, however small) give the CPU's store byte for byte,
    in one bucket or many, with one worker or several."""

    configure({"ingest.gpu_sort_min_arcs": 0})
    rng = np.random.default_rng(5)
    src, dst, w = random_edges(rng, n=20000, m=200000, weighted=weighted)
    for memory, workers in ((None, 1), ("3MB", 3)):
        names = []
        for device in ("cpu", "gpu"):
            out = tmp_path / f"{device}-{memory}-{workers}.h5"
            with ooc_graph.convert((src, dst, w), out, directed=directed, memory=memory, workers=workers,
                                   interval_size=4096, augment=True, device=device, progress=False) as G:
                stages = G.built_by["stages"]
            assert stages.get(f"buckets_{device}", 0) >= 1 and not stages.get(
                "buckets_" + ("gpu" if device == "cpu" else "cpu"))
            names.append(out)
        assert_same_store(*names)


@pytest.mark.gpu
@pytest.mark.parametrize("weighted", [False, True])
def test_generated_rmat_sorted_on_the_gpu(tmp_path, weighted):
    """A generated R-MAT (1M edges: buckets above the GPU's minimum) and a weighted input with its
    repeats kept (sorted on the CPU for their order): the CPU's stores."""
    for device in ("cpu", "auto"):
        with ooc_graph.generate.rmat(tmp_path / f"{device}.h5", 16, directed=True, weighted=weighted, seed=3,
                                     device=device, progress=False) as G:
            assert (G.built_by["stages"].get("buckets_gpu", 0) > 0) == (device == "auto")
    assert_same_store(tmp_path / "cpu.h5", tmp_path / "auto.h5")
    rng = np.random.default_rng(9)
    src, dst, w = random_edges(rng, n=1000, m=300000, weighted=True)
    for device in ("cpu", "gpu"):
        ooc_graph.convert((src, dst, w), tmp_path / f"keep-{device}.h5", dedupe=False, device=device,
                          progress=False).close()
    assert_same_store(tmp_path / "keep-cpu.h5", tmp_path / "keep-gpu.h5")


@pytest.mark.parametrize("directed,weighted", [(True, False), (False, True)])
def test_in_memory_or_on_disk_any_workers(tmp_path, monkeypatch, directed, weighted):
    """The input and buckets held in memory, or spilled to scratch files; split and sorted by 1 or
    4 threads: the same store."""
    rng = np.random.default_rng(6)
    src, dst, w = random_edges(rng, n=4000, m=40000, weighted=weighted)
    path = tmp_path / "e.txt"
    cols = [src, dst] + ([w] if weighted else [])
    np.savetxt(path, np.column_stack(cols), fmt=["%d", "%d"] + (["%.3f"] if weighted else []))
    runs = {}
    for name, memory, workers in (("memory", None, 1), ("memory4", None, 4), ("small", "1MB", 4)):
        with ooc_graph.convert(path, tmp_path / f"{name}.h5", directed=directed, memory=memory, workers=workers,
                               interval_size=512, progress=False) as G:
            runs[name] = G.built_by["stages"]["in_memory"]
    orig = builder_module.GraphBuilder.__init__

    def on_disk(self, *a, **k):
        orig(self, *a, **k)
        self._memory_cap = -1
    monkeypatch.setattr(builder_module.GraphBuilder, "__init__", on_disk)
    with ooc_graph.convert(path, tmp_path / "disk.h5", directed=directed, workers=2, interval_size=512,
                           progress=False) as G:
        runs["disk"] = G.built_by["stages"]["in_memory"]
    assert runs == {"memory": 1, "memory4": 1, "small": 0, "disk": 0}
    for name in ("memory4", "small", "disk"):
        assert_same_store(tmp_path / "memory.h5", tmp_path / f"{name}.h5")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["disk.h5", "e.txt", "memory.h5", "memory4.h5", "small.h5"]


@pytest.mark.parametrize("shift", [0, 10**6, -50])
def test_ids_seen_by_table_or_by_sorting(tmp_path, monkeypatch, shift):
    """The ids to relabel are collected in a table of one byte per id, or (negative ids, or ids
    too far apart for the budget) by sorting each chunk's; the same store."""
    rng = np.random.default_rng(7)
    src, dst, w = random_edges(rng, n=3000, m=20000)
    src, dst = src * 2 + shift, dst * 2 + shift
    chunks = [(src[i:i + 3000], dst[i:i + 3000]) for i in range(0, len(src), 3000)]

    def build(out):
        with builder_module.GraphBuilder(out, directed=True, weighted=False, progress=False) as b:
            for s, d in chunks:
                b.add(s, d)
            b.finish()
            return b._seen is not None and b._seen.any()
    assert build(tmp_path / "a.h5") == (shift >= 0)
    monkeypatch.setattr(builder_module.GraphBuilder, "_mark_seen", lambda self, *a: False)
    assert not build(tmp_path / "b.h5")
    assert_same_store(tmp_path / "a.h5", tmp_path / "b.h5")


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint16])
def test_ids_checked_and_marked_by_the_compiled_kernels(tmp_path, monkeypatch, configure, dtype):
    """The ids' extremes and marks of a file's chunks (relabelling), and their internal ids from
    the table in the degree pass, from numba's threads: the same table, extremes, ids and store as
    NumPy's, on chunks smaller than the threads, one id and many; numbered input (num_vertices)
    has only its extremes from numba, as has a generator's (drawn by numba on another thread)."""
    from ooc_graph.kernels import cpu
    if cpu.compiled() is None:
        pytest.skip("numba is not installed")
    from ooc_graph.kernels import cpu_ingest
    rng = np.random.default_rng(9)
    for k in (1, 3, 1000):
        a, b = rng.integers(5, 60000, k).astype(dtype), rng.integers(5, 60000, k).astype(dtype)
        assert cpu_ingest.id_range(a, b, 4) == (int(min(a.min(), b.min())), int(max(a.max(), b.max())))
        seen = np.zeros(60000, bool)
        cpu_ingest.mark_ids(a, b, seen, 3)
        assert np.array_equal(np.flatnonzero(seen), np.union1d(a, b))
        table = rng.permutation(60010).astype(np.int32)  # ids are 5..59999: a - base within it
        for base in (0, 3, -5):
            got = cpu_ingest.lookup_ids(a, b, table, base, 3)
            want = (table[a.astype(np.int64) - base], table[b.astype(np.int64) - base])
            assert all(np.array_equal(g, w_) and g.dtype == np.int32 for g, w_ in zip(got, want))
    src, dst, _ = random_edges(rng, n=3000, m=20000)
    src, dst = (src * 3 + 7).astype(dtype), (dst * 3 + 7).astype(dtype)
    used = []
    configure({"ingest.compiled_min_budget": 0})
    configure({"ingest.id_kernel_min_edges": 0})
    configure({"ingest.degrees_compiled_min_arcs": 0})
    monkeypatch.setattr(cpu_ingest, "mark_ids", lambda *a, real=cpu_ingest.mark_ids: used.append(1) or real(*a))
    monkeypatch.setattr(cpu_ingest, "lookup_ids", lambda *a, real=cpu_ingest.lookup_ids: used.append(2) or real(*a))
    monkeypatch.setattr(cpu_ingest, "id_range", lambda *a, real=cpu_ingest.id_range: used.append(3) or real(*a))
    ooc_graph.convert((src, dst), tmp_path / "compiled.h5", progress=False).close()
    assert set(used) == {1, 2, 3}
    used.clear()
    ooc_graph.convert((src % 3000, dst % 3000), tmp_path / "numbered.h5", num_vertices=3000, progress=False).close()
    assert set(used) == {3}
    with pytest.raises(ooc_graph.errors.InputError, match="out of range"):
        ooc_graph.convert((src, dst), tmp_path / "bad.h5", num_vertices=3000, progress=False)
    used.clear()
    ooc_graph.generate.rmat(tmp_path / "drawn.h5", 10, 8, seed=1, progress=False).close()
    assert set(used) == {3}
    configure({"ingest.id_kernel_min_edges": 1 << 40})  # NumPy only
    ooc_graph.convert((src, dst), tmp_path / "numpy.h5", progress=False).close()
    assert_same_store(tmp_path / "numpy.h5", tmp_path / "compiled.h5")


def test_parallel_kernels_one_thread_at_a_time_where_the_layer_needs_it(tmp_path, monkeypatch, configure):
    """Where numba's threading layer cannot take parallel launches from two threads at once
    (workqueue aborts the process), the generator's draws (on a thread of their own) and the
    builder's kernels take turns: the same store as when they run at once."""
    from ooc_graph import generate
    from ooc_graph.kernels import cpu
    if cpu.compiled() is None:
        pytest.skip("numba is not installed")
    from ooc_graph.kernels import cpu_ingest
    configure({"ingest.compiled_min_budget": 0})
    configure({"ingest.id_kernel_min_edges": 0})
    configure({"ingest.degrees_compiled_min_arcs": 0})
    configure({"ingest.generate_kernel_min_edges": 0})
    configure({"ingest.generate_step": 1 << 12})  # many draws beside many adds
    assert generate.implementation(1 << 14, "cpu", None) == "compiled"
    opts = dict(directed=True, weighted=True, seed=4, device="cpu", progress=False)
    ooc_graph.generate.rmat(tmp_path / "together.h5", 12, 4, **opts).close()
    held = []
    lock = cpu_ingest._ALONE

    class Watched:
        def __enter__(self):
            lock.acquire()
            held.append(threading.get_ident())

        def __exit__(self, *exc):
            lock.release()
    monkeypatch.setattr(cpu_ingest, "_CONCURRENT", False)
    monkeypatch.setattr(cpu_ingest, "_ALONE", Watched())
    ooc_graph.generate.rmat(tmp_path / "alone.h5", 12, 4, **opts).close()
    assert len(set(held)) == 2  # the drawing thread and the builder's both took turns
    assert_same_store(tmp_path / "together.h5", tmp_path / "alone.h5")


def test_spill_in_memory_holds_int32_where_ids_fit(tmp_path):
    from ooc_graph.ingest.scratch import Spill

    spill = Spill(tmp_path, "s", weighted=True, narrow=False, weight_dtype=np.float32, in_memory=True)
    spill.append(np.array([1, 2]), np.array([3, 4]), np.array([0.5, 1.5]), fits_int32=True)
    spill.append(np.array([2**40]), np.array([5]), np.array([2.5]))
    assert spill.nbytes == 2 * (4 + 4 + 4) + (8 + 8 + 4)
    chunks = [tuple(c.tolist() for c in chunk) for chunk in spill.read(2)]
    assert chunks == [([1, 2], [3, 4], [0.5, 1.5]), ([2**40], [5], [2.5])]
    assert [chunk[0].dtype for chunk in spill.read(2, wide=False)] == [np.int32, np.int64]  # as held
    spill.to_disk()
    chunks = [tuple(c.tolist() for c in chunk) for chunk in spill.read(5)]
    assert chunks == [([1, 2, 2**40], [3, 4, 5], [0.5, 1.5, 2.5])]
    spill.remove()
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int64, np.uint16])
def test_id_types_give_one_store(tmp_path, dtype):
    """Narrow id arrays are checked and spilled as they are: the store is the int64 one."""
    rng = np.random.default_rng(8)
    src, dst, _ = random_edges(rng, n=500, m=3000)
    for name, (s, d) in (("wide", (src, dst)), ("narrow", (src.astype(dtype), dst.astype(dtype)))):
        ooc_graph.convert((s * 3, d * 3), tmp_path / f"{name}.h5", progress=False).close()  # relabelled
        ooc_graph.convert((s, d), tmp_path / f"{name}-n.h5", num_vertices=500, progress=False).close()
    assert_same_store(tmp_path / "wide.h5", tmp_path / "narrow.h5")
    assert_same_store(tmp_path / "wide-n.h5", tmp_path / "narrow-n.h5")
    with pytest.raises(ooc_graph.errors.InputError, match="out of range"):
        ooc_graph.convert((src.astype(dtype), dst.astype(dtype)), tmp_path / "x.h5", num_vertices=400, progress=False)


def test_negative_ids_relabelled_through_the_table(tmp_path):
    """Chunks held as int32 beside a chunk with a negative id: the table's base is negative and
    the int32 chunks are widened before it is subtracted (near 2**31 they would wrap)."""
    chunks = [(np.array([1000, 0]), np.array([1, 999])), (np.array([-5]), np.array([0]))]
    with builder_module.GraphBuilder(tmp_path / "g.h5", directed=True, weighted=False, progress=False) as b:
        for s, d in chunks:
            b.add(s, d)
        assert b._spill.pieces[0]["src"].dtype == np.int32
        b.finish()
        assert b._lut is not None and b._lut_base == -5
    with ooc_graph.open(tmp_path / "g.h5") as G:
        assert G.labels.tolist() == [-5, 0, 1, 999, 1000]
        indptr, indices = G.csr("out")[:2]
        arcs = sorted((int(G.labels[u]), int(G.labels[v]))
                      for u in range(5) for v in indices[indptr[u]:indptr[u + 1]])
    assert arcs == [(-5, 0), (0, 999), (1000, 1)]
