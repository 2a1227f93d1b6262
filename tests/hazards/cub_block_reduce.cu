// A CUB block reduction: __syncthreads and shared TempStorage inside CUB.
#include <cub/block/block_reduce.cuh>

__global__ void block_sum(const int *in, int *out, int n) {
  typedef cub::BlockReduce<int, 128> BlockReduceT;
  __shared__ typename BlockReduceT::TempStorage temp_storage;
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = i < n ? in[i] : 0;
  int total = BlockReduceT(temp_storage).Sum(v);
  if (threadIdx.x == 0) atomicAdd(out, total);
}

__global__ void parent(const int *in, int *out, const int *len, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp consldt(warp) blocks(16)
  block_sum<<<(len[k] + 127) / 128, 128>>>(in + k * 4096, out + k, len[k]);
}
