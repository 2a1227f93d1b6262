// segment_moments.cu - corpus program for dpopt: count, sum and sum of
// squares of each segment of a ragged batch of int samples, each segment
// reduced by a child grid whose blocks reduce as NVIDIA's "Faster Parallel
// Reductions on Kepler" does (a grid-stride loop, `warpReduceSum` by
// shuffle-down, one partial per warp in `static __shared__` memory, the
// block's first warp reducing the partials: `if (wid == 0) ...`), with the
// block reduction written in the kernel and the three moments reduced
// together; thread 0 adds the block's results with 64-bit atomics.
// One parent thread per segment launches 1 to 32 blocks of 128 threads.
// Integers: the CPU reference checks every segment exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o segment_moments segment_moments.cu -lcudadevrt
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
#define THREADS 128

__device__ unsigned int failed_launches;

__inline__ __device__
long long warpReduceSum(long long val) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    val += __shfl_down_sync(FULL_MASK, val, offset);
  return val;
}

__global__ void __launch_bounds__(THREADS)
moments_kernel(const int *in, int N, unsigned long long *count, long long *sum, long long *squares) {
  static __shared__ long long shared[3][32];  // partials per warp
  long long c = 0, s = 0, q = 0;
  // reduce multiple elements per thread
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < N; i += blockDim.x * gridDim.x) {
    const long long v = in[i];
    c += 1;
    s += v;
    q += v * v;
  }
  int lane = threadIdx.x % warpSize;
  int wid = threadIdx.x / warpSize;

  c = warpReduceSum(c);  // each warp performs a partial reduction
  s = warpReduceSum(s);
  q = warpReduceSum(q);

  if (lane == 0) {  // write the reduced values to shared memory
    shared[0][wid] = c;
    shared[1][wid] = s;
    shared[2][wid] = q;
  }
  __syncthreads();  // wait for all partial reductions

  // read from shared memory only if that warp existed
  const bool partial = threadIdx.x < blockDim.x / warpSize;
  c = partial ? shared[0][lane] : 0;
  s = partial ? shared[1][lane] : 0;
  q = partial ? shared[2][lane] : 0;

  if (wid == 0) {  // final reduce within the first warp
    c = warpReduceSum(c);
    s = warpReduceSum(s);
    q = warpReduceSum(q);
  }
  if (threadIdx.x == 0) {
    atomicAdd(count, (unsigned long long)c);
    atomicAdd((unsigned long long *)sum, (unsigned long long)s);
    atomicAdd((unsigned long long *)squares, (unsigned long long)q);
  }
}

__global__ void segment_moments(const int *samples, const int *offsets, int segments,
                                unsigned long long *count, long long *sum, long long *squares) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= segments) return;
  const int begin = offsets[g], n = offsets[g + 1] - begin;
  if (n == 0) return;
  const int blocks = min((n + THREADS - 1) / THREADS, 32);
#pragma dp threshold(128)
  moments_kernel<<<blocks, THREADS>>>(samples + begin, n, count + g, sum + g, squares + g);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int segments = 6000;
  uint32_t x = 20261204u;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  std::vector<int> offsets(segments + 1, 0);
  for (int g = 0; g < segments; ++g) {
    const uint32_t u = next();
    const int n = (u % 29 == 0) ? 0 : (u % 10 == 0) ? 300 + (int)(u % 20000) : 1 + (int)(u % 120);
    offsets[g + 1] = offsets[g] + n;
  }
  const int total = offsets[segments];
  std::vector<int> samples(total);
  for (int i = 0; i < total; ++i) samples[i] = (int)(next() % 200001) - 100000;

  int *d_samples, *d_offsets;
  unsigned long long *d_count;
  long long *d_sum, *d_squares;
  CUDA_CHECK(cudaMalloc(&d_samples, total * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_count, segments * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMalloc(&d_sum, segments * sizeof(long long)));
  CUDA_CHECK(cudaMalloc(&d_squares, segments * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(d_samples, samples.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_count, 0, segments * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemset(d_sum, 0, segments * sizeof(long long)));
  CUDA_CHECK(cudaMemset(d_squares, 0, segments * sizeof(long long)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  segment_moments<<<(segments + 127) / 128, 128>>>(d_samples, d_offsets, segments, d_count, d_sum, d_squares);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<unsigned long long> count(segments);
  std::vector<long long> sum(segments), squares(segments);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(count.data(), d_count, segments * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(sum.data(), d_sum, segments * sizeof(long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(squares.data(), d_squares, segments * sizeof(long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  int bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int g = 0; g < segments; ++g) {
    long long s = 0, q = 0;
    for (int i = offsets[g]; i < offsets[g + 1]; ++i) {
      s += samples[i];
      q += (long long)samples[i] * samples[i];
    }
    const unsigned long long c = offsets[g + 1] - offsets[g];
    bad += count[g] != c || sum[g] != s || squares[g] != q;
    h = (h ^ count[g]) * 0x100000001b3ull;
    h = (h ^ (uint64_t)sum[g]) * 0x100000001b3ull;
    h = (h ^ (uint64_t)squares[g]) * 0x100000001b3ull;
  }
  const bool ok = bad == 0;
  printf("result example=segment_moments input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u segments=%d bad_segments=%d samples=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, segments, bad, total);
  CUDA_CHECK(cudaFree(d_samples));
  CUDA_CHECK(cudaFree(d_offsets));
  CUDA_CHECK(cudaFree(d_count));
  CUDA_CHECK(cudaFree(d_sum));
  CUDA_CHECK(cudaFree(d_squares));
  return (ok && lost == 0) ? 0 : 1;
}
