// warp_filters.cu - corpus program for dpopt: two warp-level children per
// segment of a ragged batch of float vectors, launched by one parent thread
// per segment.
//  - filter_positive: stream compaction with warp-aggregated atomics (the
//    NVIDIA developer blog's "Optimized Filtering with Warp-Aggregated
//    Atomics", written with __ballot_sync in converged code): a warp with
//    nothing to keep leaves through `__any_sync`, lane 0 reserves the warp's
//    slots with one atomicAdd, `__shfl_sync` broadcasts the base, and each
//    lane's rank is a popcount of the ballot below it.
//  - quantize_groups: int8 quantization with one scale per 16-element group
//    (the group's absolute maximum by an xor butterfly over 16-lane
//    segments, `__shfl_xor_sync(..., 16)`), a per-warp inclusive count of
//    the nonzero codes by a `__shfl_up_sync` scan, the warp's total by
//    `__reduce_add_sync`, and a flag from `__all_sync`, stored after a
//    `__syncwarp()`.
// Segments start at multiples of 64 elements, so the groups and warps of a
// segment's child are the CPU reference's. The compacted values are compared
// as sorted sets (their order depends on the atomics); everything else
// exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o warp_filters warp_filters.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
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

#define FULL_MASK 0xffffffffu
#define BLOCK 64

__device__ unsigned int failed_launches;

__global__ void filter_positive(float *dst, int *nres, const float *src, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x & 31;
  const float v = i < n ? src[i] : 0.0f;
  const bool keep = i < n && v > 0.0f;
  // a warp that keeps nothing is done
  if (!__any_sync(FULL_MASK, keep)) return;
  const unsigned ballot = __ballot_sync(FULL_MASK, keep);
  int base = 0;
  if (lane == 0) base = atomicAdd(nres, __popc(ballot));
  base = __shfl_sync(FULL_MASK, base, 0);
  if (keep) dst[base + __popc(ballot & ((1u << lane) - 1u))] = v;
}

__global__ void quantize_groups(const float *x, int n, signed char *q, float *scales,
                                unsigned *nonzero_prefix, unsigned *warp_nonzero, int *warp_small) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int lane = threadIdx.x % warpSize;
  const float v = i < n ? x[i] : 0.0f;

  // the 16-element group's absolute maximum
  float amax = fabsf(v);
  for (int m = 8; m > 0; m >>= 1)
    amax = fmaxf(amax, __shfl_xor_sync(FULL_MASK, amax, m, 16));
  const float scale = amax > 0.0f ? amax / 127.0f : 1.0f;
  const int code = __float2int_rn(v / scale);

  // inclusive count of the nonzero codes along the warp
  unsigned c = (i < n && code != 0) ? 1u : 0u;
  for (int d = 1; d < 32; d <<= 1) {
    const unsigned y = __shfl_up_sync(FULL_MASK, c, d);
    if (lane >= d) c += y;
  }
  const unsigned total = __reduce_add_sync(FULL_MASK, (i < n && code != 0) ? 1u : 0u);
  const int small = __all_sync(FULL_MASK, fabsf(v) < 1.0f);
  __syncwarp();

  if (i < n) {
    q[i] = (signed char)code;
    nonzero_prefix[i] = c;
  }
  if (i < n && (lane & 15) == 0) scales[i / 16] = scale;
  if (i < n && lane == 0) {
    warp_nonzero[i / 32] = total;
    warp_small[i / 32] = small;
  }
}

__global__ void filter_and_quantize(const float *x, const int *offsets, const int *sizes, int segments,
                                    float *kept, int *kept_count, signed char *q, float *scales,
                                    unsigned *prefix, unsigned *warp_nonzero, int *warp_small) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= segments) return;
  const int begin = offsets[s], n = sizes[s];
  if (n == 0) return;
  const int blocks = (n + BLOCK - 1) / BLOCK;
#pragma dp threshold(128)
  filter_positive<<<blocks, BLOCK>>>(kept + begin, kept_count + s, x + begin, n);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
#pragma dp threshold(128)
  quantize_groups<<<blocks, BLOCK>>>(x + begin, n, q + begin, scales + begin / 16, prefix + begin,
                                     warp_nonzero + begin / 32, warp_small + begin / 32);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int segments = 4000;
  uint32_t r = 20261203u;
  auto next = [&r]() {
    r ^= r << 13;
    r ^= r >> 17;
    r ^= r << 5;
    return r;
  };
  std::vector<int> offsets(segments + 1, 0), sizes(segments);
  for (int s = 0; s < segments; ++s) {
    const uint32_t u = next();
    sizes[s] = (u % 41 == 0) ? 0 : (u % 9 == 0) ? 200 + (int)(u % 4000) : 1 + (int)(u % 100);
    offsets[s + 1] = offsets[s] + (sizes[s] + 63) / 64 * 64;
  }
  const int total = offsets[segments];
  std::vector<float> x(total, 0.0f);
  for (int s = 0; s < segments; ++s) {
    const bool tiny = next() % 5 == 0;  // some segments hold only small values
    for (int i = 0; i < sizes[s]; ++i) {
      const int u = (int)(next() % 4001) - 2000;
      x[offsets[s] + i] = (tiny ? u / 4000.0f : u / 100.0f) * ((next() % 7 == 0) ? 0.0f : 1.0f);
    }
  }

  float *d_x, *d_kept, *d_scales;
  int *d_offsets, *d_sizes, *d_count, *d_small;
  signed char *d_q;
  unsigned *d_prefix, *d_nonzero;
  CUDA_CHECK(cudaMalloc(&d_x, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_kept, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_scales, (total / 16 + 1) * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_sizes, segments * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_count, segments * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_small, (total / 32 + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_q, total));
  CUDA_CHECK(cudaMalloc(&d_prefix, total * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&d_nonzero, (total / 32 + 1) * sizeof(unsigned)));
  CUDA_CHECK(cudaMemcpy(d_x, x.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_sizes, sizes.data(), segments * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_count, 0, segments * sizeof(int)));
  CUDA_CHECK(cudaMemset(d_kept, 0, total * sizeof(float)));
  CUDA_CHECK(cudaMemset(d_scales, 0, (total / 16 + 1) * sizeof(float)));
  CUDA_CHECK(cudaMemset(d_small, 0xff, (total / 32 + 1) * sizeof(int)));
  CUDA_CHECK(cudaMemset(d_q, 0, total));
  CUDA_CHECK(cudaMemset(d_prefix, 0, total * sizeof(unsigned)));
  CUDA_CHECK(cudaMemset(d_nonzero, 0, (total / 32 + 1) * sizeof(unsigned)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 16384));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  filter_and_quantize<<<(segments + 127) / 128, 128>>>(d_x, d_offsets, d_sizes, segments, d_kept, d_count, d_q,
                                                       d_scales, d_prefix, d_nonzero, d_small);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<float> kept(total), scales(total / 16 + 1);
  std::vector<int> count(segments), small(total / 32 + 1);
  std::vector<signed char> q(total);
  std::vector<unsigned> prefix(total), nonzero(total / 32 + 1);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(kept.data(), d_kept, total * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(scales.data(), d_scales, (total / 16 + 1) * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(count.data(), d_count, segments * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(small.data(), d_small, (total / 32 + 1) * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(q.data(), d_q, total, cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(prefix.data(), d_prefix, total * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(nonzero.data(), d_nonzero, (total / 32 + 1) * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));

  long long bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](uint64_t v) { h = (h ^ v) * 0x100000001b3ull; };
  for (int s = 0; s < segments; ++s) {
    const int begin = offsets[s], n = sizes[s];
    // compaction: the positive values, as a sorted set
    std::vector<float> want, got(kept.begin() + begin, kept.begin() + begin + count[s]);
    for (int i = 0; i < n; ++i)
      if (x[begin + i] > 0.0f) want.push_back(x[begin + i]);
    std::sort(want.begin(), want.end());
    std::sort(got.begin(), got.end());
    bad += want != got;
    mix((uint64_t)count[s]);
    for (float f : got) mix((uint64_t)(uint32_t)llrintf(f * 100.0f));
    // quantization, group by group and warp by warp
    for (int g = 0; g * 16 < n; ++g) {
      float amax = 0.0f;
      for (int i = g * 16; i < g * 16 + 16 && i < n; ++i) amax = std::max(amax, std::fabs(x[begin + i]));
      const float scale = amax > 0.0f ? amax / 127.0f : 1.0f;
      bad += scales[begin / 16 + g] != scale;
      for (int i = g * 16; i < g * 16 + 16 && i < n; ++i) {
        const int code = (int)std::nearbyint(x[begin + i] / scale);
        bad += q[begin + i] != (signed char)code;
        mix((uint64_t)(uint8_t)q[begin + i]);
      }
    }
    for (int w = 0; w * 32 < n; ++w) {
      unsigned c = 0;
      bool all_small = true;
      for (int l = 0; l < 32; ++l) {
        const int i = w * 32 + l;
        const float v = i < n ? x[begin + i] : 0.0f;
        all_small = all_small && std::fabs(v) < 1.0f;
        if (i >= n) continue;
        c += q[begin + i] != 0;
        bad += prefix[begin + i] != c;
      }
      bad += nonzero[begin / 32 + w] != c;
      bad += (small[begin / 32 + w] != 0) != all_small;
      mix(c);
      mix((uint64_t)all_small);
    }
  }
  const bool ok = bad == 0;
  printf("result example=warp_filters input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u segments=%d bad=%lld elements=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, segments, bad, total);
  CUDA_CHECK(cudaFree(d_x));
  CUDA_CHECK(cudaFree(d_kept));
  CUDA_CHECK(cudaFree(d_scales));
  CUDA_CHECK(cudaFree(d_offsets));
  CUDA_CHECK(cudaFree(d_sizes));
  CUDA_CHECK(cudaFree(d_count));
  CUDA_CHECK(cudaFree(d_small));
  CUDA_CHECK(cudaFree(d_q));
  CUDA_CHECK(cudaFree(d_prefix));
  CUDA_CHECK(cudaFree(d_nonzero));
  return (ok && lost == 0) ? 0 : 1;
}
