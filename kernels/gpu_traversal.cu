// ooc_graph traversal kernels over device CSRs (compiled with gpu_kernels.cu, whose conventions
// they share: float64 states compared as IEEE-754 bit patterns, OOC_INF for "not reached").
//
// Parents on the way (`track`): in a level-synchronous traversal with a constant increment every
// frontier vertex sits at one level L, the states below L+1 are final and nothing else reaches
// L+1 this level, so an arc u->v whose candidate is not above v's state is tight and v is at L+1
// after the level: atomicMin(parent[v], u) over those arcs leaves parent[v] the smallest such u,
// the tree ooc_graph_csr_parent would build after the traversal. Only the engine knows when the
// traversal is level-synchronous; it passes track = 0 otherwise.
__device__ __forceinline__ void ooc_track_parent(const int track, long long* parent, const int v,
                                                 const long long u, const unsigned long long cand,
                                                 const unsigned long long now) {
    if (track && cand <= now) atomicMin(&parent[v], u);
}

// Frontier advance over a CSR, one warp per frontier vertex u: for each arc u->v,
// state[v] = min(state[v], state[u] + w); changed[v] = 1 where it dropped.
template <typename W>
__global__ void ooc_graph_advance_min(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                      const W* __restrict__ w, const int use_w, const double plus,
                                      const long long* __restrict__ frontier, const long long nf,
                                      unsigned long long* state, unsigned char* __restrict__ changed,
                                      const int track, long long* parent) {
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= nf) return;
    const long long u = frontier[warp];
    const double su = __longlong_as_double((long long)state[u]);
    if (su == OOC_INF) return;
    const long long end = indptr[u + 1];
    for (long long j = indptr[u] + lane; j < end; j += 32) {
        const double cand = su + (use_w ? (double)w[j] : plus);
        const unsigned long long c = (unsigned long long)__double_as_longlong(cand);
        const int v = indices[j];
        const unsigned long long now = state[v];
        ooc_track_parent(track, parent, v, u, c, now);
        if (c < now && c < atomicMin(&state[v], c)) changed[v] = 1;
    }
}

// Levels of a frontier advance run back to back without the host (a road graph's BFS has
// ~1,000 levels of a few hundred vertices: waiting for each level's size cost ~8x the kernels).
// The frontier is a queue: queue[c] holds sizes[c] vertices; each level relaxes their out-arcs
// (one warp per vertex, a fixed grid striding over the queue) and appends every vertex whose
// state dropped to queue[1 - c] (a vertex lowered twice in one level may appear twice: harmless).
// Near-far: a vertex whose new state exceeds `bound` is only marked in changed[] (the host's far
// pile); +inf queues every one. Values only drop, so a vertex queued is never marked far after.
// ctl: [0] stop (1: frontier empty, 2: next frontier over capacity or over its arc limit:
// changed[] marks it exactly), [1] levels run, [2] arcs relaxed, [3] out-arcs of the next frontier.
template <typename W>
__global__ void ooc_graph_advance_queue(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                        const W* __restrict__ w, const int use_w, const double plus,
                                        const double bound,
                                        const long long* __restrict__ cur, long long* __restrict__ next,
                                        unsigned long long* sizes, const int c, const long long cap,
                                        unsigned long long* state, unsigned char* __restrict__ changed,
                                        unsigned long long* ctl, const int track, long long* parent) {
    if (ctl[0]) return;
    const long long nf = (long long)sizes[c];
    const long long first = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (first == 0 && lane == 0) ctl[1] += 1;
    for (long long k = first; k < nf; k += warps) {
        const long long u = cur[k];
        const double su = __longlong_as_double((long long)state[u]);
        if (su == OOC_INF) continue;
        const long long start = indptr[u], end = indptr[u + 1];
        if (lane == 0) atomicAdd(&ctl[2], (unsigned long long)(end - start));
        for (long long j = start + lane; j < end; j += 32) {
            const double cand = su + (use_w ? (double)w[j] : plus);
            const unsigned long long cv = (unsigned long long)__double_as_longlong(cand);
            const int v = indices[j];
            const unsigned long long now = state[v];
            ooc_track_parent(track, parent, v, u, cv, now);
            if (cv < now && cv < atomicMin(&state[v], cv)) {
                changed[v] = 1;
                if (cand > bound) continue;  // far: left marked for the host, not queued
                const unsigned long long at = atomicAdd(&sizes[1 - c], 1ULL);
                if ((long long)at < cap) next[at] = v;
                atomicAdd(&ctl[3], (unsigned long long)(indptr[v + 1] - indptr[v]));
            }
        }
    }
}

// After a level: stop if the next frontier is empty, over capacity or has more than max_arcs
// out-arcs (the host then chooses how to take it on; changed[] marks it); else clear its marks
// for the level after and empty the queue just read.
__global__ void ooc_graph_queue_turn(const long long* __restrict__ next, unsigned long long* sizes, const int c,
                                     const long long cap, const unsigned long long max_arcs,
                                     unsigned char* __restrict__ changed, unsigned long long* ctl) {
    if (ctl[0]) return;
    const long long size = (long long)sizes[1 - c];
    const long long i0 = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (size == 0 || size > cap || ctl[3] > max_arcs) {
        if (i0 == 0) ctl[0] = size == 0 ? 1 : 2;
        return;
    }
    for (long long i = i0; i < size; i += (long long)gridDim.x * blockDim.x) changed[next[i]] = 0;
    __syncthreads();  // block 0 has read ctl[3]; a block reading it after the reset sees 0: go on too
    if (i0 == 0) { sizes[c] = 0; ctl[3] = 0; }
}

// Arc-balanced frontier advance: thread i relaxes the i-th of the frontier's out-arcs, found by a
// binary search of offsets (exclusive prefix sums of the frontier's degrees, nf + 1 of them, the
// total last), so a vertex with a million arcs is spread over the whole GPU instead of one warp.
// A fixed grid strides over the arcs: the total stays on the device.
template <typename W>
__global__ void ooc_graph_advance_balanced(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                           const W* __restrict__ w, const int use_w, const double plus,
                                           const long long* __restrict__ frontier,
                                           const long long* __restrict__ offsets, const long long nf,
                                           unsigned long long* state, unsigned char* __restrict__ changed,
                                           const int track, long long* parent) {
    const long long total = offsets[nf];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long lo = 0, hi = nf - 1;  // the last frontier vertex whose arcs start at or before i
        while (lo < hi) {
            const long long mid = (lo + hi + 1) >> 1;
            if (offsets[mid] <= i) lo = mid; else hi = mid - 1;
        }
        const long long u = frontier[lo];
        const double su = __longlong_as_double((long long)state[u]);
        if (su == OOC_INF) continue;
        const long long j = indptr[u] + (i - offsets[lo]);
        const double cand = su + (use_w ? (double)w[j] : plus);
        const unsigned long long c = (unsigned long long)__double_as_longlong(cand);
        const int v = indices[j];
        const unsigned long long now = state[v];
        ooc_track_parent(track, parent, v, u, c, now);
        if (c < now && c < atomicMin(&state[v], c)) changed[v] = 1;
    }
}

// One bottom-up level (Beamer's direction-optimising BFS): every vertex v in [lo, hi) not yet
// reached looks through its in-arcs for a vertex of the frontier -- exactly the vertices whose
// state is `level` in a level-synchronous traversal with a constant increment -- and takes
// `next` at the first one found. Writes never make a state equal `level`, so the reads need no
// order among threads. With `track`, v's parent is that first one: the smallest, rows being
// ascending by source.
__global__ void ooc_graph_bottom_up(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                    const long long lo, const long long hi, const double level,
                                    const double next, unsigned long long* state,
                                    unsigned char* __restrict__ changed, const int track,
                                    long long* __restrict__ parent) {
    const long long v = lo + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= hi) return;
    if (state[v] != (unsigned long long)__double_as_longlong(OOC_INF)) return;
    const unsigned long long want = (unsigned long long)__double_as_longlong(level);
    const long long end = indptr[v + 1];
    for (long long j = indptr[v]; j < end; ++j) {
        if (state[indices[j]] == want) {
            state[v] = (unsigned long long)__double_as_longlong(next);
            changed[v] = 1;
            if (track) parent[v] = indices[j];
            return;
        }
    }
}

// Shortest-path parents from the in-arc CSR, whose rows are ascending by source: parent[v] = the
// smallest u with a strictly tight arc u->v (u != v, dist[u] < dist[v], dist[u] + w == dist[v]),
// as ooc_graph_tight_parent's strict pass over every arc gives it, for the vertices whose parent
// is still `unset` (the others' were found during the traversal). One thread a vertex of
// [lo, hi) looks at the first `first` arcs of its row and stops at the first tight one; a vertex
// with a longer row and none tight among them is queued in heavy[] for
// ooc_graph_csr_parent_heavy, which spreads those rows' arcs over the whole GPU.
template <typename W>
__global__ void ooc_graph_csr_parent(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                     const W* __restrict__ w, const int use_w, const double plus,
                                     const double* __restrict__ dist, long long* __restrict__ parent,
                                     const long long lo, const long long hi, const long long first,
                                     long long* __restrict__ heavy, unsigned long long* heavy_count,
                                     const long long unset) {
    const long long v = lo + (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= hi) return;
    const double dv = dist[v];
    if (dv == OOC_INF || parent[v] != unset) return;
    const long long start = indptr[v], end = indptr[v + 1];
    const long long stop = end - start > first ? start + first : end;
    for (long long j = start; j < stop; ++j) {
        const int u = indices[j];
        const double du = dist[u];
        if (u != v && du < dv && du + (use_w ? (double)w[j] : plus) == dv) {
            parent[v] = u;
            return;
        }
    }
    if (stop < end) heavy[atomicAdd(heavy_count, 1ULL)] = v;
}

// ooc_graph_csr_parent for rows read from host memory (zero-copy): a warp a vertex, reading its row
// 32 arcs at a time in whole 128-byte lines (a thread reading its own row would make a transfer
// across the bus of every 4 bytes), and stopping at the first tight arc: the smallest source, as
// rows ascend by source.
template <typename W>
__global__ void ooc_graph_csr_parent_warp(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                          const W* __restrict__ w, const int use_w, const double plus,
                                          const double* __restrict__ dist, long long* __restrict__ parent,
                                          const long long lo, const long long hi, const long long unset) {
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    for (long long v = lo + (((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5); v < hi; v += warps) {
        const double dv = dist[v];
        if (dv == OOC_INF || parent[v] != unset) continue;  // (alike in every lane of the warp)
        const long long start = indptr[v], end = indptr[v + 1];
        for (long long j0 = start & ~31LL; j0 < end; j0 += 32) {
            const long long j = j0 + lane;
            int u = -1;
            bool tight = false;
            if (j >= start && j < end) {
                u = indices[j];
                const double du = dist[u];
                tight = u != v && du < dv && du + (use_w ? (double)w[j] : plus) == dv;
            }
            const unsigned int hits = __ballot_sync(0xffffffffu, tight);
            if (hits) {
                const int first = __ffs(hits) - 1;
                if (lane == first) parent[v] = u;
                break;
            }
        }
    }
}

// The rest of the heavy rows (each past its first `first` arcs): thread i takes the i-th of those
// arcs, found by a binary search of offsets (exclusive prefix sums, the total last), and keeps
// the smallest tight source with atomicMin, skipping arcs from larger sources than one already
// found. A fixed grid strides over the arcs.
template <typename W>
__global__ void ooc_graph_csr_parent_heavy(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                           const W* __restrict__ w, const int use_w, const double plus,
                                           const double* __restrict__ dist, long long* parent,
                                           const long long* __restrict__ heavy,
                                           const long long* __restrict__ offsets, const long long nh,
                                           const long long first) {
    const long long total = offsets[nh];
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; i < total;
         i += (long long)gridDim.x * blockDim.x) {
        long long lo = 0, hi = nh - 1;
        while (lo < hi) {
            const long long mid = (lo + hi + 1) >> 1;
            if (offsets[mid] <= i) lo = mid; else hi = mid - 1;
        }
        const long long v = heavy[lo];
        const long long j = indptr[v] + first + (i - offsets[lo]);
        const int u = indices[j];
        // A row's arcs go out roughly in order: once a smaller tight source is in (parent only
        // drops; a stale read only means more work), this arc's dist[u], a random read, is not
        // needed.
        if ((long long)u >= *(volatile long long*)&parent[v]) continue;
        const double du = dist[u], dv = dist[v];
        if (u != v && du < dv && du + (use_w ? (double)w[j] : plus) == dv) atomicMin(&parent[v], (long long)u);
    }
}

// Ordered compaction of byte flags (flatnonzero): each block takes OOC_FLAG_TILE flags, each of
// its 256 threads eight of them (one 8-byte load where the eight are inside the array).
// ooc_graph_flag_count writes each block's count; after an exclusive scan of those counts,
// ooc_graph_flag_ids writes the ids of the set flags, ascending, from its block's offset.
#define OOC_FLAG_TILE 2048
__device__ __forceinline__ int ooc_flags8(const unsigned char* __restrict__ flags, const long long n,
                                          const long long at, unsigned char* out) {
    int c = 0;
    if (at + 8 <= n) {
        const unsigned long long word = *reinterpret_cast<const unsigned long long*>(flags + at);
        for (int j = 0; j < 8; ++j) { out[j] = (word >> (8 * j)) & 0xff; c += out[j] != 0; }
    } else {
        for (int j = 0; j < 8; ++j) { out[j] = at + j < n ? flags[at + j] : 0; c += out[j] != 0; }
    }
    return c;
}

__global__ void ooc_graph_flag_count(const unsigned char* __restrict__ flags, const long long n,
                                     long long* __restrict__ counts) {
    __shared__ int warp_sums[8];
    unsigned char f[8];
    const long long at = (long long)blockIdx.x * OOC_FLAG_TILE + 8LL * threadIdx.x;
    int c = at < n ? ooc_flags8(flags, n, at, f) : 0;
    for (int d = 16; d > 0; d >>= 1) c += __shfl_down_sync(0xffffffffu, c, d);
    if ((threadIdx.x & 31) == 0) warp_sums[threadIdx.x >> 5] = c;
    __syncthreads();
    if (threadIdx.x == 0) {
        long long total = 0;
        for (int w = 0; w < 8; ++w) total += warp_sums[w];
        counts[blockIdx.x] = total;
    }
}

__global__ void ooc_graph_flag_ids(const unsigned char* __restrict__ flags, const long long n,
                                   const long long* __restrict__ offsets, long long* __restrict__ ids) {
    __shared__ int warp_sums[8];
    unsigned char f[8];
    const long long at = (long long)blockIdx.x * OOC_FLAG_TILE + 8LL * threadIdx.x;
    const int c = at < n ? ooc_flags8(flags, n, at, f) : 0;
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    int scan = c;  // inclusive scan within the warp
    for (int d = 1; d < 32; d <<= 1) {
        const int y = __shfl_up_sync(0xffffffffu, scan, d);
        if (lane >= d) scan += y;
    }
    if (lane == 31) warp_sums[warp] = scan;
    __syncthreads();
    int before = 0;
    for (int w = 0; w < warp; ++w) before += warp_sums[w];
    if (!c) return;
    long long k = offsets[blockIdx.x] + before + scan - c;
    for (int j = 0; j < 8; ++j) if (f[j]) ids[k++] = at + j;
}
