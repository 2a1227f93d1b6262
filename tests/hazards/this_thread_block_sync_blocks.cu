// `this_thread_block().sync()` written inline: with `blocks(N)` one
// aggregated block runs several original blocks one after the other.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void smooth(float *data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  float left = (i > 0 && i < n) ? data[i - 1] : 0.0f;
  cg::this_thread_block().sync();
  if (i < n) data[i] = 0.5f * (data[i] + left);
}

__global__ void segments(float *data, const int *start, int nseg) {
  int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nseg) return;
  int n = start[s + 1] - start[s];
#pragma dp consldt(warp) blocks(8)
  smooth<<<(n + 63) / 64, 64>>>(data + start[s], n);
}
