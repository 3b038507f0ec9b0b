// ooc_graph GPU kernels (compiled by NVRTC through cupy.RawModule, once per device).
//
// State arrays are float64. Min-relaxations use atomicMin on the IEEE-754 bit patterns read as
// unsigned 64-bit integers: for non-negative doubles (+inf included) that order is the numeric
// order, and every state relaxed here is non-negative (depths, distances over non-negative
// weights, vertex labels).

#define OOC_INF __longlong_as_double(0x7ff0000000000000LL)

// Global ids of one chunk's arcs from ids local to their interval and the chunk's block table.
template <typename L>
__global__ void ooc_graph_decode(const L* __restrict__ src_local, const L* __restrict__ dst_local,
                                 const long long* __restrict__ block_start,
                                 const long long* __restrict__ src_base,
                                 const long long* __restrict__ dst_base, const int num_blocks,
                                 int* __restrict__ src, int* __restrict__ dst, const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    int lo = 0, hi = num_blocks - 1;  // the last block starting at or before i
    while (lo < hi) {
        const int mid = (lo + hi + 1) >> 1;
        if (block_start[mid] <= i) lo = mid; else hi = mid - 1;
    }
    src[i] = (int)(src_base[lo] + (long long)src_local[i]);
    dst[i] = (int)(dst_base[lo] + (long long)dst_local[i]);
}

// out[v] += x[u] over arcs u->v. Arcs of a block are sorted by destination, so a warp first sums
// runs of equal destinations (segmented scan over shuffles) and issues one atomic per run.
__global__ void ooc_graph_pull_sum(const int* __restrict__ src, const int* __restrict__ dst,
                                   const double* __restrict__ x, double* __restrict__ out,
                                   const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    int d = -1 - lane;  // inactive lanes: a segment of their own, never written
    double v = 0.0;
    if (i < m) { d = dst[i]; v = x[src[i]]; }
    const int prev = __shfl_up_sync(0xffffffffu, d, 1);
    int flag = (lane == 0) || (prev != d);
    for (int off = 1; off < 32; off <<= 1) {
        const double vu = __shfl_up_sync(0xffffffffu, v, off);
        const int fu = __shfl_up_sync(0xffffffffu, flag, off);
        if (lane >= off) {
            if (!flag) v += vu;
            flag |= fu;
        }
    }
    const int next = __shfl_down_sync(0xffffffffu, d, 1);
    if ((lane == 31 || next != d) && d >= 0) atomicAdd(&out[d], v);
}

// A source-blocked batch's sort keys: (src >> seg_bits, dst, src) packed into one int64, dst and
// src in `bits` bits each (the caller checks 3 * bits - seg_bits fits 63), for the arcs of one
// batch written at key[0..m); and back, once sorted.
__global__ void ooc_graph_block_keys(const int* __restrict__ src, const int* __restrict__ dst,
                                     long long* __restrict__ key, const int seg_bits, const int bits,
                                     const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long s = src[i];
    key[i] = ((s >> seg_bits) << (2 * bits)) | ((long long)dst[i] << bits) | s;
}

__global__ void ooc_graph_block_ids(const long long* __restrict__ key, int* __restrict__ src,
                                    int* __restrict__ dst, const int bits, const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long mask = (1LL << bits) - 1, k = key[i];
    src[i] = (int)(k & mask);
    dst[i] = (int)((k >> bits) & mask);
}

// Where each cell of a source-blocked batch begins: arcs are sorted by source segment, then
// destination, and a cell is (segment, destination stripe), stripes of `stripe` vertices, so
// cells follow one another along the arcs. starts[c] = the first arc at or after cell c (m past
// the last); one thread per arc and one for the end, each filling the cells its arc opens.
__global__ void ooc_graph_cell_starts(const int* __restrict__ src, const int* __restrict__ dst,
                                      const int seg_bits, const long long stripe, const int stripes,
                                      long long* __restrict__ starts, const long long cells,
                                      const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i > m) return;
    const long long c = i < m ? (long long)(src[i] >> seg_bits) * stripes + dst[i] / stripe : cells;
    const long long before = i > 0 ? (long long)(src[i - 1] >> seg_bits) * stripes + dst[i - 1] / stripe : -1;
    for (long long q = before + 1; q <= c && q <= cells; ++q) starts[q] = i;
}

// state[v] = min(state[v], state[u] + w) over arcs u->v; changed[v] = 1 where it dropped, and
// any[0] = 1 if anything did.
template <typename W>
__global__ void ooc_graph_relax_min(const int* __restrict__ src, const int* __restrict__ dst,
                                    const W* __restrict__ w, const int use_w, const double plus,
                                    unsigned long long* state, unsigned char* __restrict__ changed,
                                    unsigned char* __restrict__ any, const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const double su = __longlong_as_double((long long)state[src[i]]);
    if (su == OOC_INF) return;
    const double cand = su + (use_w ? (double)w[i] : plus);
    const unsigned long long c = (unsigned long long)__double_as_longlong(cand);
    const int v = dst[i];
    if (c < state[v] && c < atomicMin(&state[v], c)) {
        changed[v] = 1;
        any[0] = 1;
    }
}

// The root of x's tree. Pointers only decrease (parent[x] <= x), so the walk ends.
__device__ __forceinline__ long long ooc_root(const long long* parent, long long x) {
    long long p = parent[x];
    while (p != x) { x = p; p = parent[x]; }
    return x;
}

// Hooking for connected components: for an arc whose endpoints have different roots, hang the
// larger root under the smaller (atomicMin keeps the smallest offer); changed[0] = 1 if any did.
__global__ void ooc_graph_hook_min(const int* __restrict__ src, const int* __restrict__ dst,
                                   long long* parent, unsigned char* __restrict__ changed,
                                   const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long ru = ooc_root(parent, src[i]);
    const long long rv = ooc_root(parent, dst[i]);
    if (ru == rv) return;
    const long long hi = ru > rv ? ru : rv, lo = ru > rv ? rv : ru;
    if (lo < atomicMin(&parent[hi], lo)) changed[0] = 1;
}

// parent[v] = min(parent[v], u) over tight arcs u->v (dist[u] + w == dist[v], u != v); strict:
// dist[u] < dist[v]; otherwise dist[u] == dist[v] from a resolved u to an unresolved v.
template <typename W>
__global__ void ooc_graph_tight_parent(const int* __restrict__ src, const int* __restrict__ dst,
                                       const W* __restrict__ w, const int use_w, const double plus,
                                       const double* __restrict__ dist, long long* parent,
                                       const unsigned char* __restrict__ resolved, const int strict,
                                       const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const int u = src[i], v = dst[i];
    if (u == v) return;
    const double dv = dist[v];
    if (dv == OOC_INF) return;
    const double du = dist[u];
    if (du + (use_w ? (double)w[i] : plus) != dv) return;
    if (strict ? !(du < dv) : !(du == dv && resolved[u] && !resolved[v])) return;
    atomicMin(&parent[v], (long long)u);
}

// state[ids[i]] = min(state[ids[i]], values[i]) and changed[ids[i]] = 1: merging the vertices
// other workers changed in a distributed run (values non-negative, compared as bit patterns).
// Negative ids are padding and skipped.
__global__ void ooc_graph_scatter_min(const long long* __restrict__ ids, const double* __restrict__ values,
                                      unsigned long long* state, unsigned char* __restrict__ changed,
                                      const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const long long v = ids[i];
    if (v < 0) return;
    atomicMin(&state[v], (unsigned long long)__double_as_longlong(values[i]));
    changed[v] = 1;
}

// One PageRank step over a range of vertices (a worker's own destinations):
//   x_new = alpha * (y + lost * p) + (1 - alpha) * p,   contrib = x_new * inv,   x_out = x_new,
// with p[i] = p_const where use_p is 0 (uniform teleport), and lost = *lost_ptr where use_lost_ptr
// (the previous step's dangling sum, still on the device), else lost_const. x_out may be x (in
// place) or another buffer (x kept: PageRank looks at a step's sums one step later). Each block
// writes its partial sums of |x_new - x| and of x_new over dangling vertices (inv == 0) to
// partial[2 * block + 0/1]; the caller adds them up (deterministically).
__global__ void ooc_graph_pagerank_step(const double* __restrict__ y, const double* x, double* x_out,
                                        const double* __restrict__ p, const double p_const, const int use_p,
                                        const double* __restrict__ inv, const double alpha,
                                        const double* __restrict__ lost_ptr, const double lost_const,
                                        const int use_lost_ptr, double* __restrict__ contrib,
                                        const int write_contrib, double* __restrict__ partial,
                                        const long long m) {
    const double lost = use_lost_ptr ? *lost_ptr : lost_const;
    double err = 0.0, dangling = 0.0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (long long)gridDim.x * blockDim.x) {
        const double pi = use_p ? p[i] : p_const;
        const double xn = alpha * (y[i] + lost * pi) + (1.0 - alpha) * pi;
        err += fabs(xn - x[i]);
        const double w = inv[i];
        if (w == 0.0) dangling += xn;
        if (write_contrib) contrib[i] = xn * w;
        x_out[i] = xn;
    }
    __shared__ double s_err[32], s_dang[32];
    for (int off = 16; off > 0; off >>= 1) {
        err += __shfl_down_sync(0xffffffffu, err, off);
        dangling += __shfl_down_sync(0xffffffffu, dangling, off);
    }
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) { s_err[warp] = err; s_dang[warp] = dangling; }
    __syncthreads();
    if (warp == 0) {
        const int warps = (blockDim.x + 31) >> 5;
        err = lane < warps ? s_err[lane] : 0.0;
        dangling = lane < warps ? s_dang[lane] : 0.0;
        for (int off = 16; off > 0; off >>= 1) {
            err += __shfl_down_sync(0xffffffffu, err, off);
            dangling += __shfl_down_sync(0xffffffffu, dangling, off);
        }
        if (lane == 0) { partial[2 * blockIdx.x] = err; partial[2 * blockIdx.x + 1] = dangling; }
    }
}

// inv[i] = 1 / degree[i] (0 where it is 0: the vertex dangles), and how many dangle added into
// *dangling: PageRank's inverse out-degrees (D: integer degrees, or double sums of out-weights).
template <typename D>
__global__ void ooc_graph_inverse_degree(const D* __restrict__ degree, double* __restrict__ inv,
                                         unsigned long long* __restrict__ dangling, const long long m) {
    unsigned int count = 0;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < m;
         i += (long long)gridDim.x * blockDim.x) {
        const D d = degree[i];
        inv[i] = d == 0 ? 0.0 : 1.0 / (double)d;
        count += d == 0;
    }
    for (int off = 16; off > 0; off >>= 1) count += __shfl_down_sync(0xffffffffu, count, off);
    if ((threadIdx.x & 31) == 0 && count) atomicAdd(dangling, (unsigned long long)count);
}
