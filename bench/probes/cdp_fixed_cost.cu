// Is there a fixed per-grid cost for a kernel that *can* launch children?
// (issue 4: thresholded BFS/SSSP trail the flat code on the road-like grid by
// ~4 us per level although every child is serialized.)
//
// Each kernel scans N vertices like one BFS level on the road grid: almost
// every thread reads its level and exits. The variants differ only in code
// that never runs (the branch is false at run time):
//   flat      nothing else
//   launch    a device launch of a child (NULL stream)
//   launchff  the same into cudaStreamFireAndForget
//   peek      only cudaPeekAtLastError() (a device-runtime call, no launch)
//   noinline  the launch inside a __noinline__ device function
// Each is timed over R back-to-back launches (throughput) and over R launches
// each followed by cudaStreamSynchronize (latency, as in the BFS host loop).
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o cdp_fixed_cost cdp_fixed_cost.cu -lcudadevrt
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>

#define CK(call)                                                                   \
  do {                                                                             \
    cudaError_t e_ = (call);                                                       \
    if (e_ != cudaSuccess) {                                                       \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                \
    }                                                                              \
  } while (0)

__global__ void child(int *out, int v) { out[v] += threadIdx.x; }

__global__ void k_flat(const int *level, int *out, int n, int cur, int never) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  out[v] = cur + 1;
}

__global__ void k_launch(const int *level, int *out, int n, int cur, int never) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  if (v == never) child<<<1, 32>>>(out, v);
  out[v] = cur + 1;
}

__global__ void k_launchff(const int *level, int *out, int n, int cur, int never) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  if (v == never) child<<<1, 32, 0, cudaStreamFireAndForget>>>(out, v);
  out[v] = cur + 1;
}

__global__ void k_peek(const int *level, int *out, int n, int cur, int never) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  if (v == never && cudaPeekAtLastError() != cudaSuccess) out[v] = -1;
  out[v] = cur + 1;
}

__device__ __noinline__ void launch_it(int *out, int v) {
  child<<<1, 32, 0, cudaStreamFireAndForget>>>(out, v);
}

__global__ void k_noinline(const int *level, int *out, int n, int cur, int never) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  if (v == never) launch_it(out, v);
  out[v] = cur + 1;
}

typedef void (*kernel_t)(const int *, int *, int, int, int);

int main(int argc, char **argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 512 * 512;
  const int reps = argc > 2 ? std::atoi(argv[2]) : 2000;
  int *level, *out;
  CK(cudaMalloc(&level, n * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  // A sparse frontier: one vertex in 512 is at the current level (like a
  // road-grid BFS wavefront).
  int *h = (int *)std::malloc(n * sizeof(int));
  for (int i = 0; i < n; ++i) h[i] = (i % 512 == 0) ? 0 : 1000000;
  CK(cudaMemcpy(level, h, n * sizeof(int), cudaMemcpyHostToDevice));
  const struct { const char *name; kernel_t k; } ks[] = {
      {"flat", k_flat}, {"launch", k_launch}, {"launchff", k_launchff},
      {"peek", k_peek}, {"noinline", k_noinline}};
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  const int block = 256, grid = (n + block - 1) / block;
  for (int round = 0; round < 2; ++round) {  // round 0 warms up
    for (const auto &k : ks) {
      float back = 0, synced = 0;
      CK(cudaEventRecord(a));
      for (int r = 0; r < reps; ++r) k.k<<<grid, block>>>(level, out, n, 0, -1);
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      CK(cudaEventElapsedTime(&back, a, b));
      CK(cudaEventRecord(a));
      for (int r = 0; r < reps; ++r) {
        k.k<<<grid, block>>>(level, out, n, 0, -1);
        CK(cudaStreamSynchronize(0));
      }
      CK(cudaEventRecord(b));
      CK(cudaEventSynchronize(b));
      CK(cudaEventElapsedTime(&synced, a, b));
      CK(cudaGetLastError());
      if (round == 1)
        std::printf("kernel=%-9s n=%d back_to_back_us=%.2f synced_us=%.2f\n", k.name, n,
                    1000.0 * back / reps, 1000.0 * synced / reps);
    }
  }
  return 0;
}
