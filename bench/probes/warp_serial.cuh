/* probe: the lanes of a warp that reach the site together run their children's threads together */
static __device__ __forceinline__ void probe_warp_serial_sssp_child(const dim3 dpopt_gridDim, const dim3 dpopt_blockDim, const int* row, const int* col, const unsigned int* weight, unsigned int* dist, int* next_active, int start, int deg, unsigned int dv, int* changed)
{
    const cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
    const long long all = (long long)dpopt_gridDim.x * dpopt_blockDim.x;
    const unsigned w = (unsigned)((long long)deg < all ? (long long)deg : all);
    const unsigned incl = cooperative_groups::inclusive_scan(g, w);
    const unsigned excl = incl - w;
    const unsigned total = g.shfl(incl, g.size() - 1);
    const unsigned n = g.size();
    for (unsigned base = 0; base < total; base += n) {
        const unsigned t = base + g.thread_rank();
        unsigned lo = 0;  /* ranks whose threads end at or before t */
        for (unsigned step = 16; step; step >>= 1) {
            const unsigned cand = lo + step;
            const unsigned v = g.shfl(incl, (cand <= n ? cand : n) - 1);
            if (cand <= n && v <= t) lo = cand;
        }
        const unsigned o = lo < n ? lo : n - 1;
        const int s_start = g.shfl(start, o);
        const int s_deg = g.shfl(deg, o);
        const unsigned s_dv = g.shfl(dv, o);
        const unsigned s_excl = g.shfl(excl, o);
        const int* s_row = g.shfl(row, o);
        const int* s_col = g.shfl(col, o);
        const unsigned int* s_weight = g.shfl(weight, o);
        unsigned int* s_dist = g.shfl(dist, o);
        int* s_next = g.shfl(next_active, o);
        int* s_changed = g.shfl(changed, o);
        if (t < total)
            dpopt_serial_body_sssp_child(dim3(0u, 0u, 0u), dim3(t - s_excl, 0u, 0u), dpopt_blockDim, dpopt_gridDim, s_row, s_col, s_weight, s_dist, s_next, s_start, s_deg, s_dv, s_changed);
    }
}
