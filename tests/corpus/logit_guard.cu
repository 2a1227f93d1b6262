// logit_guard.cu - corpus program for dpopt: the NaN/Inf guard of a batched
// sampler, in the style of LLM-serving kernels. One parent thread per request
// launches a grid over its slice of the logits (ragged: each request has its
// own vocabulary size); each child block checks its chunk and, where any
// value is not finite, replaces those by the largest finite value of the
// chunk. The block decides with votes outside any construct head: `int error
// = __syncthreads_or(count);` read by `if (!error) return;` and by a barrier
// loop's head, `__syncthreads_count` in an initializer, `if
// (!__syncthreads_and(...)) return;` and a vote in a compound assignment.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o logit_guard logit_guard.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUDA(call)                                                              \
  do {                                                                                \
    cudaError_t e_ = (call);                                                          \
    if (e_ != cudaSuccess) {                                                          \
      std::fprintf(stderr, "CUDA error %s at %s:%d\n", cudaGetErrorString(e_), __FILE__, \
                   __LINE__);                                                         \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

constexpr int kBlockSize = 128;
constexpr int kChunk = 512;  // logits per child block

__device__ unsigned int g_failed_launches;

template <int BLOCK_SIZE>
__global__ void guard_chunk(float *logits, int vocab_size, unsigned int *bad_threads,
                            unsigned int *flags) {
  __shared__ float smax[BLOCK_SIZE];
  const int base = blockIdx.x * kChunk;
  float *ptr = logits + base;
  const int len = min(kChunk, vocab_size - base);
  int count = 0;
  float local_max = -INFINITY;
  for (int i = threadIdx.x; i < len; i += BLOCK_SIZE) {
    const float val = ptr[i];
    const bool anomaly = isnan(val) || isinf(val);
    count += static_cast<int>(anomaly);
    if (!anomaly) local_max = fmaxf(local_max, val);
  }

  // If anything goes wrong in this chunk
  int error = __syncthreads_or(count);
  const unsigned int with_anomaly = __syncthreads_count(count > 0);
  if (threadIdx.x == 0) atomicAdd(bad_threads, with_anomaly);
  if (!error) return;

  // the chunk's largest finite value
  smax[threadIdx.x] = local_max;
  __syncthreads();
  int s;
  for (s = BLOCK_SIZE / 2; error && s > 0; s >>= 1) {
    if (threadIdx.x < s) smax[threadIdx.x] = fmaxf(smax[threadIdx.x], smax[threadIdx.x + s]);
    __syncthreads();
  }
  const float replacement = smax[0];
  unsigned int block_flags = 0;
  block_flags |= static_cast<unsigned int>(__syncthreads_or(isinf(replacement))) << 1;
  if (!__syncthreads_and(replacement > -INFINITY)) {
    if (threadIdx.x == 0) atomicOr(flags, block_flags | 4u);
    return;
  }
  for (int i = threadIdx.x; i < len; i += BLOCK_SIZE) {
    const float val = ptr[i];
    if (isnan(val) || isinf(val)) ptr[i] = replacement;
  }
  if (threadIdx.x == 0) atomicOr(flags, block_flags | 1u);
}

__global__ void guard_batch(float *logits, const int *offsets, int requests,
                            unsigned int *bad_threads, unsigned int *flags) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= requests) return;
  const int vocab = offsets[r + 1] - offsets[r];
  const int chunks = (vocab + kChunk - 1) / kChunk;
  if (chunks == 0) return;
#pragma dp threshold(128) coarsen(8)
  guard_chunk<kBlockSize><<<chunks, kBlockSize>>>(logits + offsets[r], vocab, bad_threads + r,
                                                  flags + r);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_failed_launches, 1u);
}

int main() {
  const int requests = 1500;
  std::vector<int> offsets(requests + 1, 0);
  uint32_t state = 2024u;
  auto next = [&state]() {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  for (int r = 0; r < requests; ++r) {
    // most requests a few chunks, one in ten a large vocabulary
    const int vocab = next() % 10 == 0 ? 20000 + next() % 30000 : 1 + next() % 1500;
    offsets[r + 1] = offsets[r] + vocab;
  }
  const int n = offsets[requests];
  std::vector<float> logits(n);
  for (int i = 0; i < n; ++i) {
    logits[i] = static_cast<float>(static_cast<int>(next() % 20001) - 10000) / 100.0f;
    const uint32_t roll = next() % 4096;
    if (roll == 0) logits[i] = NAN;
    else if (roll == 1) logits[i] = INFINITY;
    else if (roll == 2) logits[i] = -INFINITY;
  }
  float *d_logits;
  int *d_offsets;
  unsigned int *d_bad, *d_flags;
  CHECK_CUDA(cudaMalloc(&d_logits, n * sizeof(float)));
  CHECK_CUDA(cudaMalloc(&d_offsets, (requests + 1) * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_bad, requests * sizeof(unsigned int)));
  CHECK_CUDA(cudaMalloc(&d_flags, requests * sizeof(unsigned int)));
  CHECK_CUDA(cudaMemcpy(d_logits, logits.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_offsets, offsets.data(), (requests + 1) * sizeof(int),
                        cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_bad, 0, requests * sizeof(unsigned int)));
  CHECK_CUDA(cudaMemset(d_flags, 0, requests * sizeof(unsigned int)));
  CHECK_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

  cudaEvent_t t0, t1;
  CHECK_CUDA(cudaEventCreate(&t0));
  CHECK_CUDA(cudaEventCreate(&t1));
  CHECK_CUDA(cudaEventRecord(t0));
  guard_batch<<<(requests + 255) / 256, 256>>>(d_logits, d_offsets, requests, d_bad, d_flags);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(t1));
  CHECK_CUDA(cudaDeviceSynchronize());
  float ms = 0.f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<float> out(n);
  std::vector<unsigned int> bad(requests), flags(requests);
  unsigned int failed = 0;
  CHECK_CUDA(cudaMemcpy(out.data(), d_logits, n * sizeof(float), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(bad.data(), d_bad, requests * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(flags.data(), d_flags, requests * sizeof(unsigned int),
                        cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpyFromSymbol(&failed, g_failed_launches, sizeof(failed)));

  // CPU reference, chunk by chunk, with the block's thread-strided layout
  bool ok = true;
  for (int r = 0; r < requests; ++r) {
    unsigned int want_bad = 0, want_flags = 0;
    for (int base = offsets[r]; base < offsets[r + 1]; base += kChunk) {
      const int len = std::min(kChunk, offsets[r + 1] - base);
      float mx = -INFINITY;
      bool any = false;
      for (int t = 0; t < kBlockSize; ++t) {
        bool thread_bad = false;
        for (int i = t; i < len; i += kBlockSize) {
          const float v = logits[base + i];
          if (std::isnan(v) || std::isinf(v)) thread_bad = true;
          else mx = std::max(mx, v);
        }
        want_bad += thread_bad;
        any = any || thread_bad;
      }
      for (int i = 0; i < len; ++i) {
        const float v = logits[base + i];
        const bool anomaly = std::isnan(v) || std::isinf(v);
        const float want = (any && anomaly && mx > -INFINITY) ? mx : v;
        if (!(out[base + i] == want || (std::isnan(want) && std::isnan(out[base + i])))) ok = false;
      }
      if (any) want_flags |= mx > -INFINITY ? 1u : 6u;  // bit 1: no finite value
    }
    if (bad[r] != want_bad || flags[r] != want_flags) ok = false;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; ++i) {
    uint32_t bits;
    std::memcpy(&bits, &out[i], sizeof(bits));
    h = (h ^ bits) * 0x100000001b3ull;
  }
  for (int r = 0; r < requests; ++r) h = (h ^ (bad[r] * 8u + flags[r])) * 0x100000001b3ull;
  std::printf("result example=logit_guard input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u logits=%d\n",
              ms, ok ? "yes" : "no", static_cast<unsigned long long>(h), failed, n);
  CHECK_CUDA(cudaFree(d_logits));
  CHECK_CUDA(cudaFree(d_offsets));
  CHECK_CUDA(cudaFree(d_bad));
  CHECK_CUDA(cudaFree(d_flags));
  return (ok && failed == 0) ? 0 : 1;
}
