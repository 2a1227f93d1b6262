#define NUM_THREADS_PER_BLOCK 256
constexpr int kSmallBlocks = 1;
__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}
__global__ void parent(int *a, int n, cudaStream_t s) {
#pragma dp threshold(64)
  child<<<kSmallBlocks, 1, 0, s>>>(a, n);
#pragma dp threshold(64)
  child<<<4, NUM_THREADS_PER_BLOCK>>>(a, n);
#pragma dp threshold(64)
  child<<<gridDim.x, blockDim.x>>>(a, n);
  dim3 grid(8), block(32);
#pragma dp threshold(64)
  child<<<grid, block>>>(a, n);
}
