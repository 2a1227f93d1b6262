// Seed: a 1,024-thread parent block with block-level aggregation, dim3
// configurations and a shared-memory launch on a stream argument.
#include <cuda_runtime.h>

__global__ void visit_child(const int *adj, int begin, int deg, int *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < deg) out[adj[begin + i]] = 1;
}

__global__ void __launch_bounds__(1024) visit_parent(const int *row, const int *adj, int n, int *out) {
  int v = blockIdx.x * 1024 + threadIdx.x;
  if (v >= n) return;
  int deg = row[v + 1] - row[v];
  if (deg == 0) return;
  dim3 grid((deg + 63) / 64);
  dim3 block(64);
#pragma dp consldt(block) threshold(32)
  visit_child<<<grid, block, 0, cudaStreamFireAndForget>>>(adj, row[v], deg, out);
}

int main() {
  visit_parent<<<1, 1024>>>(nullptr, nullptr, 0, nullptr);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
