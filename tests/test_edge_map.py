"""The general edge operator against a plain per-arc reference: every monoid, direction and
frontier, chunks down to one arc, tiny budgets; the expression parser; the CUDA code generator
(compiled with the host's C++ compiler and run one arc at a time, where one is installed)."""

import ctypes
import shutil
import subprocess
from collections import Counter

import numpy as np
import pytest

import ooc_graph
from ooc_graph import config
from ooc_graph.engine import Engine
from ooc_graph.engine.expression import LIBRARY, compile_function
from ooc_graph.errors import ParameterError
from ooc_graph.kernels import cpu, edge_codegen

from conftest import edge_array, random_edges

FUNCTIONS = ["src", "src * w", "w * src", "1", "min(src, dst)", "where(src > dst, src - dst, w)",
             "abs(src - 2) ** 2 / (1 + w)", "src != dst", "not (src < 3 and dst >= 1) or w == 0.5", "-max(src, w)",
             "where(y_src + w == y_dst and y_src < y_dst, src, 0)", "y_src * dst - y_dst"]
MONOIDS = ["sum", "min", "max", "or", "most_frequent"]


def arcs_of(G):
    """(src, dst, w) of every arc, from the out-CSR (not the CEL the operator streams)."""
    indptr, indices, w = G.csr("out")
    src = np.repeat(np.arange(G.num_vertices), np.diff(indptr))
    return src, np.asarray(indices, np.int64), (np.ones(src.size) if w is None else np.asarray(w, np.float64))


def reference(G, f, x, xd, monoid, frontier, direction, out, y=None):
    """One arc at a time, with Python's own arithmetic."""
    tree = compile_function(f).tree
    src, dst, w = arcs_of(G)
    if direction == "out" and G.directed:
        src, dst = dst, src
    elif direction == "both" and G.directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    out = out.copy()
    values = {}
    for u, v, wt in zip(src.tolist(), dst.tolist(), w.tolist()):
        if frontier is not None and not frontier[u]:
            continue
        with np.errstate(all="ignore"):
            env = {"src": np.float64(x[u]), "dst": np.float64(xd[v]), "w": np.float64(wt)}
            if y is not None:
                env.update(y_src=np.float64(y[u]), y_dst=np.float64(y[v]))
            val = float(cpu.evaluate(tree, env))
        values.setdefault(v, []).append(val)
    for v, vals in values.items():
        if monoid == "sum":
            out[v] += sum(vals)
        elif monoid == "min":
            out[v] = min(out[v], min(vals))
        elif monoid == "max":
            out[v] = max(out[v], max(vals))
        elif monoid == "or":
            out[v] = max(out[v], float(any(val != 0 for val in vals)))
        else:
            counts = Counter(vals)
            best = max(counts.values())
            out[v] = min(val for val, c in counts.items() if c == best)
    return out


CASES = [(seed, seed % 2 == 0, seed % 3 == 0, [1, 2, 5, None][seed % 4], [1, 3, 64][seed % 3]) for seed in range(40)]


@pytest.mark.parametrize("device", ["cpu", pytest.param("gpu", marks=pytest.mark.gpu)])
@pytest.mark.parametrize("seed,directed,weighted,interval_size,chunk_arcs", CASES)
def test_against_reference(tmp_path, monkeypatch, configure, seed, directed, weighted, interval_size, chunk_arcs, device):
    # Frontier passes as CSR advances (one process, CPU, where the CSR fits the budget) or chunk passes.
    configure({"traversal.advance_fraction": [0.0, np.inf][(seed // 2) % 2]})
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 30))
    src, dst, w = random_edges(rng, n=n, m=int(rng.integers(0, 3 * n + 1)), weighted=weighted)
    G = ooc_graph.convert(edge_array(src, dst, w), tmp_path / "g.h5", directed=directed, num_vertices=n,
                          interval_size=interval_size, chunk_arcs=chunk_arcs, progress=False)
    if device == "cpu":
        engine = Engine(G, device="cpu", memory=["2KiB", None][seed % 2])
    else:  # a device budget of the state and a few chunks streams them (generated kernels, CuPy)
        engine = Engine(G, device="gpu", device_memory=[6 * 8 * n + 3 * 24 * chunk_arcs + 1024, None][seed % 2])
    xp = engine.backend.xp
    x = rng.integers(0, 4, n).astype(np.float64)  # small values: most_frequent has ties and repeats
    xd = rng.integers(0, 4, n).astype(np.float64)
    y = rng.integers(0, 4, n).astype(np.float64)  # integral: y_src + w == y_dst holds on some arcs
    for i, f in enumerate(FUNCTIONS):
        monoid = MONOIDS[(seed + i) % len(MONOIDS)]
        direction = ["in", "out", "both"][(seed + i) % 3]
        frontier = None if (seed + i) % 4 == 0 else rng.random(n) < 0.5
        start = rng.integers(-2, 3, n).astype(np.float64)
        if monoid == "or":
            start = (start > 0).astype(np.float64)
        want = reference(G, f, x, xd, monoid, frontier, direction, start, y)
        got = engine.edge_map(f, x, x_dst=xd, y=y, monoid=monoid, frontier=frontier, direction=direction,
                              out=xp.asarray(start.copy()))
        np.testing.assert_allclose(engine.to_host(got), want, rtol=1e-12, atol=0 if device == "cpu" else 1e-12,
                                   err_msg=f"{f} {monoid} {direction}")


def test_defaults_and_frontier_ids(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1, 2.0], [2, 1, 3.0], [1, 3, 1.0], [3, 0, 5.0], [0, 2, 1.0]]),
                          tmp_path / "g.h5", interval_size=1, chunk_arcs=1, progress=False)
    e = Engine(G, device="cpu")
    x = np.arange(4.0)
    assert e.edge_map("mul_w", x).tolist() == [15.0, 6.0, 0.0, 1.0]
    assert e.edge_map("copy_src", x, monoid="min").tolist() == [3.0, 0.0, 0.0, 1.0]
    assert e.edge_map("one", direction="out").tolist() == [2.0, 1.0, 1.0, 1.0]  # out-degrees
    assert e.edge_map("one", monoid="max").tolist() == [1.0, 1.0, 1.0, 1.0]
    assert e.edge_map("copy_src", x, monoid="or", frontier=[0]).tolist() == [0, 0, 0, 0]  # x[0] is 0
    assert e.edge_map("src + 1", x, monoid="or", frontier=[0]).tolist() == [0, 1, 1, 0]
    # most_frequent: a vertex without arcs keeps its own value (a copy of x by default)
    assert e.edge_map("src", x, monoid="most_frequent", direction="both").tolist() == [1.0, 0.0, 0.0, 0.0]
    assert e.edge_map("src", x, monoid="most_frequent", frontier=[3]).tolist() == [3.0, 1.0, 2.0, 3.0]
    skipped = e.stats.chunks_skipped
    e.edge_map("src", x, frontier=[3])
    assert e.stats.chunks_skipped - skipped == G.num_arcs - 1  # chunks without an active source


def test_most_frequent_across_one_arc_chunks(tmp_path):
    """Vertex 9's in-arcs spread over a sub-graph of many one-arc chunks."""
    src = np.array([0, 1, 2, 3, 4, 5, 6, 7, 8, 0, 1])
    dst = np.array([9, 9, 9, 9, 9, 9, 9, 9, 9, 8, 8])
    G = ooc_graph.convert((src, dst), tmp_path / "g.h5", interval_size=16, chunk_arcs=1, progress=False)
    x = np.array([5, 3, 5, 3, 7, 7, 3, 5, 1, 0], np.float64)
    r = Engine(G, device="cpu").edge_map("src", x, monoid="most_frequent")
    assert r[9] == 3.0 and r[8] == 3.0  # 3 and 5 three times each: the smaller; 8: {5, 3} tie
    assert r[:8].tolist() == x[:8].tolist()


@pytest.mark.parametrize("bad", ["__import__('os')", "src.real", "x + 1", "src[0]", "lambda: 1", "min(src)",
                                 "'a'", "src if dst else w", "True", "open('f')", "src; w", "", "src % 2"])
def test_parser_refuses(bad):
    with pytest.raises(ParameterError, match="edge function|expression string"):
        compile_function(bad)


def test_parser_trees():
    assert compile_function("src*w").key == compile_function(" src * w ").key == compile_function("mul_w").key
    assert compile_function("1 < src < 3").tree[0] == "and"
    assert compile_function("where(src, inf, -w)").uses == {"src", "w"}
    assert compile_function("where(y_src + w == y_dst, src, 0)").uses == {"src", "w", "y_src", "y_dst"}
    assert set(LIBRARY) >= {"copy_src", "mul_w", "plus_w", "one"}
    with pytest.raises(ParameterError, match="monoid"):
        Engine.edge_map(None, "src", monoid="avg")


def test_wrong_shapes_refused(tmp_path):
    G = ooc_graph.convert(np.array([[0, 1]]), tmp_path / "g.h5", progress=False)
    e = Engine(G, device="cpu")
    with pytest.raises(ParameterError, match="one value per vertex"):
        e.edge_map("src", np.zeros(3))
    with pytest.raises(ParameterError, match="no x"):
        e.edge_map("src")
    with pytest.raises(ParameterError, match="no y"):
        e.edge_map("y_src + w", np.zeros(2))
    with pytest.raises(ParameterError, match="one value per vertex"):
        e.edge_map("y_src", y=np.zeros(3))
    with pytest.raises(ParameterError, match="direction"):
        e.edge_map("one", direction="sideways")


# -- the CUDA generator, run on the host ---------------------------------------------------------
_SHIM = r"""
#include <cmath>
#include <cstring>
#include <algorithm>
using std::pow; using std::fabs;
struct ooc_dim { unsigned x; };
static ooc_dim blockIdx, blockDim, threadIdx;
#define __global__
#define __device__
#define __forceinline__ inline
#define __restrict__
static double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, 8); return d; }
static long long __double_as_longlong(double d) { long long v; std::memcpy(&v, &d, 8); return v; }
static float __int_as_float(int v) { float f; std::memcpy(&f, &v, 4); return f; }
static int __float_as_int(float f) { int v; std::memcpy(&v, &f, 4); return v; }
template <typename T> static T atomicAdd(T* p, T v) { T old = *p; *p = old + v; return old; }
template <typename T> static T atomicMin(T* p, T v) { T old = *p; *p = std::min(old, v); return old; }
template <typename T> static T atomicMax(T* p, T v) { T old = *p; *p = std::max(old, v); return old; }
template <typename T> static T atomicCAS(T* p, T cmp, T v) { T old = *p; if (old == cmp) *p = v; return old; }
"""

_DRIVER = r"""
extern "C" void run(const int* s, const int* d, const {w}* w, const {xs}* xs, const {xd}* xd, const {y}* y,
                    const unsigned char* active, int use_active, {out}* out, long long m) {{
    blockDim.x = 1; threadIdx.x = 0;
    for (long long i = 0; i < m; ++i) {{
        blockIdx.x = (unsigned)i; {name}(s, d, w, xs, xd, y, active, use_active, out, m);
    }}
}}
"""

CODEGEN = [(f, monoid, out_dtype, weighted) for f in FUNCTIONS for monoid, out_dtype in
           [("sum", np.float64), ("sum", np.int64), ("min", np.float64), ("max", np.float32), ("min", np.int32),
            ("or", np.uint8), ("store", np.float64)] for weighted in (False, True)][::3]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compile the generated source on the host")
@pytest.mark.parametrize("f,monoid,out_dtype,weighted", CODEGEN)
def test_generated_cuda_matches_numpy(tmp_path, f, monoid, out_dtype, weighted):
    rng = np.random.default_rng(len(f) + len(monoid))
    n, m = 12, 60
    s = rng.integers(0, n, m).astype(np.int32)
    d = rng.integers(0, n, m).astype(np.int32)
    w = rng.integers(1, 8, m).astype(np.float32) / 4 if weighted else None
    xs = rng.integers(-3, 4, n).astype(np.float64)
    xd = rng.integers(-3, 4, n).astype(np.int64)
    active = (rng.random(n) < 0.6).astype(np.uint8)
    expr = compile_function(f)
    tree = expr.tree
    y = rng.integers(-3, 4, n).astype(np.int32) if expr.uses & {"y_src", "y_dst"} else None  # else never read
    name, source = edge_codegen.kernel_source(tree, xs.dtype, xd.dtype, None if w is None else w.dtype,
                                              out_dtype, monoid, None if y is None else y.dtype)
    ctype = edge_codegen.CTYPES
    code = _SHIM + source + _DRIVER.format(w="double" if w is None else "float", xs="double", xd="long long",
                                           y="double" if y is None else "int", out=ctype[np.dtype(out_dtype)],
                                           name=name)
    (tmp_path / "k.cpp").write_text(code)
    subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-o", str(tmp_path / "k.so"), str(tmp_path / "k.cpp")],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(tmp_path / "k.so"))
    size = m if monoid == "store" else n
    out = np.full(size, 2, dtype=out_dtype)
    wt = w if w is not None else np.ones(1)
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    yv = y if y is not None else np.ones(1)
    lib.run(ptr(s), ptr(d), ptr(wt), ptr(xs), ptr(xd), ptr(yv), ptr(active), ctypes.c_int(1), ptr(out),
            ctypes.c_longlong(m))
    # The same with NumPy, in double precision, combined arc by arc.
    env = {"src": xs[s], "dst": xd[d].astype(np.float64), "w": 1.0 if w is None else w.astype(np.float64)}
    if y is not None:
        env.update(y_src=y[s].astype(np.float64), y_dst=y[d].astype(np.float64))
    with np.errstate(all="ignore"):
        vals = np.broadcast_to(np.asarray(cpu.evaluate(tree, env), dtype=np.float64), (m,))
    want = np.full(size, 2, dtype=out_dtype)
    for i in range(m):
        if monoid == "store":
            want[i] = vals[i]
            continue
        if not active[s[i]]:
            continue
        v, val = d[i], out_dtype(vals[i]) if monoid != "or" else vals[i]
        if monoid == "sum":
            want[v] += val
        elif monoid == "min":
            want[v] = min(want[v], val)
        elif monoid == "max":
            want[v] = max(want[v], val)
        elif val != 0:
            want[v] = 1
    np.testing.assert_array_equal(out, want)


def test_small_frontiers_advance_over_the_csr(tmp_path, monkeypatch, configure):
    """A frontier with few arcs reads its CSR rows instead of the chunks: same answers, no pass."""
    G = ooc_graph.generate.grid(tmp_path / "m.h5", 30, 30, weighted=True, interval_size=64, chunk_arcs=128,
                                progress=False)
    e = Engine(G, device="cpu")
    x = np.arange(G.num_vertices, dtype=np.float64)
    frontier = np.zeros(G.num_vertices, dtype=bool)
    frontier[[0, 17, 450]] = True
    got = {}
    for fraction in (0.0, config.Config().traversal.advance_fraction):
        configure({"traversal.advance_fraction": fraction})
        before = e.stats.advances
        got[fraction] = [e.edge_map(f, x, monoid=m, frontier=frontier, direction=d)
                         for f, m, d in (("src * w", "sum", "in"), ("src + w", "min", "out"), ("src", "or", "both"))]
        assert (e.stats.advances - before) == (0 if fraction == 0.0 else 3)
    for a, b in zip(*got.values()):
        np.testing.assert_allclose(a, b, rtol=1e-15)
