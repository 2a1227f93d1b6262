// dpopt-defines: -DUSE_DOUBLE -DBLOCK=128
// ifdef_config.cu - corpus program for dpopt: the precision and the launch
// configuration are chosen by the preprocessor, as in code built in several
// configurations. `USE_DOUBLE` selects the element type and the child kernel
// (two definitions of `axpb_child`, one per branch); `BLOCK` selects the
// child's block size and how the parent computes its grid.
// Build: nvcc -O3 -rdc=true -arch=sm_90 [-DUSE_DOUBLE] [-DBLOCK=128] -o ifdef_config ifdef_config.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#ifndef BLOCK
#define BLOCK 256
#endif

#if BLOCK == 256
#define CHILD_BLOCK 256
#define CHILD_GRID(n) (((n) + 255) >> 8)
#elif BLOCK == 128
#define CHILD_BLOCK 128
#define CHILD_GRID(n) (((n) + 127) / 128)
#else
#error "BLOCK must be 128 or 256"
#endif

#define SAFE_CALL(call)                                                            \
  if ((call) != cudaSuccess) {                                                     \
    fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(call)); \
    exit(1);                                                                       \
  }

__device__ unsigned launch_failures_d;

#ifdef USE_DOUBLE
typedef double real;
#define PRECISION "double"
__global__ void axpb_child(real *y, const real *x, real a, int n, int row) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = a * x[i] + (real)row;
}
#else
typedef float real;
#define PRECISION "float"
__global__ void axpb_child(real *y, const real *x, real a, int n, int row) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  y[i] = a * x[i] + (float)row;
}
#endif

__global__ void axpb_rows(real *y, const real *x, const int *offset, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  int begin = offset[row], n = offset[row + 1] - begin;
  if (n <= 0) return;
  real a = (real)(row % 4) + (real)0.5;
#pragma dp threshold(128)
  axpb_child<<<CHILD_GRID(n), CHILD_BLOCK>>>(y + begin, x + begin, a, n, row);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&launch_failures_d, 1u);
}

int main() {
  const int rows = 2500;
  std::vector<int> offset(rows + 1, 0);
  for (int r = 0; r < rows; ++r) offset[r + 1] = offset[r] + ((r % 19 == 0) ? 700 + (r * 41) % 2200 : (r * 5) % 150);
  const int total = offset[rows];
  std::vector<real> x(total), y(total);
  for (int i = 0; i < total; ++i) x[i] = (real)((i * 13) % 1000) * (real)0.25;  // exact in float

  SAFE_CALL(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  real *d_x, *d_y;
  int *d_offset;
  SAFE_CALL(cudaMalloc(&d_x, total * sizeof(real)));
  SAFE_CALL(cudaMalloc(&d_y, total * sizeof(real)));
  SAFE_CALL(cudaMalloc(&d_offset, (rows + 1) * sizeof(int)));
  SAFE_CALL(cudaMemcpy(d_x, x.data(), total * sizeof(real), cudaMemcpyHostToDevice));
  SAFE_CALL(cudaMemcpy(d_offset, offset.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  SAFE_CALL(cudaMemset(d_y, 0, total * sizeof(real)));

  cudaEvent_t t0, t1;
  SAFE_CALL(cudaEventCreate(&t0));
  SAFE_CALL(cudaEventCreate(&t1));
  SAFE_CALL(cudaEventRecord(t0));
  axpb_rows<<<(rows + BLOCK - 1) / BLOCK, BLOCK>>>(d_y, d_x, d_offset, rows);
  SAFE_CALL(cudaGetLastError());
  SAFE_CALL(cudaEventRecord(t1));
  SAFE_CALL(cudaDeviceSynchronize());
  float ms = 0;
  SAFE_CALL(cudaEventElapsedTime(&ms, t0, t1));

  SAFE_CALL(cudaMemcpy(y.data(), d_y, total * sizeof(real), cudaMemcpyDeviceToHost));
  unsigned failures = 0;
  SAFE_CALL(cudaMemcpyFromSymbol(&failures, launch_failures_d, sizeof failures));
  bool ok = true;
  for (int r = 0; r < rows; ++r) {
    const real a = (real)(r % 4) + (real)0.5;
    for (int i = offset[r]; i < offset[r + 1]; ++i)
      if (y[i] != a * x[i] + (real)r) ok = false;  // every value is exact
  }
  // Checksum over the values as doubles (each configuration names its input).
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < total; ++i) {
    double v = (double)y[i];
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    h = (h ^ bits) * 0x100000001b3ull;
  }
  printf("result example=ifdef_config input=" PRECISION " impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  SAFE_CALL(cudaFree(d_x));
  SAFE_CALL(cudaFree(d_y));
  SAFE_CALL(cudaFree(d_offset));
  return (ok && failures == 0) ? 0 : 1;
}
