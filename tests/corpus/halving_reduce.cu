// halving_reduce.cu - corpus program for dpopt: the recursive in-place
// reduction of "Professional CUDA C Programming" (chapter 3, nestedReduce2.cu),
// written for CDP2: each block halves its slice, waits at a barrier, and
// thread 0 launches a one-block grid of half as many threads on the first
// half, down to two elements. 1,024 blocks of 512 threads each start a chain
// of eight launches, so that a thresholded, coarsened or aggregated version
// passes the pending-launch limit and takes its fallbacks, several levels
// deep in one thread.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o halving_reduce halving_reduce.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                   \
  do {                                                                \
    const cudaError_t e_ = (call);                                    \
    if (e_ != cudaSuccess) {                                          \
      printf("CUDA failure %s:%d '%s'\n", __FILE__, __LINE__,         \
             cudaGetErrorString(e_));                                 \
      exit(EXIT_FAILURE);                                             \
    }                                                                 \
  } while (0)

__device__ unsigned int g_failed_launches;

__global__ void gpuRecursiveReduce(int *g_idata, int *g_odata, unsigned int isize) {
  // set thread ID
  unsigned int tid = threadIdx.x;

  // convert global data pointer to the local pointer of this block
  int *idata = g_idata + blockIdx.x * blockDim.x;
  int *odata = &g_odata[blockIdx.x];

  // stop condition
  if (isize == 2) {
    if (tid == 0) g_odata[blockIdx.x] = idata[0] + idata[1];
    return;
  }

  // nested invocation
  int istride = isize >> 1;
  if (tid < istride) idata[tid] += idata[tid + istride];

  // sync at block level: the child reads what the whole block wrote
  __syncthreads();

  if (tid == 0) {
#pragma dp threshold(128) coarsen(8) consldt(warp)
    gpuRecursiveReduce<<<1, istride>>>(idata, odata, istride);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_failed_launches, 1u);
  }
}

int main() {
  const int blocks = 1024, block = 512, n = blocks * block;
  std::vector<int> h_idata(n);
  uint32_t state = 2024u;
  for (int i = 0; i < n; ++i) {
    state = state * 1664525u + 1013904223u;
    h_idata[i] = (int)((state >> 12) & 0xff);
  }
  int *d_idata, *d_odata;
  CHECK(cudaMalloc(&d_idata, n * sizeof(int)));
  CHECK(cudaMalloc(&d_odata, blocks * sizeof(int)));
  CHECK(cudaMemcpy(d_idata, h_idata.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_odata, 0, blocks * sizeof(int)));

  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  CHECK(cudaEventRecord(begin));
  gpuRecursiveReduce<<<blocks, block>>>(d_idata, d_odata, block);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(end));
  CHECK(cudaDeviceSynchronize());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, begin, end));

  std::vector<int> h_odata(blocks);
  CHECK(cudaMemcpy(h_odata.data(), d_odata, blocks * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned int failed = 0;
  CHECK(cudaMemcpyFromSymbol(&failed, g_failed_launches, sizeof(failed)));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  long long total = 0;
  for (int b = 0; b < blocks; ++b) {
    int ref = 0;
    for (int i = 0; i < block; ++i) ref += h_idata[b * block + i];
    ok = ok && h_odata[b] == ref;
    total += h_odata[b];
    h = (h ^ (uint32_t)h_odata[b]) * 0x100000001b3ull;
  }
  printf("result example=halving_reduce input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u sum=%lld\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failed, total);
  CHECK(cudaFree(d_idata));
  CHECK(cudaFree(d_odata));
  return (ok && failed == 0) ? 0 : 1;
}
