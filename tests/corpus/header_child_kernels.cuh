// header_child_kernels.cuh - device kernels of header_child.cu, kept in a
// header as libraries do (included with quotes by the program).
#pragma once
#include <cuda_runtime.h>

namespace seg {

// Prefix weights of one segment: out[i] = w * (in[i] + i).
__global__ void weight_segment(const int *in, long long *out, int len, int w) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  out[i] = (long long)w * (in[i] + i);
}

}  // namespace seg
