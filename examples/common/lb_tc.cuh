// lb_tc.cuh - the load-balanced flat triangle count (impl=flat-lb of tc.cu).
// The work of vertex u is one intersection |N+(u) & N+(v)| per oriented edge
// (u, v), and one intersection is one binary search per entry of the shorter
// list in the longer one. The flat version gives a thread all of u's
// intersections; here the unit of work is one such search:
//   * a thread per oriented edge e = (u, v) (u found by a binary search in
//     the row offsets), whose range is the entries of the shorter of the two
//     lists;
//   * lb::twc spreads each edge's searches over the whole block (>= 256
//     entries), a warp (32..255) or the edge's own thread (< 32), and sums
//     the hits (an exact integer count, whatever the order).
// Each edge's count goes to tri[u] with one atomicAdd; the total is summed
// per block and added with one atomicAdd per block. Vertices with fewer than
// 2 oriented neighbours are skipped as in the other versions (count 0).
#pragma once

#include <cuda_runtime.h>

#include "lb_twc.cuh"

#define LB_TC_BLOCK 256

namespace lb {

__global__ void __launch_bounds__(LB_TC_BLOCK)
    tc_twc(const int* row, const int* col, int n, int m,
           unsigned long long* tri, unsigned long long* total) {
  const int e = blockIdx.x * LB_TC_BLOCK + threadIdx.x;
  int u = 0, len = 0;
  if (e < m) {
    u = upper_bound(row, 0, n + 1, e) - 1;  // row[u] <= e < row[u + 1]
    const int du = row[u + 1] - row[u];
    const int v = col[e];
    const int dv = row[v + 1] - row[v];
    if (du >= 2) len = du < dv ? du : dv;
  }
  unsigned long long mine = 0;  // triangles finished by this thread
  twc<LB_TC_BLOCK, true, unsigned int>(
      e < m && len > 0, e, u, 0, len, 0u,
      [=](int k, int edge, int uu) -> unsigned int {
        const int* a = col + row[uu];
        int na = row[uu + 1] - row[uu];
        const int v = col[edge];
        const int* b = col + row[v];
        int nb = row[v + 1] - row[v];
        if (na > nb) {  // a: the shorter list (as intersect_count)
          const int* t = a; a = b; b = t;
          const int tn = na; na = nb; nb = tn;
        }
        const int x = a[k];
        int lo = 0, hi = nb;
        while (lo < hi) {
          const int mid = lo + (hi - lo) / 2;
          if (b[mid] < x) lo = mid + 1;
          else hi = mid;
        }
        return (lo < nb && b[lo] == x) ? 1u : 0u;
      },
      Plus(),
      [&](int, int uu, unsigned int c) {
        if (c > 0) {
          atomicAdd(&tri[uu], (unsigned long long)c);
          mine += c;
        }
      });
  // One atomicAdd of the total per block.
  __shared__ unsigned long long s_total;
  if (threadIdx.x == 0) s_total = 0;
  __syncthreads();
  mine = warp_reduce(mine, Plus());
  if ((threadIdx.x & 31) == 0 && mine > 0) atomicAdd(&s_total, mine);
  __syncthreads();
  if (threadIdx.x == 0 && s_total > 0) atomicAdd(total, s_total);
}

inline void tc_launch(const int* row, const int* col, int n, int m,
                      unsigned long long* tri, unsigned long long* total) {
  const int blocks = (m + LB_TC_BLOCK - 1) / LB_TC_BLOCK;
  if (blocks > 0) tc_twc<<<blocks, LB_TC_BLOCK>>>(row, col, n, m, tri, total);
}

}  // namespace lb
