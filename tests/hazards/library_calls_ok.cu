// Accepted: the child calls only library functions and a helper defined in
// this file (declared first, defined after the child) without barriers.
#include <cstdio>

__device__ float clamp_weight(float w);

__global__ void weigh(const float *w, float *acc, int *count, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float v = sqrtf(fabsf(w[i])) + __ldg(&w[0]);
  v = clamp_weight(min(v, 8.0f));
  atomicAdd(acc, v);
  if (atomicAdd(count, 1) == 0) printf("first weight %f\n", v);
}

__device__ float clamp_weight(float w) { return fmaxf(w, 0.0f); }

__global__ void parent(const float *w, float *acc, int *count, const int *len, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp threshold(64) coarsen(2)
  weigh<<<(len[k] + 31) / 32, 32>>>(w + k * 512, acc + k, count, len[k]);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(count, 1 << 20);
}
