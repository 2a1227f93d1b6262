__global__ void child(float *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 1.0f; }
__global__ void child(int *x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = 2; }
__global__ void parent(int *x, const int *sizes) {
  int n = sizes[threadIdx.x];
#pragma dp threshold(32)
  child<<<(n + 31) / 32, 32>>>(x, n);
}
