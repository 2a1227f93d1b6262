// per_thread_malloc.cu - corpus program for dpopt: every parent thread
// allocates a scratch buffer on the device heap (`malloc` for even rows,
// device-side `cudaMalloc` for odd ones) right before it launches a child
// that fills it; a later kernel reduces each buffer and frees it with the
// matching call, as code that hands ownership to a cleanup pass does.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o per_thread_malloc per_thread_malloc.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CU_CHECK(x)                                                               \
  do {                                                                            \
    cudaError_t rc_ = (x);                                                        \
    if (rc_ != cudaSuccess) {                                                     \
      fprintf(stderr, "%s failed: %s (%s:%d)\n", #x, cudaGetErrorString(rc_),     \
              __FILE__, __LINE__);                                                \
      abort();                                                                    \
    }                                                                             \
  } while (0)

__device__ unsigned g_failures;

// Scratch row: scratch[i] = (row + 1) * x[i] - i, for i < len.
__global__ void fill_scratch(int *scratch, const int *x, int row, int len) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  scratch[i] = (row + 1) * x[i] - i;
}

__global__ void expand_rows(const int *x, const int *row_len, int **scratch, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows) return;
  int len = row_len[row];
  int *buf = nullptr;
  if (row % 2 == 0) {
    buf = static_cast<int *>(malloc(len * sizeof(int)));
  } else if (cudaMalloc(reinterpret_cast<void **>(&buf), len * sizeof(int)) != cudaSuccess) {
    buf = nullptr;
  }
  scratch[row] = buf;
  if (buf == nullptr) {
    atomicAdd(&g_failures, 1u);
    return;
  }
#pragma dp threshold(128) coarsen(2)
  fill_scratch<<<(len + 63) / 64, 64>>>(buf, x, row, len);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_failures, 1u);
}

// Runs after expand_rows (and its children): one thread per row.
__global__ void reduce_and_free(int **scratch, const int *row_len, long long *sums, int rows) {
  int row = blockIdx.x * blockDim.x + threadIdx.x;
  if (row >= rows || scratch[row] == nullptr) return;
  long long s = 0;
  for (int i = 0; i < row_len[row]; ++i) s += scratch[row][i] * (long long)(i % 5 + 1);
  sums[row] = s;
  if (row % 2 == 0) free(scratch[row]);
  else cudaFree(scratch[row]);
  scratch[row] = nullptr;
}

int main() {
  const int rows = 4096, xlen = 4096;
  std::vector<int> row_len(rows), x(xlen);
  for (int r = 0; r < rows; ++r) row_len[r] = 1 + ((r % 61 == 0) ? 1000 + (r * 11) % 3000 : (r * 17) % 100);
  for (int i = 0; i < xlen; ++i) x[i] = (i * 31 + 7) % 211 - 105;
  CU_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, 64u << 20));
  CU_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  int *d_x, *d_len;
  int **d_scratch;
  long long *d_sums;
  CU_CHECK(cudaMalloc(&d_x, xlen * sizeof(int)));
  CU_CHECK(cudaMalloc(&d_len, rows * sizeof(int)));
  CU_CHECK(cudaMalloc(&d_scratch, rows * sizeof(int *)));
  CU_CHECK(cudaMalloc(&d_sums, rows * sizeof(long long)));
  CU_CHECK(cudaMemcpy(d_x, x.data(), xlen * sizeof(int), cudaMemcpyHostToDevice));
  CU_CHECK(cudaMemcpy(d_len, row_len.data(), rows * sizeof(int), cudaMemcpyHostToDevice));
  CU_CHECK(cudaMemset(d_sums, 0, rows * sizeof(long long)));

  cudaEvent_t t0, t1;
  CU_CHECK(cudaEventCreate(&t0));
  CU_CHECK(cudaEventCreate(&t1));
  CU_CHECK(cudaEventRecord(t0));
  expand_rows<<<rows / 128, 128>>>(d_x, d_len, d_scratch, rows);
  CU_CHECK(cudaGetLastError());
  reduce_and_free<<<rows / 128, 128>>>(d_scratch, d_len, d_sums, rows);
  CU_CHECK(cudaGetLastError());
  CU_CHECK(cudaEventRecord(t1));
  CU_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CU_CHECK(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<long long> sums(rows);
  CU_CHECK(cudaMemcpy(sums.data(), d_sums, rows * sizeof(long long), cudaMemcpyDeviceToHost));
  unsigned failures = 0;
  CU_CHECK(cudaMemcpyFromSymbol(&failures, g_failures, sizeof failures));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int r = 0; r < rows; ++r) {
    long long ref = 0;
    for (int i = 0; i < row_len[r]; ++i) ref += (long long)((r + 1) * x[i] - i) * (i % 5 + 1);
    if (sums[r] != ref) ok = false;
    h = (h ^ (uint64_t)sums[r]) * 0x100000001b3ull;
  }
  printf("result example=per_thread_malloc input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  CU_CHECK(cudaFree(d_x));
  CU_CHECK(cudaFree(d_len));
  CU_CHECK(cudaFree(d_scratch));
  CU_CHECK(cudaFree(d_sums));
  return (ok && failures == 0) ? 0 : 1;
}
