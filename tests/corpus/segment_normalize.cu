// segment_normalize.cu - corpus program for dpopt: per-segment max-shift and
// scaling of a ragged array, in the style of a hand-written softmax
// preprocessing pass. One parent thread per segment launches a grid of
// 128-thread blocks over its segment; each block finds its tile's maximum
// with a shared-memory tree (barriers in a loop), then writes every element
// minus that maximum, scaled. The child declares several variables in one
// statement, some of which live across the barriers (the thread's element,
// its output pointer), as such code often does.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o segment_normalize segment_normalize.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_TRY(expr)                                                        \
  do {                                                                        \
    cudaError_t status_ = (expr);                                             \
    if (status_ != cudaSuccess) {                                             \
      fprintf(stderr, "%s failed: %s\n", #expr, cudaGetErrorString(status_)); \
      exit(1);                                                                \
    }                                                                         \
  } while (0)

#define TILE 128

__device__ unsigned int g_lost_launches;

__global__ void normalize_tiles(const int *in, int *out, int len, int scale) {
  __shared__ int tile_max[TILE];
  int tid = threadIdx.x, gid = blockIdx.x * TILE + tid, x = gid < len ? in[gid] : -(1 << 30),
      *dst = out + gid;
  tile_max[tid] = x;
  __syncthreads();
  for (int stride = TILE / 2; stride > 0; stride >>= 1) {
    if (tid < stride && tile_max[tid + stride] > tile_max[tid]) tile_max[tid] = tile_max[tid + stride];
    __syncthreads();
  }
  if (gid < len) *dst = (x - tile_max[0]) * scale;
}

__global__ void normalize_segments(const int *data, int *result, const int *offsets, int segments,
                                   int scale) {
  int seg = blockIdx.x * blockDim.x + threadIdx.x;
  if (seg >= segments) return;
  int first = offsets[seg], len = offsets[seg + 1] - first;
  if (len == 0) return;
#pragma dp threshold(128) coarsen(8)
  normalize_tiles<<<(len + TILE - 1) / TILE, TILE>>>(data + first, result + first, len, scale);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_lost_launches, 1u);
}

int main() {
  const int segments = 3000, scale = 3;
  std::vector<int> offsets(segments + 1, 0);
  uint32_t state = 77u;
  for (int s = 0; s < segments; ++s) {
    state = state * 1103515245u + 12345u;
    // mostly short segments, one in eight long
    const int len = (state >> 8) % 8 == 0 ? 200 + (int)((state >> 12) % 900) : (int)((state >> 12) % 90);
    offsets[s + 1] = offsets[s] + len;
  }
  const int n = offsets[segments];
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) {
    state = state * 1103515245u + 12345u;
    data[i] = (int)((state >> 10) % 2001) - 1000;
  }
  int *d_data, *d_result, *d_offsets;
  CUDA_TRY(cudaMalloc(&d_data, n * sizeof(int)));
  CUDA_TRY(cudaMalloc(&d_result, n * sizeof(int)));
  CUDA_TRY(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CUDA_TRY(cudaMemcpy(d_data, data.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_TRY(cudaMemset(d_result, 0, n * sizeof(int)));
  CUDA_TRY(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

  cudaEvent_t t0, t1;
  CUDA_TRY(cudaEventCreate(&t0));
  CUDA_TRY(cudaEventCreate(&t1));
  CUDA_TRY(cudaEventRecord(t0));
  normalize_segments<<<(segments + 255) / 256, 256>>>(d_data, d_result, d_offsets, segments, scale);
  CUDA_TRY(cudaGetLastError());
  CUDA_TRY(cudaEventRecord(t1));
  CUDA_TRY(cudaDeviceSynchronize());
  float ms = 0;
  CUDA_TRY(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<int> result(n);
  CUDA_TRY(cudaMemcpy(result.data(), d_result, n * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned int lost = 0;
  CUDA_TRY(cudaMemcpyFromSymbol(&lost, g_lost_launches, sizeof(lost)));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int s = 0; s < segments; ++s) {
    for (int t = offsets[s]; t < offsets[s + 1]; t += TILE) {
      const int end = t + TILE < offsets[s + 1] ? t + TILE : offsets[s + 1];
      int m = data[t];
      for (int i = t; i < end; ++i) m = data[i] > m ? data[i] : m;
      for (int i = t; i < end; ++i) ok = ok && result[i] == (data[i] - m) * scale;
    }
  }
  for (int i = 0; i < n; ++i) h = (h ^ (uint32_t)result[i]) * 0x100000001b3ull;
  printf("result example=segment_normalize input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u elements=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, n);
  CUDA_TRY(cudaFree(d_data));
  CUDA_TRY(cudaFree(d_result));
  CUDA_TRY(cudaFree(d_offsets));
  return (ok && lost == 0) ? 0 : 1;
}
