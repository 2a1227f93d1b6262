// The child kernel: one thread per element of a row, summed into sums[row].
#pragma once

#ifndef ROW_SUMS_BLOCK
#define ROW_SUMS_BLOCK 64
#endif

__global__ void row_sum_child(const int* values, int start, int n, unsigned long long* sum) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  atomicAdd(sum, (unsigned long long)values[start + i]);
}
