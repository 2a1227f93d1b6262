// A tile's match_any: fine to coarsen, a warp operation the split does not
// reproduce, so impossible to run serially in one thread.
#include <cooperative_groups.h>
namespace cg = cooperative_groups;

__global__ void row_sum(const float *val, float *sum, int n) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(cta);
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = val[i];
  for (int offset = tile.size() / 2; offset > 0; offset /= 2)
    v += (float)__popc(tile.match_any(__float_as_int(v)));
  if (tile.thread_rank() == 0) atomicAdd(sum, v);
}

__global__ void spmv_rows(const float *val, const int *row, float *y, int nrows) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  int len = row[r + 1] - row[r];
#pragma dp threshold(64)
  row_sum<<<(len + 31) / 32, 32>>>(val + row[r], y + r, len);
}
