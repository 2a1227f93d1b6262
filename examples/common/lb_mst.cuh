// lb_mst.cuh - load-balanced flat kernels of mstf.cu and mstv.cu
// (impl=flat-lb). Needs MST_NONE (mstf.cu) or mstv_verdict (mstv.cu), and
// LB_MST_FIND / LB_MST_VERIFY to select the part of the including example.
//
// MST find (mstf): the lightest edge leaving each component, with a
// thread, a warp or the whole block per vertex by its degree (lb::twc): the
// vertex's minimum key is a min-reduction in registers and shuffles, offered
// with one atomicMin as in the flat version. The round's pointer jumping
// (one kernel, a host synchronization and a copy per step in the other
// versions) is one kernel in which every component follows its pointers to
// the root of its tree of choices (the trees are acyclic but for the pairs
// that chose the same edge, which point to the smaller one): one host
// synchronization per Boruvka round instead of one per jumping step.
//
// MST verify (mstv): every directed edge's verdict is independent: a thread
// per CSR entry (its vertex found by a binary search in the row offsets),
// so consecutive threads store consecutive verdicts.
#pragma once

#include <cuda_runtime.h>

#include "lb_twc.cuh"

#define LB_MST_BLOCK 256

namespace lb {

#ifdef LB_MST_FIND
struct MinU64 {
  __device__ unsigned long long operator()(unsigned long long a,
                                           unsigned long long b) const {
    return a < b ? a : b;
  }
};

__global__ void __launch_bounds__(LB_MST_BLOCK)
    mstf_twc(const int* row, const int* col, const unsigned int* weight,
             const int* eid, const int* comp, unsigned long long* minkey, int n) {
  const int v = blockIdx.x * LB_MST_BLOCK + threadIdx.x;
  const bool valid = v < n;
  const int b = valid ? row[v] : 0, e = valid ? row[v + 1] : 0;
  const int c = valid ? comp[v] : 0;
  twc<LB_MST_BLOCK, true, unsigned long long>(
      valid, v, c, b, e, MST_NONE,
      [=](int k, int, int cc) -> unsigned long long {
        if (comp[col[k]] == cc) return MST_NONE;  // inside the component
        return ((unsigned long long)weight[k] << 32) | (unsigned int)eid[k];
      },
      MinU64(),
      [=](int, int cc, unsigned long long best) {
        // minkey only decreases: skipping the atomic when lower is safe.
        if (best < minkey[cc]) atomicMin(&minkey[cc], best);
      });
}

// root[c] = the root of c's tree of choices (parent[r] == r); a chain
// longer than n (cyclic choices: wrong minimum edges) sets *bad.
__global__ void mst_roots(const int* parent, int* root, int n, int* bad) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  int r = c;
  for (int steps = 0; parent[r] != r; ++steps) {
    if (steps > n) { *bad = 1; break; }
    r = parent[r];
  }
  root[c] = r;
}

inline void mstf_launch(const int* row, const int* col, const unsigned int* weight,
                        const int* eid, const int* comp, unsigned long long* minkey,
                        int n) {
  mstf_twc<<<(n + LB_MST_BLOCK - 1) / LB_MST_BLOCK, LB_MST_BLOCK>>>(
      row, col, weight, eid, comp, minkey, n);
}
#endif  // LB_MST_FIND

#ifdef LB_MST_VERIFY
__global__ void __launch_bounds__(LB_MST_BLOCK)
    mstv_edges(const int* row, const int* col, const unsigned int* weight,
               const int* eid, const unsigned char* in_forest, const int* tree,
               const int* depth, const int* up, const unsigned long long* upmax,
               int n, int levels, int m, unsigned char* verdict) {
  const int e = blockIdx.x * LB_MST_BLOCK + threadIdx.x;
  if (e >= m) return;
  const int v = upper_bound(row, 0, n + 1, e) - 1;  // row[v] <= e < row[v + 1]
  verdict[e] = mstv_verdict(col, weight, eid, in_forest, tree, depth, up,
                            upmax, n, levels, v, e);
}

inline void mstv_launch(const int* row, const int* col, const unsigned int* weight,
                        const int* eid, const unsigned char* in_forest,
                        const int* tree, const int* depth, const int* up,
                        const unsigned long long* upmax, int n, int levels, int m,
                        unsigned char* verdict) {
  if (m > 0)
    mstv_edges<<<(m + LB_MST_BLOCK - 1) / LB_MST_BLOCK, LB_MST_BLOCK>>>(
        row, col, weight, eid, in_forest, tree, depth, up, upmax, n, levels, m,
        verdict);
}
#endif  // LB_MST_VERIFY

}  // namespace lb
