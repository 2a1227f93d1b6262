// Seed: cooperative groups in the parent and the child, warp-level
// aggregation of the launches of a warp.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

namespace cg = cooperative_groups;

__device__ unsigned g_failures;

__global__ void count_child(const int *col, int begin, int deg, int *hits) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < deg && col[begin + i] >= 0) atomicAdd(hits, 1);
}

__global__ void count_parent(const int *row, const int *col, int n, int *hits) {
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> warp = cg::tiled_partition<32>(block);
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  int deg = v < n ? row[v + 1] - row[v] : 0;
  if (warp.any(deg > 0) && deg > 0) {
#pragma dp consldt(warp) work(deg)
    count_child<<<(deg + 31) / 32, 32>>>(col, row[v], deg, hits);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_failures, 1u);
  }
}

int main() {
  count_parent<<<1, 64>>>(nullptr, nullptr, 0, nullptr);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
