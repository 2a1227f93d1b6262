// grid_reduce_blog.cu - corpus program for dpopt: the sum of each segment of
// a ragged int array, each segment reduced by a child grid running the
// reduction of NVIDIA's "Faster Parallel Reductions on Kepler" as the post
// writes it: `warpReduceSum` (a shuffle-down loop) and `blockReduceSum`
// (one partial per warp in `static __shared__` memory, the first warp
// reducing the partials), non-template `__inline__ __device__` helpers, the
// second calling the first; the kernel sums its elements with a grid-stride
// loop, calls `sum = blockReduceSum(sum);` and thread 0 adds the block's sum
// with one atomicAdd (the post's deviceReduceBlockAtomicKernel variant).
// One parent thread per segment launches min(32, ceil(len / 256)) blocks of
// 256 threads; segments hold 0 to 5000 elements.
// Integers: the CPU reference checks every segment exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o grid_reduce_blog grid_reduce_blog.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                     \
  do {                                                                       \
    const cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(EXIT_FAILURE);                                                    \
    }                                                                        \
  } while (0)

#define FULL_MASK 0xffffffff
#define THREADS 256

__device__ unsigned int failed_launches;

__inline__ __device__
int warpReduceSum(int val) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    val += __shfl_down_sync(FULL_MASK, val, offset);
  return val;
}

__inline__ __device__
int blockReduceSum(int val) {
  static __shared__ int shared[32];  // Shared mem for 32 partial sums
  int lane = threadIdx.x % warpSize;
  int wid = threadIdx.x / warpSize;

  val = warpReduceSum(val);  // Each warp performs partial reduction

  if (lane == 0) shared[wid] = val;  // Write reduced value to shared memory

  __syncthreads();  // Wait for all partial reductions

  // read from shared memory only if that warp existed
  val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0;

  if (wid == 0) val = warpReduceSum(val);  // Final reduce within first warp

  return val;
}

__global__ void deviceReduceKernel(int *in, int *out, int N) {
  int sum = 0;
  // reduce multiple elements per thread
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    sum += in[i];
  }
  sum = blockReduceSum(sum);
  if (threadIdx.x == 0)
    atomicAdd(out, sum);
}

__global__ void segment_reduce(int *values, const int *offsets, int segments, int *out) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= segments) return;
  const int begin = offsets[g], len = offsets[g + 1] - begin;
  if (len == 0) return;
  const int blocks = min(32, (len + THREADS - 1) / THREADS);
#pragma dp threshold(128)
  deviceReduceKernel<<<blocks, THREADS>>>(values + begin, out + g, len);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int segments = 5000;
  uint32_t x = 20261208u;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  std::vector<int> offsets(segments + 1, 0);
  for (int g = 0; g < segments; ++g) {
    const uint32_t u = next();
    const int n = (u % 31 == 0) ? 0 : (u % 8 == 0) ? 1000 + (int)(u % 4001) : 1 + (int)(u % 200);
    offsets[g + 1] = offsets[g] + n;
  }
  const int total = offsets[segments];
  std::vector<int> values(total);
  for (int i = 0; i < total; ++i) values[i] = (int)(next() % 200001) - 100000;

  int *d_values, *d_offsets, *d_out;
  CUDA_CHECK(cudaMalloc(&d_values, total * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_out, segments * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_values, values.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0, segments * sizeof(int)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  segment_reduce<<<(segments + 127) / 128, 128>>>(d_values, d_offsets, segments, d_out);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> out(segments);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, segments * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  int bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int g = 0; g < segments; ++g) {
    long long s = 0;
    for (int i = offsets[g]; i < offsets[g + 1]; ++i) s += values[i];
    bad += (long long)out[g] != s;
    h = (h ^ (uint64_t)(uint32_t)out[g]) * 0x100000001b3ull;
  }
  const bool ok = bad == 0;
  printf("result example=grid_reduce_blog input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u segments=%d bad_segments=%d elements=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, segments, bad, total);
  CUDA_CHECK(cudaFree(d_values));
  CUDA_CHECK(cudaFree(d_offsets));
  CUDA_CHECK(cudaFree(d_out));
  return (ok && lost == 0) ? 0 : 1;
}
