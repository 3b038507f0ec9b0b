// ooc_graph triangle counting over an oriented CSR (compiled with gpu_kernels.cu): pairs x -> y
// with x < y, rows sorted by target; pair p joins xs[p] to ys[p] by arcs[p] arcs.

// One warp per pair p = (x, y) of [lo, hi) (a grid striding over them): the triangles x, y, z are
// the z in both y's row and the part of x's row after p (z > y). The warp's lanes take the shorter
// of the two in turn and look each z up in the other by binary search. A triangle adds 1 to the
// triangles of x, y and z, and to each one's closing the arcs joining the other two; x's and y's
// are summed over the warp first (one atomic each per pair), z's added per triangle.
__global__ void ooc_graph_wedge_count(const long long* __restrict__ indptr, const long long* __restrict__ xs,
                                      const long long* __restrict__ ys, const long long* __restrict__ arcs,
                                      const long long lo, const long long hi, unsigned long long* triangles,
                                      unsigned long long* closing) {
    const long long warps = ((long long)gridDim.x * blockDim.x) >> 5;
    const int lane = threadIdx.x & 31;
    for (long long p = lo + (((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5); p < hi; p += warps) {
        const long long x = xs[p], y = ys[p];
        const long long xb = p + 1, xe = indptr[x + 1];  // x's row after y
        const long long yb = indptr[y], ye = indptr[y + 1];
        const bool scan_x = xe - xb < ye - yb;
        const long long sb = scan_x ? xb : yb, se = scan_x ? xe : ye;  // scanned
        const long long fb = scan_x ? yb : xb, fe = scan_x ? ye : xe;  // searched
        unsigned long long t = 0, cx = 0, cy = 0;
        if (fb < fe) {
            const unsigned long long axy = (unsigned long long)arcs[p];
            for (long long k = sb + lane; k < se; k += 32) {
                const long long z = ys[k];
                long long l = fb, h = fe;
                while (l < h) {
                    const long long mid = l + ((h - l) >> 1);
                    if (ys[mid] < z) l = mid + 1;
                    else h = mid;
                }
                if (l < fe && ys[l] == z) {
                    const long long in_x = scan_x ? k : l, in_y = scan_x ? l : k;
                    t += 1;
                    cx += (unsigned long long)arcs[in_y];  // arcs(y, z), closing x's triangle
                    cy += (unsigned long long)arcs[in_x];  // arcs(x, z), closing y's
                    atomicAdd(&triangles[z], 1ULL);
                    atomicAdd(&closing[z], axy);           // arcs(x, y), closing z's
                }
            }
        }
        for (int off = 16; off > 0; off >>= 1) {  // the whole warp is here: p is the same for its lanes
            t += __shfl_down_sync(0xffffffffu, t, off);
            cx += __shfl_down_sync(0xffffffffu, cx, off);
            cy += __shfl_down_sync(0xffffffffu, cy, off);
        }
        if (lane == 0 && t) {
            atomicAdd(&triangles[x], t);
            atomicAdd(&triangles[y], t);
            atomicAdd(&closing[x], cx);
            atomicAdd(&closing[y], cy);
        }
    }
}
