"""Atomic operations on array elements for numba's parallel CPU kernels (LLVM's ``atomicrmw`` and
``cmpxchg``; numba has none of its own for the CPU).

Each takes an array and an index and acts on that element alone, with monotonic (relaxed)
ordering unless it says otherwise: the kernels need only each element's own history (a minimum
taken atomically, a slot reserved in a queue), and the end of a parallel region orders
everything before what follows it. :func:`cas128` updates two adjacent 64-bit words as one
(x86-64's ``cmpxchg16b``): a vertex's distance and its parent in one step.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

__all__ = ["atomic_min", "atomic_add", "atomic_or", "cas", "cas128", "load_acquire", "aligned_pairs"]


def _element(context, builder, array_type, array, index):
    """A pointer to ``array[index]`` (a C-contiguous array; no bounds check)."""
    data = context.make_array(array_type)(context, builder, array).data
    return builder.gep(data, [index])


def _integer_array(array, index):
    return isinstance(array, types.Array) and isinstance(array.dtype, types.Integer) and \
        isinstance(index, types.Integer)


def _rmw(op: str):
    def typer(typingctx, array, index, value):
        if not _integer_array(array, index) or not isinstance(value, types.Integer):
            return None

        def codegen(context, builder, signature, args):
            ptr = _element(context, builder, signature.args[0], args[0], args[1])
            value = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
            return builder.atomic_rmw(op, ptr, value, "monotonic")
        return array.dtype(array, index, value), codegen
    return typer


atomic_add = intrinsic(_rmw("add"))
atomic_add.__doc__ = "``array[index] += value`` atomically; returns the value before."
atomic_or = intrinsic(_rmw("or"))
atomic_or.__doc__ = "``array[index] |= value`` atomically; returns the value before."


@intrinsic
def atomic_min(typingctx, array, index, value):
    """``array[index] = min(array[index], value)`` atomically (unsigned or signed as the array's
    dtype); returns the value before."""
    if not _integer_array(array, index) or not isinstance(value, types.Integer):
        return None
    op = "min" if array.dtype.signed else "umin"

    def codegen(context, builder, signature, args):
        ptr = _element(context, builder, signature.args[0], args[0], args[1])
        value = context.cast(builder, args[2], signature.args[2], signature.args[0].dtype)
        return builder.atomic_rmw(op, ptr, value, "monotonic")
    return array.dtype(array, index, value), codegen


@intrinsic
def cas(typingctx, array, index, expected, new):
    """Compare-and-swap: ``array[index] = new`` if it holds ``expected``; returns the value it
    held (the swap happened where that equals ``expected``)."""
    if not _integer_array(array, index):
        return None

    def codegen(context, builder, signature, args):
        ptr = _element(context, builder, signature.args[0], args[0], args[1])
        dtype = signature.args[0].dtype
        old = context.cast(builder, args[2], signature.args[2], dtype)
        new = context.cast(builder, args[3], signature.args[3], dtype)
        result = builder.cmpxchg(ptr, old, new, "monotonic", "monotonic")
        return builder.extract_value(result, 0)
    return array.dtype(array, index, expected, new), codegen


@intrinsic
def load_acquire(typingctx, array, index):
    """``array[index]`` read with acquire ordering: reads after it in the program are not moved
    before it (a plain load on x86)."""
    if not _integer_array(array, index):
        return None

    def codegen(context, builder, signature, args):
        ptr = _element(context, builder, signature.args[0], args[0], args[1])
        load = builder.load_atomic(ptr, "acquire", signature.args[0].dtype.bitwidth // 8)
        return load
    return array.dtype(array, index), codegen


@intrinsic
def cas128(typingctx, array, row, expect_lo, expect_hi, new_lo, new_hi):
    """Compare-and-swap of the pair ``array[2 row], array[2 row + 1]`` of a uint64 array whose
    pairs are 16-byte aligned (:func:`aligned_pairs`), as one 128-bit word whose high half is the
    second: where it holds ``(expect_lo, expect_hi)`` it becomes ``(new_lo, new_hi)``. Returns the
    pair as it was, ``(lo, hi)``."""
    if not (isinstance(array, types.Array) and array.dtype == types.uint64 and array.ndim == 1
            and isinstance(row, types.Integer)):
        return None
    u64 = types.uint64
    signature = types.UniTuple(u64, 2)(array, row, u64, u64, u64, u64)

    def codegen(context, builder, signature, args):
        arr = context.make_array(signature.args[0])(context, builder, args[0])
        i64, i128 = ir.IntType(64), ir.IntType(128)
        at = builder.mul(context.cast(builder, args[1], signature.args[1], types.int64), i64(2))
        ptr = builder.bitcast(builder.gep(arr.data, [at]), i128.as_pointer())

        def join(lo, hi):
            return builder.or_(builder.shl(builder.zext(hi, i128), i128(64)), builder.zext(lo, i128))
        result = builder.cmpxchg(ptr, join(args[2], args[3]), join(args[4], args[5]), "monotonic", "monotonic")
        old = builder.extract_value(result, 0)
        lo, hi = builder.trunc(old, i64), builder.trunc(builder.lshr(old, i128(64)), i64)
        return context.make_tuple(builder, signature.return_type, [lo, hi])
    return signature, codegen


def aligned_pairs(n: int) -> np.ndarray:
    """An uninitialised array of n pairs of uint64 (2n words) whose pairs start on 16-byte
    boundaries, as :func:`cas128` needs."""
    raw = np.empty(2 * n + 2, np.uint64)
    skip = (-raw.ctypes.data % 16) // 8
    return raw[skip:skip + 2 * n]
