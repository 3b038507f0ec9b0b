"""Random edges from a counter-based hash: the NumPy reference of the generators' kernels.

Every random number a generator uses is ``hash64(key, counter)``: SplitMix64's output function
applied to ``key + counter * GAMMA`` (mod 2**64), i.e. element ``counter`` of the SplitMix64
stream seeded with ``key``. Edge ``e`` owns the counters ``e * STRIDE + slot``:

- R-MAT level pair ``p`` (levels ``2p`` and ``2p + 1``) is slot ``p``: the hash's low 32 bits
  pick the quadrant of level ``2p``, its high 32 bits that of level ``2p + 1``. A 32-bit
  uniform ``u`` falls in quadrant a, b, c or d by comparing with the fixed-point thresholds
  ``round(a * 2**32)``, ``round((a + b) * 2**32)``, ``round((a + b + c) * 2**32)``
  (:func:`thresholds`); quadrants c and d set the source's bit, b and d the target's.
- uniform endpoints (``urand``): slots 0 (source) and 1 (target), their top ``scale`` bits.
- the edge's weight: slot ``WEIGHT_SLOT``, ``((h >> 11) + 1) * 2**-53``, in (0, 1].

R-MAT's vertex permutation (Graph500's, so that the hubs are not all near 0) is a keyed bijection
of the ``scale``-bit integers computed per endpoint, with no table: three rounds of adding a key,
``x ^= x >> ceil(scale / 2)`` and multiplying by an odd constant, then one more xor-shift, all
mod ``2**scale`` (each step is invertible, so the whole is). Its constants:
:func:`permutation`.

Integers only, wrapping mod 2**64, so the compiled kernels (``cpu_ingest.py``) and the GPU's
(``gpu_generate.py``) compute the same arrays bit for bit; an edge depends on the key and its
index alone, not on how the edges are split into steps or threads.
"""

from __future__ import annotations

import numpy as np

from ooc_graph import config

__all__ = ["GAMMA", "STRIDE", "WEIGHT_SLOT", "seed_keys", "thresholds", "permutation", "permute", "hash64",
           "rmat_edges", "urand_edges", "edge_weights", "u64"]

_U64 = (1 << 64) - 1
GAMMA = 0x9E3779B97F4A7C15  # SplitMix64's increment (odd: the counters map to distinct states)
MIX1 = 0xBF58476D1CE4E5B9
MIX2 = 0x94D049BB133111EB
STRIDE = 32       # counters per edge: 20 level pairs cover scale 40; the weight takes the last
WEIGHT_SLOT = 31


def seed_keys(seed: int) -> tuple[int, ...]:
    """Four 64-bit keys of a seed (any non-negative integer), well mixed by NumPy's SeedSequence:
    the edges' key, then the vertex permutation's three."""
    return tuple(int(k) for k in np.random.SeedSequence(seed).generate_state(4, np.uint64))


def thresholds(a: float, b: float, c: float) -> tuple[int, int, int]:
    """The 32-bit fixed-point quadrant thresholds of R-MAT probabilities a, b, c (d = 1 - a - b - c)."""
    return tuple(min(1 << 32, max(0, int(round(x * 2.0**32)))) for x in (a, a + b, a + b + c))


def permutation(scale: int, keys) -> np.ndarray:
    """The vertex permutation's constants (uint64[8]): the mask ``2**scale - 1``, the shift
    ``ceil(scale / 2)``, then each round's key and odd multiplier (reduced by the mask)."""
    mask = (1 << scale) - 1
    consts = [mask, (scale + 1) // 2]
    for key, mult in zip(keys, (MIX1, MIX2, GAMMA)):
        consts += [key & mask, mult & mask]
    return np.array(consts, np.uint64)


def permute(x: np.ndarray, consts: np.ndarray) -> np.ndarray:
    """Vertex ids ``x`` (an unsigned array, renamed in place) through the permutation of
    :func:`permutation` (arithmetic wraps at the array's width, then the mask takes it mod
    ``2**scale``: the constants fit the array's type, the scale being at most its width)."""
    c = [x.dtype.type(int(v)) for v in consts]
    mask, shift = c[0], c[1]
    tmp = np.empty_like(x)
    for r in range(3):
        x += c[2 + 2 * r]
        x &= mask
        np.right_shift(x, shift, out=tmp)
        x ^= tmp
        x *= c[3 + 2 * r]
        x &= mask
    np.right_shift(x, shift, out=tmp)
    x ^= tmp
    return x


def u64(x: int) -> np.uint64:
    """``x`` modulo 2**64 as a NumPy uint64 (the kernels' arguments; a key or a start past it wraps)."""
    return np.uint64(int(x) & _U64)




class _Block:
    """``hash64(key, e * STRIDE + slot)`` for the edges of a block, into reused buffers."""

    def __init__(self, size: int):
        self.bases = np.empty(size, np.uint64)
        self.h = np.empty(size, np.uint64)
        self.tmp = np.empty(size, np.uint64)

    def start(self, start: int, count: int) -> None:
        """Edges ``start .. start + count - 1`` (``count`` at most the size)."""
        self.count = count
        e = self.bases[:count]
        e[:] = np.arange(count, dtype=np.uint64)
        e += u64(start)
        e *= u64(STRIDE * GAMMA)

    def slot(self, key: int, slot: int) -> np.ndarray:
        """The block's hashes of one slot (in a buffer the next call reuses)."""
        z = self.h[:self.count]
        np.add(self.bases[:self.count], u64(key + slot * GAMMA), out=z)
        return _mix(z, self.tmp[:self.count])


def _mix(z: np.ndarray, tmp: np.ndarray) -> np.ndarray:
    """SplitMix64's output function, in place on a uint64 array (``tmp``: a buffer as long)."""
    for shift, factor in ((30, MIX1), (27, MIX2), (31, None)):
        np.right_shift(z, np.uint64(shift), out=tmp)
        z ^= tmp
        if factor is not None:
            z *= np.uint64(factor)
    return z


def hash64(key: int, counters) -> np.ndarray:
    """``hash64(key, c)`` of each counter ``c`` (uint64): SplitMix64's output ``c`` for seed ``key``."""
    z = np.asarray(counters, dtype=np.uint64) * np.uint64(GAMMA)
    z += u64(key)
    return _mix(z, np.empty_like(z))


def _blocks(count: int):
    """The starts of the blocks of a draw of ``count`` edges (``config ingest.generate_block`` each),
    their size, and the block's scratch."""
    size = config.get().ingest.generate_block
    return range(0, count, size), size, _Block(min(size, max(count, 1)))


def rmat_edges(key: int, start: int, count: int, scale: int, limits, perm=None, dtype=np.int64):
    """Endpoints of R-MAT edges ``start .. start + count - 1`` over ``2**scale`` vertices, as
    ``dtype``; ``limits`` from :func:`thresholds`; ``perm`` (optional): the constants of
    :func:`permutation`, renaming the vertices. Levels are taken from the highest down, each
    shifting in its bit."""
    src, dst = np.empty(count, dtype), np.empty(count, dtype)
    bits = np.uint32 if scale <= 32 else np.uint64
    starts, size, block = _blocks(count)
    s, d = np.empty(min(size, count), bits), np.empty(min(size, count), bits)
    u, on, cmp = (np.empty(min(size, count), t) for t in (np.uint32, bool, bool))
    one = bits(1)
    t1, t2, t3 = (np.uint32(t) if t < 1 << 32 else None for t in limits)  # u >= 2**32: never
    for a in starts:
        k = min(size, count - a)
        block.start(start + a, k)
        sk, dk, uk, on_k, cmp_k = s[:k], d[:k], u[:k], on[:k], cmp[:k]
        sk.fill(0)
        dk.fill(0)
        for p in reversed(range((scale + 1) // 2)):
            h = block.slot(key, p)
            for half in reversed(range(min(2, scale - 2 * p))):
                if half:
                    np.right_shift(h, np.uint64(32), out=block.tmp[:k])
                    np.copyto(uk, block.tmp[:k], casting="unsafe")
                else:
                    np.copyto(uk, h, casting="unsafe")  # the low 32 bits
                _at_least(uk, t2, on_k)  # quadrants c, d: the source's bit
                sk <<= one
                sk |= on_k
                _at_least(uk, t1, cmp_k)  # quadrants b, d: the target's bit
                on_k ^= cmp_k
                _at_least(uk, t3, cmp_k)
                on_k ^= cmp_k
                dk <<= one
                dk |= on_k
        if perm is not None:
            permute(sk, perm)
            permute(dk, perm)
        src[a:a + k] = sk
        dst[a:a + k] = dk
    return src, dst


def _at_least(u, t, out):
    if t is None:  # a threshold of 2**32: no 32-bit value reaches it
        out.fill(False)
    else:
        np.greater_equal(u, t, out=out)


def urand_edges(key: int, start: int, count: int, scale: int, dtype=np.int64):
    """Endpoints of uniform edges ``start .. start + count - 1`` over ``2**scale`` vertices."""
    out = np.empty(count, dtype), np.empty(count, dtype)
    shift = np.uint64(63 - scale)  # (h >> 1) >> (63 - scale): the top ``scale`` bits, 0 for scale 0
    starts, size, block = _blocks(count)
    for a in starts:
        k = min(size, count - a)
        block.start(start + a, k)
        for slot in (0, 1):
            h = block.slot(key, slot)
            h >>= np.uint64(1)
            h >>= shift
            out[slot][a:a + k] = h
    return out


def edge_weights(key: int, start: int, count: int) -> np.ndarray:
    """Weights of edges ``start .. start + count - 1``: float64 in (0, 1], multiples of 2**-53."""
    w = np.empty(count, np.float64)
    starts, size, block = _blocks(count)
    for a in starts:
        k = min(size, count - a)
        block.start(start + a, k)
        h = block.slot(key, WEIGHT_SLOT)
        h >>= np.uint64(11)
        h += np.uint64(1)
        np.multiply(h, 2.0**-53, out=w[a:a + k])
    return w
