"""The GPU backend's CUDA kernels (``gpu_kernels.cu``: chunk operators; ``gpu_traversal.cu``:
CSR traversals; ``gpu_wedges.cu``: triangles; ``gpu_brandes.cu``: betweenness), compiled by
NVRTC once per device on first use, and how they are launched: every launch goes to CuPy's
current stream."""

from __future__ import annotations

from pathlib import Path

import cupy as cp
import numpy as np

_SOURCES = ("gpu_kernels.cu", "gpu_traversal.cu", "gpu_wedges.cu", "gpu_brandes.cu")
_THREADS = 256
_LOCAL = {np.dtype(np.uint8): "unsigned char", np.dtype(np.uint16): "unsigned short",
          np.dtype(np.uint32): "unsigned int", np.dtype(np.uint64): "unsigned long long"}
_WEIGHT = {np.dtype(np.float32): "float", np.dtype(np.float64): "double"}
_TEMPLATES = ("relax_min", "tight_parent", "advance_min", "advance_queue", "advance_balanced", "csr_parent",
              "csr_parent_heavy", "csr_parent_warp")
_PLAIN = ("pull_sum", "hook_min", "scatter_min", "pagerank_step", "queue_turn", "bottom_up", "flag_count", "flag_ids",
          "wedge_count", "brandes_forward", "brandes_backward", "cell_starts", "block_keys", "block_ids")
_BY_DEGREE = ("inverse_degree",)  # templated on the type of the degrees (_DEGREES)
_DEGREES = {np.dtype(np.int64): "long long", np.dtype(np.int32): "int", np.dtype(np.float64): "double"}


@cp.memoize(for_each_device=True)
def _module():
    names = ([f"ooc_graph_decode<{t}>" for t in _LOCAL.values()]
             + [f"ooc_graph_{k}<{t}>" for k in _TEMPLATES for t in _WEIGHT.values()]
             + [f"ooc_graph_{k}" for k in _PLAIN]
             + [f"ooc_graph_{k}<{t}>" for k in _BY_DEGREE for t in _DEGREES.values()])
    code = "\n".join(Path(__file__).with_name(name).read_text() for name in _SOURCES)
    return cp.RawModule(code=code, options=("-std=c++14",), name_expressions=names)


def _kernel(name):
    return _module().get_function(name)


def _launch(name, m, args):
    """``name`` over ``m`` threads (nothing when ``m`` is 0)."""
    if m:
        _kernel(name)(((m + _THREADS - 1) // _THREADS,), (_THREADS,), args)


@cp.memoize(for_each_device=True)
def _dummy():
    return cp.zeros(1, dtype=np.float32)


@cp.memoize(for_each_device=True)
def _dummy64():
    return cp.zeros(1, dtype=np.float64)


def _plus(plus):
    return np.float64(0.0 if plus is None else plus)


def _weights(weights, plus):
    """The kernel arguments for arc weights: ``(array, use them, C type)``."""
    w = weights if weights is not None else _dummy()
    return w, np.int32(weights is not None and plus is None), _WEIGHT[w.dtype]
