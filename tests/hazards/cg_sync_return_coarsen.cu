// An early return and a cooperative-groups barrier: coarsening would leave the returned threads out of the barrier.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void child(float *a, int n) {
  cg::thread_block cta = cg::this_thread_block();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] *= 2.0f;
  cg::sync(cta);
}
__global__ void parent(float *a, int n) {
#pragma dp coarsen(2)
  child<<<(n + 127) / 128, 128>>>(a, n);
}
