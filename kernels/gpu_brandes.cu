// ooc_graph Brandes betweenness on hops over a device CSR, one source at a time (driven by
// gpu_brandes.py). The frontier is a queue of vertex ids: queue[off[L] .. off[L+1]) holds level L,
// the levels back to back (networkx's stack S); depth[v] is -1 where v is not reached yet.

// One level forward, one warp per vertex u of queue[lo .. hi): each arc u->v claims v if it is not
// reached (atomicCAS on its depth) and appends it to the next level (queue[ctl[0]++]); every arc
// into the next level adds sigma[u] to sigma[v]. sigma[u] is final: the level before wrote it.
// ctl: [0] the queue's tail, [1] arcs scanned.
__global__ void ooc_graph_brandes_forward(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                          int* queue, const long long lo, const long long hi, int* depth,
                                          double* sigma, unsigned long long* ctl) {
    const long long k = lo + (((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (k >= hi) return;
    const int u = queue[k];
    const int next = depth[u] + 1;
    const double su = sigma[u];
    const long long start = indptr[u], end = indptr[u + 1];
    if (lane == 0) atomicAdd(&ctl[1], (unsigned long long)(end - start));
    for (long long j = start + lane; j < end; j += 32) {
        const int v = indices[j];
        int d = depth[v];
        if (d < 0) {
            d = atomicCAS(&depth[v], -1, next);  // the old value: -1 where this arc claimed v
            if (d < 0) {
                d = next;
                queue[atomicAdd(&ctl[0], 1ULL)] = v;
            }
        }
        if (d == next) atomicAdd(&sigma[v], su);
    }
}

// One level backward, one warp per vertex u of queue[lo .. hi): delta[u] = sigma[u] * the sum of
// (1 + delta[w]) / sigma[w] over the arcs u->w into the level below (depth[w] == depth[u] + 1,
// whose deltas the launch before wrote), summed over the warp's lanes; bc[u] += delta[u] + plus.
// A warp owns its u: no atomics.
__global__ void ooc_graph_brandes_backward(const long long* __restrict__ indptr, const int* __restrict__ indices,
                                           const int* __restrict__ queue, const long long lo, const long long hi,
                                           const int* __restrict__ depth, const double* __restrict__ sigma,
                                           double* delta, double* __restrict__ bc, const double plus) {
    const long long k = lo + (((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5);
    const int lane = threadIdx.x & 31;
    if (k >= hi) return;  // the whole warp: k is the same for its lanes
    const int u = queue[k];
    const int below = depth[u] + 1;
    double acc = 0.0;
    const long long end = indptr[u + 1];
    for (long long j = indptr[u] + lane; j < end; j += 32) {
        const int w = indices[j];
        if (depth[w] == below) acc += (1.0 + delta[w]) / sigma[w];
    }
    for (int off = 16; off > 0; off >>= 1) acc += __shfl_down_sync(0xffffffffu, acc, off);
    if (lane == 0) {
        const double d = sigma[u] * acc;
        delta[u] = d;
        bc[u] += d + plus;
    }
}
