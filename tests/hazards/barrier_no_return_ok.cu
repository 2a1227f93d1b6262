// Accepted: a coarsened child may synchronize its block when no thread
// returns early (shared memory, __syncthreads and a cooperative-groups sync).
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void reverse_block(int *a, int n) {
  cg::thread_block cta = cg::this_thread_block();
  __shared__ int s[128];
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  s[threadIdx.x] = i < n ? a[i] : 0;
  __syncthreads();
  int v = s[blockDim.x - 1 - threadIdx.x];
  cg::sync(cta);
  if (i < n) a[i] = v;
}

__global__ void parent(int *a, const int *len, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp coarsen(2)
  reverse_block<<<(len[k] + 127) / 128, 128>>>(a + k * 4096, len[k]);
}
