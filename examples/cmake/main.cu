// Sums of the rows of a sparse matrix (CSR): each parent thread owns a row
// and launches a child grid over its elements. Short rows run serially in
// the parent thread (threshold), long ones in coarsened child grids.
#include <cstdio>
#include <vector>

#include "row_sums.cuh"

__global__ void row_sums(const int* offsets, const int* values, int rows, unsigned long long* sums) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  int start = offsets[row];
  int n = offsets[row + 1] - start;
  if (n > 0) {
#pragma dp threshold(128) coarsen(4)
    row_sum_child<<<(n + ROW_SUMS_BLOCK - 1) / ROW_SUMS_BLOCK, ROW_SUMS_BLOCK>>>(values, start, n, &sums[row]);
  }
}

int main() {
  const int rows = 4096;
  std::vector<int> offsets(rows + 1, 0);
  for (int r = 0; r < rows; ++r) offsets[r + 1] = offsets[r] + (r % 64 == 0 ? 2000 : r % 17);
  std::vector<int> values(offsets[rows]);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int(i % 7) + 1;
  std::vector<unsigned long long> expected(rows, 0);
  for (int r = 0; r < rows; ++r)
    for (int i = offsets[r]; i < offsets[r + 1]; ++i) expected[r] += values[i];

  int *d_offsets, *d_values;
  unsigned long long* d_sums;
  cudaMalloc(&d_offsets, offsets.size() * sizeof(int));
  cudaMalloc(&d_values, values.size() * sizeof(int));
  cudaMalloc(&d_sums, rows * sizeof(unsigned long long));
  cudaMemcpy(d_offsets, offsets.data(), offsets.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemcpy(d_values, values.data(), values.size() * sizeof(int), cudaMemcpyHostToDevice);
  cudaMemset(d_sums, 0, rows * sizeof(unsigned long long));
  row_sums<<<(rows + 127) / 128, 128>>>(d_offsets, d_values, rows, d_sums);
  cudaError_t err = cudaDeviceSynchronize();
  std::vector<unsigned long long> sums(rows);
  cudaMemcpy(sums.data(), d_sums, rows * sizeof(unsigned long long), cudaMemcpyDeviceToHost);
  bool ok = err == cudaSuccess && sums == expected;
  printf("result example=row_sums impl=cmake verified=%s error=%s\n", ok ? "yes" : "no", cudaGetErrorString(err));
  return ok ? 0 : 1;
}
