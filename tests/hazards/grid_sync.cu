// Grid-wide synchronization can be neither serialized nor coarsened.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void two_phase(float *x, float *y, int n) {
  cg::grid_group grid = cg::this_grid();
  int i = grid.thread_rank();
  if (i < n) y[i] = x[i] * x[i];
  grid.sync();
  if (i < n && i + 1 < n) x[i] = y[i] + y[i + 1];
}

__global__ void launcher(float *x, float *y, const int *sizes, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp threshold(32) coarsen(2)
  two_phase<<<(sizes[k] + 255) / 256, 256>>>(x, y, sizes[k]);
}
