// lb_sp.cuh - the load-balanced flat survey-propagation variable update
// (impl=flat-lb of sp.cu). Needs SpProducts, sp_var_products and
// sp_edge_message (sp.cu).
//
// The update of a variable is a product over its occurrences (which must be
// computed in occurrence order: the results are compared bit for bit with
// the CPU, and a float product in another order rounds differently) and
// then one message per occurrence, independent of each other. So:
//   sp_products : a thread per variable computes its products (serially, in
//                 order, as every other version) and stores them (16 bytes);
//   sp_messages : a thread per edge (literal) e computes msg[e] from the
//                 products of its variable var[e]: perfectly balanced, and
//                 the reads of neg, eta and the stores of msg are coalesced.
// The clause kernel is the example's (sp_clauses), as in every version.
#pragma once

#include <cuda_runtime.h>

#include "lb_twc.cuh"  // lb::impls_to_run

#define LB_SP_BLOCK 256

namespace lb {

__global__ void sp_products(const int* occ_row, const int* occ_edge,
                            const unsigned char* neg, const float* eta,
                            SpProducts* prod, int nvars) {
  const int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nvars) return;
  const int start = occ_row[v];
  prod[v] = sp_var_products(occ_edge, neg, eta, start, occ_row[v + 1] - start);
}

__global__ void sp_messages(const int* var, const unsigned char* neg,
                            const float* eta, const SpProducts* prod,
                            float* msg, int m) {
  const int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= m) return;
  const SpProducts p = prod[var[e]];
  msg[e] = sp_edge_message(neg[e], eta[e], p.pos, p.neg, p.zpos, p.zneg);
}

inline void sp_vars_launch(const int* occ_row, const int* occ_edge, const int* var,
                           const unsigned char* neg, const float* eta,
                           SpProducts* prod, float* msg, int nvars, int m) {
  sp_products<<<(nvars + LB_SP_BLOCK - 1) / LB_SP_BLOCK, LB_SP_BLOCK>>>(
      occ_row, occ_edge, neg, eta, prod, nvars);
  sp_messages<<<(m + LB_SP_BLOCK - 1) / LB_SP_BLOCK, LB_SP_BLOCK>>>(
      var, neg, eta, prod, msg, m);
}

}  // namespace lb
