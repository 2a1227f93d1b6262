// lb_spmv.cuh - the load-balanced flat SpMV (impl=flat-lb of spmv.cu): one
// launch, a thread per row of < 32 nonzeros, a warp per row of 32..255, the
// whole block per row of >= 256 (lb::twc), each row's sum reduced in
// registers and shuffles and stored once (no atomics, no preprocessing of
// the matrix, so nothing outside the timed launch). Integer sums: the
// result is exact in any order.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "lb_twc.cuh"

#define LB_SPMV_BLOCK 256

namespace lb {

__global__ void __launch_bounds__(LB_SPMV_BLOCK)
    spmv_twc(const int* row_ptr, const int* col, const int* val, const int* x,
             int* y, int n) {
  const int r = blockIdx.x * LB_SPMV_BLOCK + threadIdx.x;
  const bool valid = r < n;
  const int b = valid ? row_ptr[r] : 0, e = valid ? row_ptr[r + 1] : 0;
  twc<LB_SPMV_BLOCK, true, int>(
      valid, r, 0, b, e, 0,
      [=](int k, int, int) { return val[k] * __ldg(&x[col[k]]); }, Plus(),
      [=](int row, int, int sum) { y[row] = sum; });
}

inline void spmv_launch(const int* row_ptr, const int* col, const int* val,
                        const int* x, int* y, int n) {
  const int blocks = int((int64_t(n) + LB_SPMV_BLOCK - 1) / LB_SPMV_BLOCK);
  spmv_twc<<<blocks, LB_SPMV_BLOCK>>>(row_ptr, col, val, x, y, n);
}

}  // namespace lb
