// The generators' counter-based hash, per edge, on the GPU: gpu_generate.py's elementwise kernels
// call these. The same integers and floats as the NumPy reference, cpu_generate.py, which
// documents the scheme; the constants are its GAMMA, MIX1, MIX2, STRIDE and WEIGHT_SLOT.

#define OOC_GRAPH_GAMMA 0x9E3779B97F4A7C15ull
#define OOC_GRAPH_MIX1 0xBF58476D1CE4E5B9ull
#define OOC_GRAPH_MIX2 0x94D049BB133111EBull
#define OOC_GRAPH_STRIDE 32ull
#define OOC_GRAPH_WEIGHT_SLOT 31ull

// SplitMix64's output `counter` for the seed `key`.
__device__ __forceinline__ unsigned long long ooc_graph_hash64(unsigned long long key,
                                                               unsigned long long counter) {
    unsigned long long z = key + counter * OOC_GRAPH_GAMMA;
    z ^= z >> 30;
    z *= OOC_GRAPH_MIX1;
    z ^= z >> 27;
    z *= OOC_GRAPH_MIX2;
    return z ^ (z >> 31);
}

// The vertex permutation: c = {mask, shift, key0, mult0, key1, mult1, key2, mult2}.
__device__ __forceinline__ unsigned long long ooc_graph_permute(unsigned long long x,
                                                                const unsigned long long* c) {
    for (int r = 0; r < 3; ++r) {
        x = (x + c[2 + 2 * r]) & c[0];
        x ^= x >> c[1];
        x = (x * c[3 + 2 * r]) & c[0];
    }
    return x ^ (x >> c[1]);
}

// R-MAT edge e: level 2p takes the low 32 bits of slot p's hash, level 2p + 1 the high ones.
__device__ __forceinline__ void ooc_graph_rmat_edge(unsigned long long key, unsigned long long e, int scale,
                                                    unsigned long long t1, unsigned long long t2,
                                                    unsigned long long t3, const unsigned long long* perm,
                                                    bool permuted, unsigned long long& s, unsigned long long& d) {
    const unsigned long long base = e * OOC_GRAPH_STRIDE;
    unsigned long long h = 0, u;
    s = 0;
    d = 0;
    for (int level = 0; level < scale; ++level) {
        if ((level & 1) == 0) {
            h = ooc_graph_hash64(key, base + (unsigned long long)(level >> 1));
            u = h & 0xFFFFFFFFull;
        } else {
            u = h >> 32;
        }
        const unsigned long long bit = 1ull << level;
        if (u >= t2) s |= bit;                              // quadrants c, d: the source's bit
        if ((u >= t1) ^ (u >= t2) ^ (u >= t3)) d |= bit;    // quadrants b, d: the target's bit
    }
    if (permuted) {
        s = ooc_graph_permute(s, perm);
        d = ooc_graph_permute(d, perm);
    }
}

// Uniform edge e: the top `scale` bits of slots 0 and 1 ((h >> 1) >> (63 - scale): 0 for scale 0).
__device__ __forceinline__ void ooc_graph_urand_edge(unsigned long long key, unsigned long long e, int scale,
                                                     unsigned long long& s, unsigned long long& d) {
    const unsigned long long base = e * OOC_GRAPH_STRIDE;
    s = (ooc_graph_hash64(key, base) >> 1) >> (63 - scale);
    d = (ooc_graph_hash64(key, base + 1ull) >> 1) >> (63 - scale);
}

// Edge e's weight, in (0, 1]: ((h >> 11) + 1) * 2**-53, exact in double precision.
__device__ __forceinline__ double ooc_graph_edge_weight(unsigned long long key, unsigned long long e) {
    const unsigned long long h = ooc_graph_hash64(key, e * OOC_GRAPH_STRIDE + OOC_GRAPH_WEIGHT_SLOT);
    return (double)((h >> 11) + 1ull) * 1.1102230246251565404236316680908203125e-16;
}
