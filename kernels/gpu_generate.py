"""The generators' edges and weights on the GPU: CuPy elementwise kernels, one edge per thread,
over the device functions of ``gpu_generate.cu``.

Same functions and arguments as the NumPy reference (``cpu_generate.py``, which documents the
counter-based hash, the quadrant thresholds and the vertex permutation); the results are CuPy
arrays holding the same integers and floats bit for bit. Kernels are built once per device on
first use.
"""

from __future__ import annotations

from pathlib import Path

import cupy as cp
import numpy as np

from .cpu_generate import u64

_RMAT = """
    unsigned long long s, d;
    ooc_graph_rmat_edge(key, start + (unsigned long long)i, scale, t1, t2, t3, &perm[0], permuted, s, d);
    src = (T)s;
    dst = (T)d;
"""
_URAND = """
    unsigned long long s, d;
    ooc_graph_urand_edge(key, start + (unsigned long long)i, scale, s, d);
    src = (T)s;
    dst = (T)d;
"""
_WEIGHTS = "w = ooc_graph_edge_weight(key, start + (unsigned long long)i);"


@cp.memoize(for_each_device=True)
def _kernels():
    code = Path(__file__).with_name("gpu_generate.cu").read_text()
    return {
        "rmat": cp.ElementwiseKernel(
            "uint64 key, uint64 start, int32 scale, uint64 t1, uint64 t2, uint64 t3, raw uint64 perm, "
            "bool permuted", "T src, T dst", _RMAT, "ooc_graph_rmat_edges", preamble=code),
        "urand": cp.ElementwiseKernel("uint64 key, uint64 start, int32 scale", "T src, T dst", _URAND,
                                      "ooc_graph_urand_edges", preamble=code),
        "weights": cp.ElementwiseKernel("uint64 key, uint64 start", "float64 w", _WEIGHTS,
                                        "ooc_graph_edge_weights", preamble=code),
    }


def rmat_edges(key: int, start: int, count: int, scale: int, limits, perm=None, dtype=np.int64):
    """R-MAT edges ``start .. start + count - 1`` (``cpu_generate.rmat_edges``) as device arrays."""
    src, dst = cp.empty(count, dtype), cp.empty(count, dtype)
    if count:
        consts = cp.asarray(np.zeros(8, np.uint64) if perm is None else np.asarray(perm, np.uint64))
        t1, t2, t3 = (u64(t) for t in limits)
        _kernels()["rmat"](u64(key), u64(start), np.int32(scale), t1, t2, t3, consts, np.bool_(perm is not None),
                           src, dst)
    return src, dst


def urand_edges(key: int, start: int, count: int, scale: int, dtype=np.int64):
    """Uniform edges ``start .. start + count - 1`` (``cpu_generate.urand_edges``) as device arrays."""
    src, dst = cp.empty(count, dtype), cp.empty(count, dtype)
    if count:
        _kernels()["urand"](u64(key), u64(start), np.int32(scale), src, dst)
    return src, dst


def edge_weights(key: int, start: int, count: int):
    """Weights of edges ``start .. start + count - 1`` (``cpu_generate.edge_weights``) on the device."""
    w = cp.empty(count, np.float64)
    if count:
        _kernels()["weights"](u64(key), u64(start), w)
    return w
