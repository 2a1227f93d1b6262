// segment_sums.cu - corpus program for dpopt: per-segment sums with the
// unrolled reduction of NVIDIA's "Optimizing Parallel Reduction in CUDA"
// (kernel 6, as it is copied into many code bases): a templated block size,
// two loads per thread, a shared-memory tree with barriers down to 64, then
// the last warp without barriers through a `volatile` pointer in a templated
// `warpReduce`. One parent thread per segment launches the reduction over its
// segment; each child block adds its partial sum to the segment's total.
// The warp-synchronous tail needs the threads of a warp in lockstep, which a
// serial version (one thread running the others in turn) does not give, so
// dpopt refuses `threshold` here (dpopt::not_serializable); coarsening and
// aggregation keep the blocks whole and apply.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o segment_sums segment_sums.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(x)                                                                \
  do {                                                                               \
    cudaError_t err__ = (x);                                                         \
    if (err__ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err__)); \
      exit(EXIT_FAILURE);                                                            \
    }                                                                                \
  } while (0)

__device__ unsigned int failed_launches;

template <unsigned int blockSize>
__device__ void warpReduce(volatile int *sdata, unsigned int tid) {
  if (blockSize >= 64) sdata[tid] += sdata[tid + 32];
  if (blockSize >= 32) sdata[tid] += sdata[tid + 16];
  if (blockSize >= 16) sdata[tid] += sdata[tid + 8];
  if (blockSize >= 8) sdata[tid] += sdata[tid + 4];
  if (blockSize >= 4) sdata[tid] += sdata[tid + 2];
  if (blockSize >= 2) sdata[tid] += sdata[tid + 1];
}

template <unsigned int blockSize>
__global__ void reduce6(const int *g_idata, long long *g_total, unsigned int n) {
  __shared__ int sdata[blockSize];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockSize * 2) + tid;
  unsigned int gridSize = blockSize * 2 * gridDim.x;
  sdata[tid] = 0;
  while (i < n) {
    sdata[tid] += g_idata[i];
    if (i + blockSize < n) sdata[tid] += g_idata[i + blockSize];
    i += gridSize;
  }
  __syncthreads();
  if (blockSize >= 512) {
    if (tid < 256) sdata[tid] += sdata[tid + 256];
    __syncthreads();
  }
  if (blockSize >= 256) {
    if (tid < 128) sdata[tid] += sdata[tid + 128];
    __syncthreads();
  }
  if (blockSize >= 128) {
    if (tid < 64) sdata[tid] += sdata[tid + 64];
    __syncthreads();
  }
  if (tid < 32) warpReduce<blockSize>(sdata, tid);
  if (tid == 0) atomicAdd((unsigned long long *)g_total, (unsigned long long)(long long)sdata[0]);
}

__global__ void segmentSums(const int *data, const int *offsets, int segments, long long *totals) {
  int seg = blockIdx.x * blockDim.x + threadIdx.x;
  if (seg >= segments) return;
  int first = offsets[seg];
  unsigned int len = offsets[seg + 1] - first;
  if (len == 0) return;
  unsigned int blocks = (len + 2 * 128 - 1) / (2 * 128);
  if (blocks > 64) blocks = 64;
#pragma dp coarsen(4) consldt(block)
  reduce6<128><<<blocks, 128>>>(data + first, totals + seg, len);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int segments = 2500;
  std::vector<int> offsets(segments + 1, 0);
  uint32_t x = 99u;
  for (int s = 0; s < segments; ++s) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    const int len = (x % 12 == 0) ? 2000 + (int)(x % 30000) : (int)(x % 300);
    offsets[s + 1] = offsets[s] + len;
  }
  const int n = offsets[segments];
  std::vector<int> data(n);
  for (int i = 0; i < n; ++i) {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    data[i] = (int)(x % 2001) - 1000;
  }
  int *d_data, *d_offsets;
  long long *d_totals;
  CUDA_CHECK(cudaMalloc(&d_data, n * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_totals, segments * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(d_data, data.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_totals, 0, segments * sizeof(long long)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  segmentSums<<<(segments + 127) / 128, 128>>>(d_data, d_offsets, segments, d_totals);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<long long> totals(segments);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(totals.data(), d_totals, segments * sizeof(long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int s = 0; s < segments; ++s) {
    long long want = 0;
    for (int i = offsets[s]; i < offsets[s + 1]; ++i) want += data[i];
    ok = ok && totals[s] == want;
    h = (h ^ (uint64_t)totals[s]) * 0x100000001b3ull;
  }
  printf("result example=segment_sums input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u elements=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, n);
  CUDA_CHECK(cudaFree(d_data));
  CUDA_CHECK(cudaFree(d_offsets));
  CUDA_CHECK(cudaFree(d_totals));
  return (ok && lost == 0) ? 0 : 1;
}
