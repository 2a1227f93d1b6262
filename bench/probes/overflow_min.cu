// overflow_min.cu - the smallest program that overflows the device runtime's pending-launch limit: NP parent
// threads each launch one small child; a launch past the limit fails. Used to tell whether the intermittent
// hangs of overflowing programs come from generated code or from the device runtime itself.
//   ./overflow_min NP BLOCK LIMIT STREAM FALLBACK
//   STREAM: 0 fire-and-forget, 1 NULL stream, 2 a stream created by the thread (non-blocking)
//   FALLBACK: 0 ignore a failed launch, 1 do the child's work serially in the parent thread, 2 as 1 and never
//   ask the runtime for a launch past BUDGET unfinished launches of its own (default: 3/4 of LIMIT)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -lineinfo -o overflow_min overflow_min.cu -lcudadevrt
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

__device__ unsigned g_failed = 0;
// FALLBACK 2: the program's own count of its unfinished launches, in units of 1/2^20 launch: a launch adds 2^20,
// each of its blocks subtracts its share when it ends (block 0 also the rounding remainder), so a launch that would
// pass the budget is not asked of the device runtime at all.
__device__ unsigned long long g_inflight = 0;
#define ONE_LAUNCH (1ull << 20)

__global__ void child(int *out, int off, int n, int p, int counted) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[off + i] = p * 7 + i;
  if (counted) {
    __syncthreads();
    if (threadIdx.x == 0) {
      unsigned long long share = ONE_LAUNCH / gridDim.x;
      if (blockIdx.x == 0) share += ONE_LAUNCH - share * gridDim.x;
      atomicAdd(&g_inflight, 0ull - share);
    }
  }
}

__global__ void parent(int *out, int np, int stream_kind, int fallback, unsigned long long budget) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np) return;
  int n = 32 + (p * 37) % 256;
  int off = p * 288;
  cudaStream_t s = cudaStreamFireAndForget;
  if (stream_kind == 1) s = 0;
  if (stream_kind == 2) cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaError_t e = cudaSuccess;
  if (fallback == 2 && atomicAdd(&g_inflight, ONE_LAUNCH) >= budget * ONE_LAUNCH) {
    atomicAdd(&g_inflight, 0ull - ONE_LAUNCH);
    e = cudaErrorLaunchPendingCountExceeded;  // not asked: the budget is spent
  } else {
    child<<<(n + 63) / 64, 64, 0, s>>>(out, off, n, p, fallback == 2);
    e = cudaGetLastError();
    if (e != cudaSuccess && fallback == 2) atomicAdd(&g_inflight, 0ull - ONE_LAUNCH);
  }
  if (stream_kind == 2) cudaStreamDestroy(s);
  if (e != cudaSuccess) {
    atomicAdd(&g_failed, 1u);
    if (fallback)
      for (int i = 0; i < n; ++i) out[off + i] = p * 7 + i;
  }
}

int main(int argc, char **argv) {
  int np = argc > 1 ? atoi(argv[1]) : 40000;
  int block = argc > 2 ? atoi(argv[2]) : 128;
  int limit = argc > 3 ? atoi(argv[3]) : 2048;
  int stream_kind = argc > 4 ? atoi(argv[4]) : 0;
  int fallback = argc > 5 ? atoi(argv[5]) : 1;
  unsigned long long budget = argc > 6 ? atoll(argv[6]) : (unsigned long long)limit * 3 / 4;
  if (cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, limit) != cudaSuccess) return 2;
  int *d;
  cudaMalloc(&d, (size_t)np * 288 * sizeof(int));
  cudaMemset(d, 0xff, (size_t)np * 288 * sizeof(int));
  cudaEvent_t t0, t1;
  cudaEventCreate(&t0);
  cudaEventCreate(&t1);
  cudaDeviceSynchronize();
  cudaEventRecord(t0);
  parent<<<(np + block - 1) / block, block>>>(d, np, stream_kind, fallback, budget);
  cudaEventRecord(t1);
  cudaError_t e = cudaDeviceSynchronize();
  float ms = 0.f;
  cudaEventElapsedTime(&ms, t0, t1);
  unsigned failed = 0;
  cudaMemcpyFromSymbol(&failed, g_failed, sizeof failed);
  std::vector<int> h((size_t)np * 288);
  cudaMemcpy(h.data(), d, h.size() * sizeof(int), cudaMemcpyDeviceToHost);
  long wrong = 0;
  for (int p = 0; p < np; ++p) {
    int n = 32 + (p * 37) % 256;
    for (int i = 0; i < n; ++i) if (h[(size_t)p * 288 + i] != p * 7 + i) ++wrong;
  }
  std::printf("result np=%d block=%d limit=%d stream=%d fallback=%d time_ms=%.3f err=%s failed=%u wrong=%ld verified=%s\n",
              np, block, limit, stream_kind, fallback, ms, cudaGetErrorName(e), failed, wrong,
              (wrong == 0 || !fallback) ? "yes" : "no");
  return 0;
}
