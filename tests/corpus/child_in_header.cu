// child_in_header.cu - corpus program for dpopt: the parent launches a child
// kernel that is defined in a header ("header_child_kernels.cuh"), as code
// that keeps its kernels in a library header does. Segments of varying
// length are weighted by one child grid each.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o child_in_header child_in_header.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "header_child_kernels.cuh"

#define CUDA_RT_CALL(call)                                                     \
  {                                                                            \
    cudaError_t status = call;                                                 \
    if (status != cudaSuccess) {                                               \
      fprintf(stderr, "ERROR: CUDA RT call \"%s\" in line %d of file %s failed with %s (%d).\n", \
              #call, __LINE__, __FILE__, cudaGetErrorString(status), status);  \
      exit(status);                                                            \
    }                                                                          \
  }

static const int kChildThreads = 128;

__device__ unsigned int launch_errors;

__global__ void weight_segments(const int *in, long long *out, const int *seg_begin, int num_segs) {
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < num_segs; s += gridDim.x * blockDim.x) {
    const int begin = seg_begin[s];
    const int len = seg_begin[s + 1] - begin;
    if (len <= 0) continue;
#pragma dp threshold(128) coarsen(2)
    seg::weight_segment<<<(len + kChildThreads - 1) / kChildThreads, kChildThreads>>>(in + begin, out + begin, len, s % 7 + 1);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&launch_errors, 1u);
  }
}

int main() {
  const int num_segs = 5000;
  std::vector<int> seg_begin(num_segs + 1, 0);
  for (int s = 0; s < num_segs; ++s)
    seg_begin[s + 1] = seg_begin[s] + ((s % 40 == 3) ? 1500 + (s * 53) % 2500 : (s * 29) % 64);
  const int total = seg_begin[num_segs];
  std::vector<int> in(total);
  for (int i = 0; i < total; ++i) in[i] = (i * 2654435761u) % 1000;

  CUDA_RT_CALL(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  int *d_in = nullptr, *d_begin = nullptr;
  long long *d_out = nullptr;
  CUDA_RT_CALL(cudaMalloc(&d_in, total * sizeof(int)));
  CUDA_RT_CALL(cudaMalloc(&d_out, total * sizeof(long long)));
  CUDA_RT_CALL(cudaMalloc(&d_begin, (num_segs + 1) * sizeof(int)));
  CUDA_RT_CALL(cudaMemcpy(d_in, in.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_RT_CALL(cudaMemcpy(d_begin, seg_begin.data(), (num_segs + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_RT_CALL(cudaMemset(d_out, 0, total * sizeof(long long)));

  cudaEvent_t t0, t1;
  CUDA_RT_CALL(cudaEventCreate(&t0));
  CUDA_RT_CALL(cudaEventCreate(&t1));
  CUDA_RT_CALL(cudaEventRecord(t0));
  weight_segments<<<20, 128>>>(d_in, d_out, d_begin, num_segs);
  CUDA_RT_CALL(cudaGetLastError());
  CUDA_RT_CALL(cudaEventRecord(t1));
  CUDA_RT_CALL(cudaDeviceSynchronize());
  float ms = 0.0f;
  CUDA_RT_CALL(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<long long> out(total);
  CUDA_RT_CALL(cudaMemcpy(out.data(), d_out, total * sizeof(long long), cudaMemcpyDeviceToHost));
  unsigned int errors = 0;
  CUDA_RT_CALL(cudaMemcpyFromSymbol(&errors, launch_errors, sizeof(errors)));
  bool ok = true;
  uint64_t checksum = 1469598103934665603ull;
  for (int s = 0; s < num_segs; ++s)
    for (int i = 0; i < seg_begin[s + 1] - seg_begin[s]; ++i) {
      const int k = seg_begin[s] + i;
      if (out[k] != (long long)(s % 7 + 1) * (in[k] + i)) ok = false;
      checksum = (checksum ^ (uint64_t)out[k]) * 1099511628211ull;
    }
  printf("result example=child_in_header input=default impl=cdp time_ms=%.4f verified=%s checksum=%016" PRIx64 " launch_failures=%u\n",
         ms, ok ? "yes" : "no", checksum, errors);
  CUDA_RT_CALL(cudaFree(d_in));
  CUDA_RT_CALL(cudaFree(d_out));
  CUDA_RT_CALL(cudaFree(d_begin));
  return (ok && errors == 0) ? 0 : 1;
}
