// cg_child.cu - corpus program for dpopt: a segmented sum whose child uses
// cooperative groups: warp tiles (`cg::tiled_partition<32>`) reduce with
// shuffles, and the block synchronizes with `cg::this_thread_block().sync()`
// before the first warp combines the tile sums. Threads past the end of the
// segment take part in the barrier with a zero; the warps other than the
// first leave only after it, so no barrier follows a divergent return.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o cg_child cg_child.cu -lcudadevrt
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CHILD_THREADS 256

#define CHECK_CUDA(expr)                                                                   \
  do {                                                                                     \
    cudaError_t err__ = (expr);                                                            \
    if (err__ != cudaSuccess) {                                                            \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #expr, cudaGetErrorString(err__)); \
      std::exit(1);                                                                        \
    }                                                                                      \
  } while (false)

__device__ unsigned int n_launch_failures;

__global__ void segment_sum(const int *values, int n, unsigned long long *result) {
  __shared__ int tile_sums[CHILD_THREADS / 32];
  cg::thread_block block = cg::this_thread_block();
  cg::thread_block_tile<32> tile = cg::tiled_partition<32>(block);
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  int v = (i < n) ? values[i] : 0;
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) v += tile.shfl_down(v, offset);
  if (tile.thread_rank() == 0) tile_sums[tile.meta_group_rank()] = v;
  cg::this_thread_block().sync();
  if (tile.meta_group_rank() != 0) return;  // after the last barrier
  int s = (tile.thread_rank() < tile.meta_group_size()) ? tile_sums[tile.thread_rank()] : 0;
  for (int offset = tile.size() / 2; offset > 0; offset /= 2) s += tile.shfl_down(s, offset);
  if (tile.thread_rank() == 0) atomicAdd(result, (unsigned long long)(long long)s);
}

__global__ void sum_segments(const int *values, const int *offsets, int segments,
                             unsigned long long *sums) {
  const int seg = blockIdx.x * blockDim.x + threadIdx.x;
  if (seg >= segments) return;
  const int begin = offsets[seg], n = offsets[seg + 1] - begin;
  if (n == 0) return;
#pragma dp consldt(warp)
  segment_sum<<<(n + CHILD_THREADS - 1) / CHILD_THREADS, CHILD_THREADS>>>(values + begin, n, sums + seg);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&n_launch_failures, 1u);
}

int main() {
  const int segments = 3000;
  std::vector<int> offsets(segments + 1, 0);
  for (int s = 0; s < segments; ++s)
    offsets[s + 1] = offsets[s] + ((s % 23 == 0) ? 2000 + (s * 97) % 5000 : (s * 13) % 300);
  const int total = offsets[segments];
  std::vector<int> values(total);
  for (int i = 0; i < total; ++i) values[i] = (int)((i * 2246822519u) >> 22) - 512;

  CHECK_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  int *d_values, *d_offsets;
  unsigned long long *d_sums;
  CHECK_CUDA(cudaMalloc(&d_values, total * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_sums, segments * sizeof(unsigned long long)));
  CHECK_CUDA(cudaMemcpy(d_values, values.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_sums, 0, segments * sizeof(unsigned long long)));

  cudaEvent_t a, b;
  CHECK_CUDA(cudaEventCreate(&a));
  CHECK_CUDA(cudaEventCreate(&b));
  CHECK_CUDA(cudaEventRecord(a));
  sum_segments<<<(segments + 63) / 64, 64>>>(d_values, d_offsets, segments, d_sums);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(b));
  CHECK_CUDA(cudaDeviceSynchronize());
  float ms = 0;
  CHECK_CUDA(cudaEventElapsedTime(&ms, a, b));

  std::vector<unsigned long long> sums(segments);
  CHECK_CUDA(cudaMemcpy(sums.data(), d_sums, segments * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  unsigned int failures = 0;
  CHECK_CUDA(cudaMemcpyFromSymbol(&failures, n_launch_failures, sizeof failures));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int s = 0; s < segments; ++s) {
    long long ref = 0;
    for (int i = offsets[s]; i < offsets[s + 1]; ++i) ref += values[i];
    if ((long long)sums[s] != ref) ok = false;
    h = (h ^ sums[s]) * 0x100000001b3ull;
  }
  std::printf("result example=cg_child input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
              ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  CHECK_CUDA(cudaFree(d_values));
  CHECK_CUDA(cudaFree(d_offsets));
  CHECK_CUDA(cudaFree(d_sums));
  return (ok && failures == 0) ? 0 : 1;
}
