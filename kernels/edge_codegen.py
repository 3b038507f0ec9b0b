"""CUDA source for the general edge operator, generated from an expression tree.

Pure Python (no CuPy): :mod:`.gpu` compiles what :func:`kernel_source` returns with
``cupy.RawKernel``, memoised per device, and the CPU tests compile the same text with a C++
compiler and a small shim to check it. One kernel per (expression, dtypes, monoid): one thread
per arc reads ``xs[src]``, ``xd[dst]``, the weight (and ``y[src]``, ``y[dst]`` where ``f`` reads
``y_src`` or ``y_dst``), evaluates ``f`` in double precision and
combines it into ``out[dst]`` with an atomic of the monoid:

- ``sum``: ``atomicAdd`` (double, float, int; 64-bit integers through unsigned long long),
- ``min``/``max``: ``atomicMin``/``atomicMax`` on integers; a compare-and-swap loop on floating
  point (correct for negative values too, unlike comparing bit patterns),
- ``or``: a plain store of 1 where ``f`` is non-zero (every writer writes the same value),
- ``store``: ``out[i] = f`` per arc, no combining (for most_frequent, which sorts the values).
"""

from __future__ import annotations

import hashlib

import numpy as np

CTYPES = {np.dtype(np.float64): "double", np.dtype(np.float32): "float", np.dtype(np.int64): "long long",
          np.dtype(np.int32): "int", np.dtype(np.uint8): "unsigned char", np.dtype(np.bool_): "unsigned char"}
MONOIDS = ("sum", "min", "max", "or", "store")

_PRELUDE = r"""
#define OOC_INF __longlong_as_double(0x7ff0000000000000LL)
__device__ __forceinline__ double ooc_min(double a, double b) { return b < a ? b : a; }
__device__ __forceinline__ double ooc_max(double a, double b) { return b > a ? b : a; }
__device__ __forceinline__ void ooc_atomic_min(double* p, double v) {
    unsigned long long* a = (unsigned long long*)p;
    unsigned long long old = *a;
    while (v < __longlong_as_double((long long)old)) {
        const unsigned long long seen = atomicCAS(a, old, (unsigned long long)__double_as_longlong(v));
        if (seen == old) break;
        old = seen;
    }
}
__device__ __forceinline__ void ooc_atomic_max(double* p, double v) {
    unsigned long long* a = (unsigned long long*)p;
    unsigned long long old = *a;
    while (v > __longlong_as_double((long long)old)) {
        const unsigned long long seen = atomicCAS(a, old, (unsigned long long)__double_as_longlong(v));
        if (seen == old) break;
        old = seen;
    }
}
__device__ __forceinline__ void ooc_atomic_min(float* p, float v) {
    int* a = (int*)p;
    int old = *a;
    while (v < __int_as_float(old)) {
        const int seen = atomicCAS(a, old, __float_as_int(v));
        if (seen == old) break;
        old = seen;
    }
}
__device__ __forceinline__ void ooc_atomic_max(float* p, float v) {
    int* a = (int*)p;
    int old = *a;
    while (v > __int_as_float(old)) {
        const int seen = atomicCAS(a, old, __float_as_int(v));
        if (seen == old) break;
        old = seen;
    }
}
__device__ __forceinline__ void ooc_atomic_min(int* p, int v) { atomicMin(p, v); }
__device__ __forceinline__ void ooc_atomic_max(int* p, int v) { atomicMax(p, v); }
__device__ __forceinline__ void ooc_atomic_min(long long* p, long long v) { atomicMin(p, v); }
__device__ __forceinline__ void ooc_atomic_max(long long* p, long long v) { atomicMax(p, v); }
__device__ __forceinline__ void ooc_atomic_add(double* p, double v) { atomicAdd(p, v); }
__device__ __forceinline__ void ooc_atomic_add(float* p, float v) { atomicAdd(p, v); }
__device__ __forceinline__ void ooc_atomic_add(int* p, int v) { atomicAdd(p, v); }
__device__ __forceinline__ void ooc_atomic_add(long long* p, long long v) {
    atomicAdd((unsigned long long*)p, (unsigned long long)v);
}
"""


def c_expression(tree) -> str:
    """The C expression (double precision) of an expression tree over ``src``, ``dst``, ``w``,
    ``y_src`` and ``y_dst``."""
    kind = tree[0]
    if kind == "var":
        return tree[1]
    if kind == "const":
        value = tree[1]
        if value == np.inf:
            return "OOC_INF"
        return repr(float(value))
    if kind == "neg":
        return f"(-{c_expression(tree[1])})"
    if kind == "not":
        return f"(({c_expression(tree[1])}) == 0.0 ? 1.0 : 0.0)"
    if kind in ("and", "or"):
        op = "&&" if kind == "and" else "||"
        return f"((({c_expression(tree[1])}) != 0.0 {op} ({c_expression(tree[2])}) != 0.0) ? 1.0 : 0.0)"
    if kind == "bin":
        a, b = c_expression(tree[2]), c_expression(tree[3])
        return f"pow({a}, {b})" if tree[1] == "**" else f"({a} {tree[1]} {b})"
    if kind == "cmp":
        return f"(({c_expression(tree[2])} {tree[1]} {c_expression(tree[3])}) ? 1.0 : 0.0)"
    if kind == "call":
        args = [c_expression(t) for t in tree[2:]]
        name = tree[1]
        if name == "where":
            return f"(({args[0]}) != 0.0 ? ({args[1]}) : ({args[2]}))"
        if name == "abs":
            return f"fabs({args[0]})"
        return f"ooc_{name}({args[0]}, {args[1]})"
    raise ValueError(f"unknown expression node {kind!r}")


def _uses(tree, name) -> bool:
    if tree[0] == "var":
        return tree[1] == name
    return any(_uses(t, name) for t in tree[1:] if isinstance(t, tuple))


def kernel_source(tree, xs_dtype, xd_dtype, w_dtype, out_dtype, monoid: str, y_dtype=None):
    """``(name, source)`` of the kernel for one expression, operand types and monoid. ``w_dtype``
    None: an unweighted graph (``w`` is 1); ``y_dtype`` None: no second vertex array (read as
    ``double``, never read). The kernel's parameters are
    ``(int src[m], int dst[m], W w[m], XS xs[], XD xd[], Y y[], unsigned char active[],
    int use_active, OUT out[], long long m)``; with ``use_active`` 0 every arc counts, else arcs
    whose source has ``active[src] != 0``."""
    if monoid not in MONOIDS:
        raise ValueError(f"unknown monoid {monoid!r} (valid: {', '.join(MONOIDS)})")
    xs_t, xd_t = CTYPES[np.dtype(xs_dtype)], CTYPES[np.dtype(xd_dtype)]
    out_t = CTYPES[np.dtype(out_dtype)]
    w_t = "double" if w_dtype is None else CTYPES[np.dtype(w_dtype)]
    y_t = "double" if y_dtype is None else CTYPES[np.dtype(y_dtype)]
    expr = c_expression(tree)
    key = repr((tree, xs_t, xd_t, None if w_dtype is None else w_t, out_t, monoid, y_t))
    name = f"ooc_graph_edge_map_{monoid}_{hashlib.sha1(key.encode()).hexdigest()[:12]}"
    lines = []
    if _uses(tree, "src"):
        lines.append("const double src = (double)xs[u];")
    if _uses(tree, "dst"):
        lines.append("const double dst = (double)xd[v];")
    if _uses(tree, "w"):
        lines.append("const double w = " + ("1.0;" if w_dtype is None else "(double)arc_w[i];"))
    if _uses(tree, "y_src"):
        lines.append("const double y_src = (double)y[u];")
    if _uses(tree, "y_dst"):
        lines.append("const double y_dst = (double)y[v];")
    lines.append(f"const double val = {expr};")
    if monoid == "store":
        lines.append(f"out[i] = ({out_t})val;")
    elif monoid == "or":
        lines.append(f"if (val != 0.0) out[v] = ({out_t})1;")
    else:
        lines.append(f"ooc_atomic_{'add' if monoid == 'sum' else monoid}(&out[v], ({out_t})val);")
    body = "\n    ".join(lines)
    skip = "" if monoid == "store" else "if (use_active && !active[u]) return;\n    "
    # The or-store and per-arc stores work on any output type; the atomics need one of theirs.
    if monoid in ("sum", "min", "max") and out_t == "unsigned char":
        raise ValueError(f"monoid {monoid!r} has no atomic for 8-bit output (use float64, int32 or int64)")
    source = f"""{_PRELUDE}
extern "C" __global__ void {name}(const int* __restrict__ arc_src, const int* __restrict__ arc_dst,
                                  const {w_t}* __restrict__ arc_w, const {xs_t}* __restrict__ xs,
                                  const {xd_t}* __restrict__ xd, const {y_t}* __restrict__ y,
                                  const unsigned char* __restrict__ active,
                                  const int use_active, {out_t}* out, const long long m) {{
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const int u = arc_src[i];
    {skip}const int v = arc_dst[i];
    (void)v;
    {body}
}}
"""
    return name, source
