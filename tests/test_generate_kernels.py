"""The generators' counter-based kernels: the NumPy reference against a slow per-edge one, and the
compiled (numba), CUDA-on-the-host and GPU kernels against the NumPy reference, bit for bit."""

import ctypes
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ooc_graph.kernels import cpu_generate as R

U64 = (1 << 64) - 1
KEYS = R.seed_keys(12345)
GRAPH500 = R.thresholds(0.57, 0.19, 0.19)
# Thresholds at the ends of the range: 0 (a quadrant never drawn) and 2**32 (always below).
LIMITS = [GRAPH500, R.thresholds(0.0, 0.5, 0.5), R.thresholds(1.0, 0.0, 0.0), R.thresholds(0.0, 0.0, 0.0),
          R.thresholds(0.25, 0.25, 0.25)]


# -- a slow, obvious reference: Python integers, one edge at a time ------------------------------
def _hash(key, counter):
    z = (key + counter * R.GAMMA) & U64
    z = ((z ^ (z >> 30)) * R.MIX1) & U64
    z = ((z ^ (z >> 27)) * R.MIX2) & U64
    return z ^ (z >> 31)


def _permute(x, scale, keys):
    mask, shift = (1 << scale) - 1, (scale + 1) // 2
    for key, mult in zip(keys, (R.MIX1, R.MIX2, R.GAMMA)):
        x = (x + key) & mask
        x ^= x >> shift
        x = (x * mult) & mask
    return x ^ (x >> shift)


def _rmat_edge(key, e, scale, limits, keys=None):
    t1, t2, t3 = limits
    s = d = 0
    for level in range(scale):
        h = _hash(key, e * R.STRIDE + level // 2)
        u = (h >> 32) if level % 2 else (h & 0xFFFFFFFF)
        quadrant = (u >= t1) + (u >= t2) + (u >= t3)  # 0..3: a, b, c, d
        s |= (quadrant >= 2) << level
        d |= (quadrant % 2) << level
    if keys is not None:
        s, d = _permute(s, scale, keys), _permute(d, scale, keys)
    return s, d


def test_hash_is_splitmix64():
    """Outputs 1, 2, 3 of SplitMix64 seeded with 0 (the published test vector)."""
    assert R.hash64(0, [1, 2, 3]).tolist() == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]
    assert R.hash64(KEYS[0], [0, 77, 2**50]).tolist() == [_hash(KEYS[0], c) for c in (0, 77, 2**50)]


@pytest.mark.parametrize("scale", [0, 1, 2, 7, 20, 33])
@pytest.mark.parametrize("permute", [False, True])
def test_numpy_rmat_against_the_slow_reference(configure, scale, permute):
    configure({"ingest.generate_block": 64})  # blocks split the draw
    start, count = 2**40 + 3, 300
    for limits in LIMITS:
        perm = R.permutation(scale, KEYS[1:]) if permute else None
        src, dst = R.rmat_edges(KEYS[0], start, count, scale, limits, perm=perm, dtype=np.int64)
        want = [_rmat_edge(KEYS[0], start + i, scale, limits, KEYS[1:] if permute else None) for i in range(count)]
        assert list(zip(src.tolist(), dst.tolist())) == want


def test_numpy_urand_and_weights_against_the_slow_reference(configure):
    configure({"ingest.generate_block": 50})
    start, count = 999, 200
    for scale in (0, 1, 13, 40):
        src, dst = R.urand_edges(KEYS[0], start, count, scale)
        for i in range(count):
            base = (start + i) * R.STRIDE
            assert (src[i], dst[i]) == (_hash(KEYS[0], base) >> (64 - scale) if scale else 0,
                                        _hash(KEYS[0], base + 1) >> (64 - scale) if scale else 0)
    w = R.edge_weights(KEYS[0], start, count)
    want = [((_hash(KEYS[0], (start + i) * R.STRIDE + R.WEIGHT_SLOT) >> 11) + 1) / 2**53 for i in range(count)]
    assert w.tolist() == want and w.min() > 0 and w.max() <= 1


@pytest.mark.parametrize("scale", [0, 1, 5, 16])
def test_permutation_is_a_bijection(scale):
    ids = np.arange(1 << scale, dtype=np.uint32)
    renamed = R.permute(ids.copy(), R.permutation(scale, KEYS[1:]))
    assert np.array_equal(np.sort(renamed), ids)
    wide = R.permute(ids.astype(np.uint64), R.permutation(scale, KEYS[1:]))
    assert np.array_equal(renamed, wide)
    if scale >= 5:  # neighbours go far apart: the hubs of an R-MAT (low ids) are spread out
        assert np.median(np.abs(np.diff(renamed.astype(np.int64)))) > (1 << scale) / 8


def test_quadrant_frequencies_on_a_large_draw():
    """Scale 2 without permutation: each level's quadrant is a, b, c, d = .57, .19, .19, .05
    (four million draws per level: a standard deviation of 2.5e-4)."""
    src, dst = R.rmat_edges(KEYS[0], 0, 1 << 22, 2, GRAPH500)
    for level in (0, 1):
        q = ((src >> level) & 1) * 2 + ((dst >> level) & 1)
        np.testing.assert_allclose(np.bincount(q, minlength=4) / q.size, [0.57, 0.19, 0.19, 0.05], atol=2e-3)
    src, dst = R.urand_edges(KEYS[0], 0, 1 << 20, 3)
    np.testing.assert_allclose(np.bincount(src, minlength=8) / src.size, 1 / 8, atol=2e-3)


def _cases():
    for scale, dtype in ((0, np.int32), (1, np.int64), (9, np.int32), (25, np.int32), (31, np.int32), (32, np.int64),
                         (40, np.int64)):
        for limits in (LIMITS if scale == 9 else LIMITS[:1]):
            for permute in (False, True):
                yield scale, dtype, limits, permute


def _compare(kernels, to_host=np.asarray):
    start = 3 * (1 << 33) + 5
    for scale, dtype, limits, permute in _cases():
        perm = R.permutation(scale, KEYS[1:]) if permute else None
        want = R.rmat_edges(KEYS[0], start, 5000, scale, limits, perm=perm, dtype=dtype)
        got = kernels.rmat_edges(KEYS[0], start, 5000, scale, limits, perm=perm, dtype=dtype)
        for a, b in zip(want, got):
            b = to_host(b)
            assert b.dtype == dtype and np.array_equal(a, b), (scale, limits, permute)
        want = R.urand_edges(KEYS[0], start, 5000, scale, dtype=dtype)
        got = kernels.urand_edges(KEYS[0], start, 5000, scale, dtype=dtype)
        for a, b in zip(want, got):
            b = to_host(b)
            assert b.dtype == dtype and np.array_equal(a, b), scale
    want = R.edge_weights(KEYS[1], start, 5000)
    got = to_host(kernels.edge_weights(KEYS[1], start, 5000))
    assert got.dtype == np.float64 and want.tobytes() == got.tobytes()
    for kind, args in (("rmat_edges", (7, GRAPH500)), ("urand_edges", (7,))):
        empty = getattr(kernels, kind)(KEYS[0], 0, 0, *args, dtype=np.int32)
        assert [len(to_host(a)) for a in empty] == [0, 0]


def test_compiled_kernels_equal_numpy():
    pytest.importorskip("numba")
    from ooc_graph.kernels import cpu_ingest
    _compare(cpu_ingest)
    with cpu_ingest.threads(1):  # one thread or several: the same arrays
        one = cpu_ingest.rmat_edges(KEYS[0], 0, 70000, 20, GRAPH500, dtype=np.int32)
    assert all(np.array_equal(a, b) for a, b in zip(one, R.rmat_edges(KEYS[0], 0, 70000, 20, GRAPH500,
                                                                      dtype=np.int32)))


@pytest.mark.gpu
def test_gpu_kernels_equal_numpy():
    import cupy
    from ooc_graph.kernels import gpu_generate
    _compare(gpu_generate, cupy.asnumpy)
    big = gpu_generate.rmat_edges(KEYS[0], 1 << 30, 1 << 22, 26, GRAPH500, perm=R.permutation(26, KEYS[1:]),
                                  dtype=np.int32)
    want = R.rmat_edges(KEYS[0], 1 << 30, 1 << 22, 26, GRAPH500, perm=R.permutation(26, KEYS[1:]), dtype=np.int32)
    assert all(np.array_equal(a, cupy.asnumpy(b)) for a, b in zip(want, big))


# -- the CUDA source, compiled for the host ------------------------------------------------------
_SHIM = """
#define __device__
#define __forceinline__ inline
"""

_DRIVER = """
extern "C" void rmat(unsigned long long key, unsigned long long start, long long count, int scale,
                     unsigned long long t1, unsigned long long t2, unsigned long long t3,
                     const unsigned long long* perm, int permuted, long long* src, long long* dst) {
    for (long long i = 0; i < count; ++i) {
        unsigned long long s, d;
        ooc_graph_rmat_edge(key, start + (unsigned long long)i, scale, t1, t2, t3, perm, permuted != 0, s, d);
        src[i] = (long long)s;
        dst[i] = (long long)d;
    }
}
extern "C" void urand(unsigned long long key, unsigned long long start, long long count, int scale,
                      long long* src, long long* dst) {
    for (long long i = 0; i < count; ++i) {
        unsigned long long s, d;
        ooc_graph_urand_edge(key, start + (unsigned long long)i, scale, s, d);
        src[i] = (long long)s;
        dst[i] = (long long)d;
    }
}
extern "C" void weights(unsigned long long key, unsigned long long start, long long count, double* w) {
    for (long long i = 0; i < count; ++i) w[i] = ooc_graph_edge_weight(key, start + (unsigned long long)i);
}
"""


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ to compile the CUDA source on the host")
def test_cuda_source_on_the_host_equals_numpy(tmp_path):
    """``gpu_generate.cu``'s device functions, compiled as C++ for the host, against NumPy."""
    source = (Path(R.__file__).with_name("gpu_generate.cu")).read_text()
    (tmp_path / "k.cpp").write_text(_SHIM + source + _DRIVER)
    subprocess.run(["g++", "-O1", "-shared", "-fPIC", "-o", str(tmp_path / "k.so"), str(tmp_path / "k.cpp")],
                   check=True, capture_output=True)
    lib = ctypes.CDLL(str(tmp_path / "k.so"))
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    u64, i64 = ctypes.c_ulonglong, ctypes.c_longlong
    start, count = (1 << 36) + 11, 3000
    for scale, _, limits, permute in _cases():
        perm = R.permutation(scale, KEYS[1:])
        src, dst = np.empty(count, np.int64), np.empty(count, np.int64)
        lib.rmat(u64(KEYS[0]), u64(start), i64(count), ctypes.c_int(scale), *(u64(t) for t in limits), ptr(perm),
                 ctypes.c_int(permute), ptr(src), ptr(dst))
        want = R.rmat_edges(KEYS[0], start, count, scale, limits, perm=perm if permute else None)
        assert np.array_equal(src, want[0]) and np.array_equal(dst, want[1]), (scale, limits, permute)
        lib.urand(u64(KEYS[0]), u64(start), i64(count), ctypes.c_int(scale), ptr(src), ptr(dst))
        want = R.urand_edges(KEYS[0], start, count, scale)
        assert np.array_equal(src, want[0]) and np.array_equal(dst, want[1]), scale
    w = np.empty(count)
    lib.weights(u64(KEYS[2]), u64(start), i64(count), ptr(w))
    assert w.tobytes() == R.edge_weights(KEYS[2], start, count).tobytes()
