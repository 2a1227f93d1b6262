// Seed: several sites in one parent, a host-device helper, a launch inside
// a loop, an explicit stream created on the device.
#include <cuda_runtime.h>

__host__ __device__ inline int ceil_div(int a, int b) { return (a + b - 1) / b; }

__global__ void inc_child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}

__global__ void dec_child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] -= 1;
}

__global__ void multi_parent(int *a, const int *n, int np, int rounds) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np) return;
  cudaStream_t s;
  cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  for (int r = 0; r < rounds; ++r) {
#pragma dp threshold(32) coarsen(2)
    inc_child<<<ceil_div(n[p], 32), 32, 0, s>>>(a + p * 256, n[p]);
  }
#pragma dp coarsen(4)
  dec_child<<<dim3(ceil_div(n[p], 64)), dim3(64)>>>(a + p * 256, n[p]);
  cudaStreamDestroy(s);
}

int main() {
  multi_parent<<<1, 32>>>(nullptr, nullptr, 0, 1);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
