// ooc_graph whole traversals on one GPU: a whole BFS or min-propagation in ONE cooperative kernel
// launch, its levels separated by grid-wide barriers, so no level waits on the host (a host-driven
// level costs a launch or two and a look from the host: ~0.2-0.4 ms of a level that computes in
// tens of microseconds). The grid is as large as can be resident at once (a cooperative launch
// guarantees it); every loop strides over it.
//
// Conventions shared with gpu_kernels.cu: states are float64 compared as IEEE-754 bit patterns
// (non-negative values order as their bits), +inf is "not reached"; vertex ids in the CSRs are
// int32 (this path is taken for fewer than 2**31 vertices); the CSRs' ids and weights may live in
// device memory or in page-locked host memory mapped into the device's address space (zero-copy:
// then rows are read a warp at a time, in whole 128-byte lines, as EMOGI does).
//
// Frontier vertices are spread by their arcs (Gunrock's thread-warp-CTA mapping, SAGE's tiles):
// one with at most `small` arcs is taken by one thread, one with at most `heavy` by a warp, the
// others by the whole grid, one after the other. `small` is 0 for rows in host memory.
//
// Control words (ctl, unsigned long long): the OOC_C_* indices below; after them a log of
// OOC_LOG_WORDS per iteration (the end time in ns, what it did, its frontier's size) for the
// first `log_cap` iterations. The host sets ctl up and reads it once, after the launch.
#include <cooperative_groups.h>
namespace ooc_cg = cooperative_groups;

#define OOC_C_SIZE0 0      // vertices in queue 0
#define OOC_C_SIZE1 1      // vertices in queue 1
#define OOC_C_ITER 2       // iterations run (BFS: levels)
#define OOC_C_ARCS 3       // arcs relaxed or looked at
#define OOC_C_NEXT_ARCS 4  // BFS: out-arcs of the next frontier
#define OOC_C_HEAVY 5      // vertices in the heavy list this iteration
#define OOC_C_MEDIUM 6     // vertices in the medium list this iteration
#define OOC_C_BOTTOM 7     // BFS: this level runs bottom-up
#define OOC_C_BOUND 8      // near-far: the bound, as float64 bits
#define OOC_C_MIN_FAR 9    // near-far: the smallest waiting state, as bits
#define OOC_C_START 10     // the kernel's start time (ns)
#define OOC_C_FAR0 11      // near-far: vertices in far list 0
#define OOC_C_FAR1 12      // near-far: vertices in far list 1
#define OOC_C_WORDS 16
#define OOC_LOG_WORDS 3    // per logged iteration: end time (ns), kind, frontier size
#define OOC_KIND_TOP_DOWN 0
#define OOC_KIND_BOTTOM_UP 1
#define OOC_KIND_NEAR 2    // near-far: a near pile expanded
#define OOC_KIND_BUCKET 3  // near-far: an expansion whose next pile came from the far pile

#define OOC_WHOLE_INF 0x7FF0000000000000ULL
#define OOC_HEAVY_CHUNK 1024  // arcs of heavy rows a warp takes at a time

__device__ __forceinline__ unsigned long long ooc_ld(const unsigned long long* p) { return __ldcg(p); }
__device__ __forceinline__ int ooc_ld(const int* p) { return __ldcg(p); }

__device__ __forceinline__ bool ooc_bit(const unsigned int* bits, const int v) {
    return (__ldcg(&bits[v >> 5]) >> (v & 31)) & 1u;
}

__device__ __forceinline__ unsigned long long ooc_now() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Append v to list (whose length is *size) where `want`: one atomic per warp for the lanes that
// arrive here together (a single counter taking an atomic per vertex serialised whole levels).
__device__ __forceinline__ void ooc_append(int* list, unsigned long long* size, const bool want, const int v) {
    const unsigned int active = __activemask();
    const unsigned int wanting = __ballot_sync(active, want);
    if (!wanting) return;
    const int lane = threadIdx.x & 31;
    const int leader = __ffs(wanting) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(size, (unsigned long long)__popc(wanting));
    base = __shfl_sync(active, base, leader);
    if (want) list[base + __popc(wanting & ((1u << lane) - 1u))] = v;
}

// Sum of a value over the block, added once into *out by thread 0 (warp shuffles, then shared).
__device__ __forceinline__ void ooc_block_add(unsigned long long value, unsigned long long* out) {
    __shared__ unsigned long long part[32];
    for (int o = 16; o > 0; o >>= 1) value += __shfl_down_sync(0xffffffffu, value, o);
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < (int)(blockDim.x >> 5) ? part[lane] : 0ULL;
        for (int o = 16; o > 0; o >>= 1) value += __shfl_down_sync(0xffffffffu, value, o);
        if (lane == 0 && value) atomicAdd(out, value);
    }
    __syncthreads();
}

// Minimum of a value over the block, into *out by thread 0 (atomicMin).
__device__ __forceinline__ void ooc_block_min(unsigned long long value, unsigned long long* out) {
    __shared__ unsigned long long part[32];
    for (int o = 16; o > 0; o >>= 1) value = min(value, __shfl_down_sync(0xffffffffu, value, o));
    const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) part[warp] = value;
    __syncthreads();
    if (warp == 0) {
        value = lane < (int)(blockDim.x >> 5) ? part[lane] : ~0ULL;
        for (int o = 16; o > 0; o >>= 1) value = min(value, __shfl_down_sync(0xffffffffu, value, o));
        if (lane == 0) atomicMin(out, value);
    }
    __syncthreads();
}

__device__ __forceinline__ void ooc_log(unsigned long long* ctl, const long long i, const long long cap,
                                        const unsigned long long kind, const unsigned long long size) {
    if (i < cap) {
        unsigned long long* at = ctl + OOC_C_WORDS + OOC_LOG_WORDS * i;
        at[0] = ooc_now();
        at[1] = kind;
        at[2] = size;
    }
}

// The arcs of the frontier `cur` (nf vertices) by thread, warp and grid: f(u, j) for every arc j
// of every frontier vertex u, each exactly once. Rows of at most `small` arcs are taken by the
// thread that reads the vertex, rows of at most `heavy` are listed for a warp each, the others'
// arcs are spread evenly over the whole grid (block 0 sums their lengths into heavy_off while the
// warps take the medium rows; each thread then finds its arcs' row by a binary search of the
// sums). Two grid barriers. Returns the arcs this thread took (for the counters).
template <typename F>
__device__ __forceinline__ unsigned long long ooc_each_arc(
        ooc_cg::grid_group& grid, const long long* __restrict__ indptr, const int* cur, const long long nf,
        int* medium_list, int* heavy_list, long long* heavy_off, unsigned long long* ctl, const long long small,
        const long long heavy, F f) {
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long warps = threads >> 5, wid = tid >> 5;
    const int lane = threadIdx.x & 31;
    unsigned long long arcs = 0;
    for (long long base = tid - lane; base < nf; base += threads) {  // warp-uniform rounds
        const long long k = base + lane;
        int u = 0;
        long long start = 0, end = 0;
        if (k < nf) { u = ooc_ld(&cur[k]); start = indptr[u]; end = indptr[u + 1]; }
        const long long deg = end - start;
        ooc_append(medium_list, &ctl[OOC_C_MEDIUM], k < nf && deg > small && deg <= heavy, u);
        ooc_append(heavy_list, &ctl[OOC_C_HEAVY], k < nf && deg > heavy, u);
        if (k < nf && deg <= small) {
            arcs += (unsigned long long)deg;
            for (long long j = start; j < end; ++j) f(u, j);
        }
    }
    grid.sync();
    const long long nh = (long long)ooc_ld(&ctl[OOC_C_HEAVY]);
    if (blockIdx.x == 0 && nh) {  // exclusive sums of the heavy rows' lengths, a block's scan
        __shared__ long long carry;
        if (threadIdx.x == 0) carry = 0;
        __syncthreads();
        for (long long at = 0; at < nh; at += blockDim.x) {
            const long long h = at + threadIdx.x;
            long long len = 0;
            if (h < nh) { const int u = ooc_ld(&heavy_list[h]); len = indptr[u + 1] - indptr[u]; }
            long long x = len;  // inclusive scan of the block: warps, then their totals
            for (int o = 1; o < 32; o <<= 1) {
                const long long y = __shfl_up_sync(0xffffffffu, x, o);
                if (lane >= o) x += y;
            }
            __shared__ long long warp_sum[32];
            if (lane == 31) warp_sum[threadIdx.x >> 5] = x;
            __syncthreads();
            if (threadIdx.x < 32) {
                long long t = threadIdx.x < (blockDim.x >> 5) ? warp_sum[threadIdx.x] : 0;
                for (int o = 1; o < 32; o <<= 1) {
                    const long long y = __shfl_up_sync(0xffffffffu, t, o);
                    if (lane >= o) t += y;
                }
                warp_sum[threadIdx.x] = t;  // inclusive sums of the warps' totals
            }
            __syncthreads();
            const long long before = carry + ((threadIdx.x >> 5) ? warp_sum[(threadIdx.x >> 5) - 1] : 0);
            if (h < nh) heavy_off[h] = before + x - len;
            __syncthreads();
            if (threadIdx.x == blockDim.x - 1) carry = before + x;
            __syncthreads();
        }
        if (threadIdx.x == 0) heavy_off[nh] = carry;
    }
    const long long nm = (long long)ooc_ld(&ctl[OOC_C_MEDIUM]);
    for (long long k = wid; k < nm; k += warps) {
        const int u = ooc_ld(&medium_list[k]);
        const long long start = indptr[u], end = indptr[u + 1];
        if (lane == 0) arcs += (unsigned long long)(end - start);
        for (long long j = (start & ~31LL) + lane; j < end; j += 32)  // 128-byte aligned reads
            if (j >= start) f(u, j);
    }
    if (nh) {
        grid.sync();  // (taken alike by every thread: nh is the same everywhere)
        const long long total = __ldcg(&heavy_off[nh]);
        if (tid == 0) arcs += (unsigned long long)total;
        // a warp takes OOC_HEAVY_CHUNK arcs at a time: one binary search for the row its chunk
        // starts in, then each lane walks on through the rows as its arcs pass their ends
        for (long long first = wid * OOC_HEAVY_CHUNK; first < total; first += warps * OOC_HEAVY_CHUNK) {
            long long lo = 0, hi = nh - 1;  // the last heavy row starting at or before `first`
            while (lo < hi) {
                const long long mid = (lo + hi + 1) >> 1;
                if (__ldcg(&heavy_off[mid]) <= first) lo = mid; else hi = mid - 1;
            }
            long long row = lo, row_end = __ldcg(&heavy_off[row + 1]);
            int u = ooc_ld(&heavy_list[row]);
            long long row_start = __ldcg(&heavy_off[row]);
            const long long last = min(first + OOC_HEAVY_CHUNK, total);
            for (long long i = first + lane; i < last; i += 32) {
                while (i >= row_end) {
                    ++row;
                    row_start = row_end;
                    row_end = __ldcg(&heavy_off[row + 1]);
                    u = ooc_ld(&heavy_list[row]);
                }
                f(u, indptr[u] + (i - row_start));
            }
        }
    }
    return arcs;
}

// ---------------------------------------------------------------------------------------------
// BFS, direction-optimising (Beamer et al.), from one source over a fresh state. Every level takes
// the frontier one level on: top-down from the queue, or bottom-up (each unvisited vertex looks
// through its in-row, a group of `group` lanes at a time, for a vertex of the frontier bitmap).
// Both give parent[v] = the smallest vertex one level above v with an arc to v: top-down takes
// atomicMin over every such arc, bottom-up the first such in-neighbour (rows ascend by source). The
// direction of each level is chosen before it by Beamer's rule with `alpha` and `beta` (as the
// engine's loop does). The kernel sets everything up itself (the state must be fresh: +inf but at
// the source, 0) and leaves parent -1 at the source and where unreached: the host launches it and
// reads ctl once.
//
// Bitmaps (n bits each): visited; front0/front1, the frontier of even/odd levels.
extern "C" __global__ void __launch_bounds__(256, 5) ooc_graph_whole_bfs(
        const long long* __restrict__ indptr, const int* __restrict__ indices,
        const long long* __restrict__ in_indptr, const int* __restrict__ in_indices, const int pull,
        const long long n, const int source, unsigned long long* state, long long* parent,
        int* q0, int* q1, unsigned int* visited, unsigned int* front0, unsigned int* front1,
        int* medium_list, int* heavy_list, long long* heavy_off, unsigned long long* ctl, const long long total_arcs,
        const long long alpha, const long long beta, const long long small, const long long heavy,
        const int group, const long long log_cap) {
    ooc_cg::grid_group grid = ooc_cg::this_grid();
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const int lane = threadIdx.x & 31;
    const long long words = (n + 31) >> 5;
    for (long long v = tid; v < n; v += threads) parent[v] = n;  // no parent yet
    for (long long k = tid; k < words; k += threads) visited[k] = front0[k] = front1[k] = 0u;
    const long long deg = indptr[source + 1] - indptr[source];
    long long unvisited = total_arcs - deg;  // Beamer's m_u, kept alike by every thread
    if (tid == 0) {
        for (int k = 0; k < OOC_C_WORDS; ++k) ctl[k] = 0ULL;
        ctl[OOC_C_START] = ooc_now();
        ctl[OOC_C_SIZE0] = 1ULL;
        ctl[OOC_C_BOTTOM] = (pull && deg * alpha > unvisited && deg * beta >= n) ? 1ULL : 0ULL;
        q0[0] = source;
    }
    grid.sync();
    if (tid == 0) {
        visited[source >> 5] = front0[source >> 5] = 1u << (source & 31);
    }
    grid.sync();
    for (long long level = 0;; ++level) {
        const int c = (int)(level & 1);
        int* cur = c ? q1 : q0;
        int* nxt = c ? q0 : q1;
        unsigned int* front = c ? front1 : front0;
        unsigned int* next_front = c ? front0 : front1;
        const long long nf = (long long)ooc_ld(&ctl[c ? OOC_C_SIZE1 : OOC_C_SIZE0]);
        unsigned long long* nsize = &ctl[c ? OOC_C_SIZE0 : OOC_C_SIZE1];
        const bool bottom = ooc_ld(&ctl[OOC_C_BOTTOM]) != 0;
        const unsigned long long next_bits = (unsigned long long)__double_as_longlong((double)(level + 1));
        unsigned long long arcs = 0, next_arcs = 0;
        if (!bottom) {
            arcs = ooc_each_arc(grid, indptr, cur, nf, medium_list, heavy_list, heavy_off, ctl, small, heavy,
                                [&](const int u, const long long j) {
                const int v = indices[j];
                bool claimed = false;
                if (ooc_bit(next_front, v)) {
                    atomicMin(&parent[v], (long long)u);
                } else {
                    // decided on v's state (the next-frontier bit is only a shortcut, set after the
                    // claim): a state read stale as unreached makes the claim fail with the next
                    // level's value, which counts the same
                    const unsigned long long now = ooc_ld(&state[v]);
                    if (now == OOC_WHOLE_INF || now == next_bits) {
                        const unsigned long long old =
                            now == next_bits ? now : atomicCAS(&state[v], OOC_WHOLE_INF, next_bits);
                        claimed = old == OOC_WHOLE_INF;
                        if (claimed) {
                            atomicOr(&next_front[v >> 5], 1u << (v & 31));
                            atomicOr(&visited[v >> 5], 1u << (v & 31));
                            next_arcs += (unsigned long long)(indptr[v + 1] - indptr[v]);
                        }
                        if (old == OOC_WHOLE_INF || old == next_bits) atomicMin(&parent[v], (long long)u);
                    }
                }
                ooc_append(nxt, nsize, claimed, v);
            });
        } else {
            // bottom-up: groups of `group` lanes, one unvisited vertex each; every round is
            // warp-uniform (all lanes take part in the ballots, live or not)
            const long long groups = threads / group, gid = tid / group;
            const int g = (int)(tid % group);
            const int base = (lane / group) * group;
            const unsigned int gmask = (group == 32 ? 0xffffffffu : ((1u << group) - 1u)) << base;
            const long long rounds = (n + groups - 1) / groups;
            for (long long r = 0; r < rounds; ++r) {
                const long long v = r * groups + gid;
                const bool live = v < n && !ooc_bit(visited, (int)v);
                long long start = 0, end = 0;
                if (live) { start = in_indptr[v]; end = in_indptr[v + 1]; }
                int found = -1;
                for (long long j = start - (start % group);; j += group) {  // aligned to the group
                    const bool more = live && found < 0 && j < end;
                    if (!__any_sync(0xffffffffu, more)) break;
                    int u = 0;
                    bool hit = false;
                    if (more && j + g >= start && j + g < end) {
                        u = in_indices[j + g];
                        hit = ooc_bit(front, u);
                    }
                    const unsigned int hits = __ballot_sync(0xffffffffu, hit) & gmask;
                    const int got = __shfl_sync(0xffffffffu, u, hits ? __ffs(hits) - 1 : lane);
                    if (more && g == 0) arcs += (unsigned long long)(min(j + group, end) - max(j, start));
                    if (more && hits) found = got;
                }
                const bool claim = live && found >= 0 && g == 0;
                if (claim) {
                    state[v] = next_bits;
                    parent[v] = found;
                    atomicOr(&visited[v >> 5], 1u << (v & 31));
                    atomicOr(&next_front[v >> 5], 1u << (v & 31));
                    next_arcs += (unsigned long long)(indptr[v + 1] - indptr[v]);
                }
                ooc_append(nxt, nsize, claim, (int)v);
            }
        }
        ooc_block_add(arcs, &ctl[OOC_C_ARCS]);
        ooc_block_add(next_arcs, &ctl[OOC_C_NEXT_ARCS]);
        grid.sync();
        // between levels: every thread reads the totals, clears the bitmap just used, and takes
        // the same decision; thread 0 resets the counters for the next level
        const long long count = (long long)ooc_ld(nsize);
        const long long mf = (long long)ooc_ld(&ctl[OOC_C_NEXT_ARCS]);
        unvisited -= mf;
        bool next_bottom = false;
        if (pull) next_bottom = bottom ? count * beta >= n : (mf * alpha > unvisited && mf * beta >= n);
        for (long long k = tid; k < words; k += threads) front[k] = 0u;
        grid.sync();  // every thread has read the counters above before thread 0 resets them
        if (tid == 0) {
            ctl[c ? OOC_C_SIZE1 : OOC_C_SIZE0] = 0ULL;
            ctl[OOC_C_NEXT_ARCS] = 0ULL;
            ctl[OOC_C_HEAVY] = 0ULL;
            ctl[OOC_C_MEDIUM] = 0ULL;
            ctl[OOC_C_ITER] += 1ULL;
            ctl[OOC_C_BOTTOM] = next_bottom ? 1ULL : 0ULL;
            ooc_log(ctl, level, log_cap, bottom ? OOC_KIND_BOTTOM_UP : OOC_KIND_TOP_DOWN, (unsigned long long)nf);
        }
        grid.sync();
        if (count == 0) break;
    }
    for (long long v = tid; v < n; v += threads)
        if (parent[v] == n || v == source) parent[v] = -1;
}

// ---------------------------------------------------------------------------------------------
// state[v] = min(state[v], state[u] + w) over every arc to a fixed point, from the vertices in
// queue 0 (w the arc's weight, or `plus`; never negative), by near-far buckets (Davidson et al.):
// an iteration expands the near queue; a vertex that drops to at most `bound` joins the next near
// queue (once an iteration: `stamp`), one that drops above it waits in the far list (once: its
// `far` flag). When the near queue empties, the bound moves to the smallest waiting state plus
// `delta`, and the far vertices within it become the near queue; the others stay in the far list,
// compacted into the other one (a vertex taken near never goes far again: its state only drops and
// the bound only rises, so the far lists hold each vertex once). delta = +inf: one bucket (a
// queue-driven Bellman-Ford). stamp must hold -1 everywhere, far 0 everywhere; ctl[OOC_C_BOUND]
// the first bound's bits, ctl[OOC_C_MIN_FAR] all ones.
template <typename W>
__global__ void __launch_bounds__(256, 5) ooc_graph_whole_nearfar(
        const long long* __restrict__ indptr, const int* __restrict__ indices, const W* __restrict__ w,
        const int use_w, const double plus, const long long n, unsigned long long* state, int* q0, int* q1,
        int* stamp, unsigned int* far, int* far0, int* far1, int* medium_list, int* heavy_list, long long* heavy_off,
        unsigned long long* ctl, const double delta, const long long small, const long long heavy,
        const long long log_cap) {
    ooc_cg::grid_group grid = ooc_cg::this_grid();
    const long long threads = (long long)gridDim.x * blockDim.x;
    const long long tid = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (tid == 0) ctl[OOC_C_START] = ooc_now();
    int c = 0, f = 0;  // the near queue and the far list in use
    for (int iter = 0;; ++iter) {
        int* cur = c ? q1 : q0;
        int* nxt = c ? q0 : q1;
        int* far_list = f ? far1 : far0;
        unsigned long long* far_size = &ctl[f ? OOC_C_FAR1 : OOC_C_FAR0];
        const long long nf = (long long)ooc_ld(&ctl[c ? OOC_C_SIZE1 : OOC_C_SIZE0]);
        unsigned long long* nsize = &ctl[c ? OOC_C_SIZE0 : OOC_C_SIZE1];
        const double bound = __longlong_as_double((long long)ooc_ld(&ctl[OOC_C_BOUND]));
        const unsigned long long arcs = ooc_each_arc(grid, indptr, cur, nf, medium_list, heavy_list, heavy_off, ctl,
                                                     small, heavy, [&](const int u, const long long j) {
            const double cand = __longlong_as_double((long long)ooc_ld(&state[u])) + (use_w ? (double)w[j] : plus);
            const unsigned long long cb = (unsigned long long)__double_as_longlong(cand);
            const int v = indices[j];
            bool push = false, wait = false;
            if (cb < ooc_ld(&state[v]) && cb < atomicMin(&state[v], cb)) {
                if (cand > bound) wait = __ldcg(&far[v]) == 0u && atomicExch(&far[v], 1u) == 0u;
                else push = atomicExch(&stamp[v], iter) != iter;
            }
            ooc_append(nxt, nsize, push, v);
            ooc_append(far_list, far_size, wait, v);
        });
        ooc_block_add(arcs, &ctl[OOC_C_ARCS]);
        grid.sync();
        long long count = (long long)ooc_ld(nsize);
        unsigned long long kind = OOC_KIND_NEAR;
        if (count == 0) {
            // the near queue is empty: the smallest state still waiting sets the next bound
            const long long waiting = (long long)ooc_ld(far_size);
            unsigned long long least = ~0ULL;
            for (long long k = tid; k < waiting; k += threads) {
                const int v = ooc_ld(&far_list[k]);
                const unsigned long long s = ooc_ld(&state[v]);
                if (__longlong_as_double((long long)s) > bound) least = min(least, s);
            }
            ooc_block_min(least, &ctl[OOC_C_MIN_FAR]);
            grid.sync();
            const unsigned long long m = ooc_ld(&ctl[OOC_C_MIN_FAR]);
            if (m == ~0ULL) {  // nothing waits: done
                if (tid == 0) {
                    ctl[OOC_C_ITER] = (unsigned long long)iter + 1ULL;
                    ooc_log(ctl, iter, log_cap, OOC_KIND_NEAR, (unsigned long long)nf);
                }
                break;
            }
            const double next_bound = __longlong_as_double((long long)m) + delta;
            int* kept = f ? far0 : far1;
            unsigned long long* kept_size = &ctl[f ? OOC_C_FAR0 : OOC_C_FAR1];
            for (long long base = tid - (threadIdx.x & 31); base < waiting; base += threads) {  // warp-uniform
                const long long k = base + (threadIdx.x & 31);
                int v = 0;
                bool take = false, keep = false;
                if (k < waiting) {
                    v = ooc_ld(&far_list[k]);
                    const double s = __longlong_as_double((long long)ooc_ld(&state[v]));
                    // one that dropped within the old bound since was queued near then: it is dropped here
                    take = s > bound && s <= next_bound;
                    keep = s > next_bound;
                }
                bool push = false;
                if (take) push = atomicExch(&stamp[v], iter) != iter;
                ooc_append(nxt, nsize, push, v);
                ooc_append(kept, kept_size, keep, v);
            }
            grid.sync();
            count = (long long)ooc_ld(nsize);
            kind = OOC_KIND_BUCKET;
            if (tid == 0) {
                ctl[OOC_C_BOUND] = (unsigned long long)__double_as_longlong(next_bound);
                *far_size = 0ULL;  // the list just read is empty now; the kept one is in use
            }
            f = 1 - f;
        }
        grid.sync();  // every thread has read the counters before thread 0 resets them
        if (tid == 0) {
            ctl[c ? OOC_C_SIZE1 : OOC_C_SIZE0] = 0ULL;
            ctl[OOC_C_HEAVY] = 0ULL;
            ctl[OOC_C_MEDIUM] = 0ULL;
            ctl[OOC_C_MIN_FAR] = ~0ULL;
            ooc_log(ctl, iter, log_cap, kind, (unsigned long long)nf);
        }
        grid.sync();
        c = 1 - c;
    }
}
