// Seed: two definitions of the parent under #ifdef / #else, a pragma in each
// branch, and a pragma-free kernel in an #if 0 block.
#include <cuda_runtime.h>

#define BLOCK 128

__global__ void add_child(int *a, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += v;
}

#ifdef USE_WIDE_CHILD
__global__ void add_parent(int *a, const int *n, int np) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < np && n[p] > 0) {
#pragma dp threshold(256) coarsen(4)
    add_child<<<(n[p] + 255) / 256, 256>>>(a + p * 1024, n[p], p);
  }
}
#else
__global__ void add_parent(int *a, const int *n, int np) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p < np && n[p] > 0) {
#pragma dp threshold(BLOCK) coarsen(2)
    add_child<<<(n[p] + BLOCK - 1) / BLOCK, BLOCK>>>(a + p * 1024, n[p], p);
  }
}
#endif

#if 0
__global__ void unused_parent(int *a) {
  add_child<<<1, 1>>>(a, 1, 0);
}
#endif

int main() {
  add_parent<<<1, 32>>>(nullptr, nullptr, 0);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
