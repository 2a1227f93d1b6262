// `accumulate` is defined in another translation unit (nvcc -rdc=true): dpopt
// cannot see whether it waits at a barrier, which matters after a return.
__device__ void accumulate(float *block_sum, float v);

__global__ void partial_sums(const float *x, float *sums, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  accumulate(&sums[blockIdx.x], x[i]);
}

__global__ void parent(const float *x, float *sums, const int *len, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp coarsen(2)
  partial_sums<<<(len[k] + 255) / 256, 256>>>(x + k * 8192, sums + k * 32, len[k]);
}
