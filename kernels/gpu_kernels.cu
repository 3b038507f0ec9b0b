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

// state[v] = min(state[v], state[u] + w) over arcs u->v; changed[v] = 1 where it dropped.
template <typename W>
__global__ void ooc_graph_relax_min(const int* __restrict__ src, const int* __restrict__ dst,
                                    const W* __restrict__ w, const int use_w, const double plus,
                                    unsigned long long* state, unsigned char* __restrict__ changed,
                                    const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const double su = __longlong_as_double((long long)state[src[i]]);
    if (su == OOC_INF) return;
    const double cand = su + (use_w ? (double)w[i] : plus);
    const unsigned long long c = (unsigned long long)__double_as_longlong(cand);
    const int v = dst[i];
    if (c < state[v] && c < atomicMin(&state[v], c)) changed[v] = 1;
}

// state[u] = min(state[u], state[v]) over arcs u->v (the reverse direction for WCC).
__global__ void ooc_graph_reverse_min(const int* __restrict__ src, const int* __restrict__ dst,
                                      unsigned long long* state, unsigned char* __restrict__ changed,
                                      const long long m) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    const unsigned long long c = state[dst[i]];
    const int u = src[i];
    if (c < state[u] && c < atomicMin(&state[u], c)) changed[u] = 1;
}

// state[v[j]] = min(state[v[j]], cand[j]) for a list of candidates (the frontier advance).
__global__ void ooc_graph_scatter_min(const long long* __restrict__ v, const double* __restrict__ cand,
                                      unsigned long long* state, unsigned char* __restrict__ changed,
                                      const long long m) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= m) return;
    const unsigned long long c = (unsigned long long)__double_as_longlong(cand[j]);
    const long long t = v[j];
    if (c < state[t] && c < atomicMin(&state[t], c)) changed[t] = 1;
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
