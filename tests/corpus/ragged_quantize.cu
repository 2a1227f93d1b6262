// ragged_quantize.cu - corpus program for dpopt: per-row symmetric int8
// quantization of a ragged batch of int16 activations (rows of different
// lengths, as an inference server batches sequences of different lengths).
// One parent thread per row launches one block over its row, sized to the
// row (32 to 256 threads, a power of two). The block finds the row's largest
// magnitude, scales every element to int8, and adds up the quantized values
// and their non-zero count for the dequantization's correction terms.
// Written as such code is: the block reductions live in two small helpers
// in shared memory, the sum one called twice; every function names its
// thread `tid`, the helpers' result variable is `result` in both, and the
// kernel's `v` is passed to the helpers' parameter `v`.
// Integer arithmetic throughout: the CPU reference checks every element and
// every row's scale and sums exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o ragged_quantize ragged_quantize.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
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

#define ROW_THREADS 256

__device__ unsigned int failed_launches;

// Largest value over the block; `red` holds blockDim.x ints.
__device__ int block_max(int *red, int v) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) red[tid] = max(red[tid], red[tid + stride]);
    __syncthreads();
  }
  int result = red[0];
  __syncthreads();  // `red` is reused by the next reduction
  return result;
}

// Sum over the block; `red` holds blockDim.x ints.
__device__ int block_sum(int *red, int v) {
  const int tid = threadIdx.x;
  red[tid] = v;
  __syncthreads();
  for (int stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) red[tid] += red[tid + stride];
    __syncthreads();
  }
  int result = red[0];
  __syncthreads();
  return result;
}

__global__ void __launch_bounds__(ROW_THREADS)
quantize_row(const short *x, signed char *q, int len, int *scale_out, int *stats_out) {
  __shared__ int red[ROW_THREADS];
  const int tid = threadIdx.x;
  int v = 0;
  for (int i = tid; i < len; i += blockDim.x) v = max(v, abs((int)x[i]));
  int amax = block_max(red, v);
  const int scale = amax > 0 ? amax : 1;
  v = 0;
  int nonzero = 0;
  for (int i = tid; i < len; i += blockDim.x) {
    const int qi = ((int)x[i] * 127) / scale;
    q[i] = (signed char)qi;
    v += qi;
    nonzero += qi != 0;
  }
  int qsum = block_sum(red, v);
  int qnonzero = block_sum(red, nonzero);
  if (tid == 0) {
    *scale_out = scale;
    stats_out[0] = qsum;
    stats_out[1] = qnonzero;
  }
}

__global__ void quantize_batch(const short *x, const int *row_start, int rows, signed char *q,
                               int *scales, int *stats) {
  const int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  const int begin = row_start[row];
  const int len = row_start[row + 1] - begin;
  if (len == 0) {
    scales[row] = 1;
    stats[2 * row] = stats[2 * row + 1] = 0;
    return;
  }
  int threads = 32;
  while (threads < len && threads < ROW_THREADS) threads <<= 1;
#pragma dp threshold(128)
  quantize_row<<<1, threads>>>(x + begin, q + begin, len, scales + row, stats + 2 * row);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int rows = 6000;
  std::vector<int> row_start(rows + 1, 0);
  uint32_t s = 20261201u;
  auto next = [&s]() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  for (int r = 0; r < rows; ++r) {
    const uint32_t u = next();
    // mostly short prompts, a few long documents, some empty rows
    const int len = (u % 97 == 0) ? 0 : (u % 16 == 0) ? 1000 + (int)(u % 7000) : 1 + (int)(u % 200);
    row_start[r + 1] = row_start[r] + len;
  }
  const int n = row_start[rows];
  std::vector<short> x(n);
  for (int i = 0; i < n; ++i) x[i] = (short)((int)(next() % 60001) - 30000);

  short *d_x;
  signed char *d_q;
  int *d_start, *d_scales, *d_stats;
  CUDA_CHECK(cudaMalloc(&d_x, n * sizeof(short)));
  CUDA_CHECK(cudaMalloc(&d_q, n));
  CUDA_CHECK(cudaMalloc(&d_start, (rows + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_scales, rows * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_stats, 2 * rows * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(short), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_start, row_start.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_q, 0x7f, n));
  CUDA_CHECK(cudaMemset(d_scales, 0, rows * sizeof(int)));
  CUDA_CHECK(cudaMemset(d_stats, 0, 2 * rows * sizeof(int)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  quantize_batch<<<(rows + 255) / 256, 256>>>(d_x, d_start, rows, d_q, d_scales, d_stats);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<signed char> q(n);
  std::vector<int> scales(rows), stats(2 * rows);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(q.data(), d_q, n, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(scales.data(), d_scales, rows * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(stats.data(), d_stats, 2 * rows * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));

  bool ok = true;
  int bad_rows = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int r = 0; r < rows; ++r) {
    int amax = 0;
    for (int i = row_start[r]; i < row_start[r + 1]; ++i) amax = std::max(amax, std::abs((int)x[i]));
    const int scale = amax > 0 ? amax : 1;
    int qsum = 0, qnonzero = 0;
    bool row_ok = true;
    for (int i = row_start[r]; i < row_start[r + 1]; ++i) {
      const int qi = ((int)x[i] * 127) / scale;
      qsum += qi;
      qnonzero += qi != 0;
      row_ok = row_ok && q[i] == (signed char)qi;
      h = (h ^ (uint64_t)(uint8_t)q[i]) * 0x100000001b3ull;
    }
    row_ok = row_ok && scales[r] == scale && stats[2 * r] == qsum && stats[2 * r + 1] == qnonzero;
    h = (h ^ (uint64_t)(uint32_t)scales[r]) * 0x100000001b3ull;
    h = (h ^ (uint64_t)(uint32_t)stats[2 * r]) * 0x100000001b3ull;
    h = (h ^ (uint64_t)(uint32_t)stats[2 * r + 1]) * 0x100000001b3ull;
    if (!row_ok) ++bad_rows;
    ok = ok && row_ok;
  }
  printf("result example=ragged_quantize input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u rows=%d bad_rows=%d elements=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, rows, bad_rows, n);
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaFree(d_q));
  CUDA_CHECK(cudaFree(d_start));
  CUDA_CHECK(cudaFree(d_scales));
  CUDA_CHECK(cudaFree(d_stats));
  return (ok && lost == 0) ? 0 : 1;
}
