// tile_reductions.cu - corpus program for dpopt: per-segment statistics of a
// ragged array of keys, each segment's work done by child grids whose
// kernels use cooperative-groups tiles the way the CUDA samples' reduction
// kernels do (Samples/2_Concepts_and_Techniques/reduction, reduce4 to
// reduce6): a block tree in dynamic shared memory down to 64 partial sums,
// then `if (cta.thread_rank() < 32)` the first warp finishes with
// `tile32.shfl_down` under `cg::tiled_partition<32>(cta)`; and a second
// child with tiles of 16 threads: `shfl_up` for an inclusive scan of each
// tile's flags, `ballot`, `any`, `all` and `shfl_xor`, the tiles indexed by
// `meta_group_rank()` in a shared array and combined after `cg::sync(cta)`;
// `cg::reduce` of the keys and of scaled float keys in the same child;
// and the CUDA programming guide's `sum_kernel_tile_shfl<tile_sz>` as
// printed (a template kernel whose tile size is its template parameter,
// `tiled_partition<tile_sz>(this_thread_block())` passed to the template
// callee `reduce_sum_tile_shfl<tile_sz>(thread_block_tile<tile_sz> g, int
// val)`), its `thread_sum` reading ints rather than `int4`s (a segment's
// keys are not 16-byte aligned).
// One parent thread per segment launches the three children over its keys.
// Integer arithmetic throughout: the CPU reference checks every result
// exactly and the checksum hashes them.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o tile_reductions tile_reductions.cu -lcudadevrt
#include <cooperative_groups.h>
#include <cooperative_groups/reduce.h>
#include <cuda_runtime.h>

#include <cstring>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)
static void check(cudaError_t result, char const *const func, const char *const file, int const line) {
  if (result) {
    fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\" \n", file, line, static_cast<unsigned int>(result),
            cudaGetErrorName(result), func);
    exit(EXIT_FAILURE);
  }
}

#define REDUCE_THREADS 128
#define TILE_THREADS 128

__device__ unsigned int launch_failures;

using namespace cooperative_groups;

__device__ int thread_sum(const int *input, int n) {
  int sum = 0;

  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) {
    sum += input[i];
  }
  return sum;
}

template <int tile_sz>
__device__ int reduce_sum_tile_shfl(thread_block_tile<tile_sz> g, int val) {
  // Each iteration halves the number of active threads
  // Each thread adds its partial sum[i] to sum[lane+i]
  for (int i = g.size() / 2; i > 0; i /= 2) {
    val += g.shfl_down(val, i);
  }

  return val;  // note: only thread 0 will return full sum
}

template <int tile_sz>
__global__ void sum_kernel_tile_shfl(int *sum, const int *input, int n) {
  int my_sum = thread_sum(input, n);

  auto tile = tiled_partition<tile_sz>(this_thread_block());
  int tile_sum = reduce_sum_tile_shfl<tile_sz>(tile, my_sum);

  if (tile.thread_rank() == 0) atomicAdd(sum, tile_sum);
}

// reduce4 of the samples, for int, each thread first adding two keys.
__global__ void reduce4(const int *g_idata, long long *g_odata, unsigned int n) {
  // Handle to thread block group
  cg::thread_block cta = cg::this_thread_block();
  extern __shared__ int sdata[];

  // perform first level of reduction,
  // reading from global memory, writing to shared memory
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * (blockDim.x * 2) + threadIdx.x;

  int mySum = (i < n) ? g_idata[i] : 0;

  if (i + blockDim.x < n) mySum += g_idata[i + blockDim.x];

  sdata[tid] = mySum;
  cg::sync(cta);

  // do reduction in shared mem
  for (unsigned int s = blockDim.x / 2; s > 32; s >>= 1) {
    if (tid < s) {
      sdata[tid] = mySum = mySum + sdata[tid + s];
    }

    cg::sync(cta);
  }

  cg::thread_block_tile<32> tile32 = cg::tiled_partition<32>(cta);

  if (cta.thread_rank() < 32) {
    // Fetch final intermediate sum from 2nd warp
    if (blockDim.x >= 64) mySum += sdata[tid + 32];
    // Reduce final warp using shuffle
    for (int offset = tile32.size() / 2; offset > 0; offset /= 2) {
      mySum += tile32.shfl_down(mySum, offset);
    }
  }

  // write result for this block to global mem
  if (cta.thread_rank() == 0) atomicAdd((unsigned long long *)g_odata, (unsigned long long)(long long)mySum);
}

// Per tile of 16 keys: the inclusive count of the odd keys (shfl_up scan of
// the flags), the tile's count of keys above the threshold (ballot), whether
// any key is a multiple of 7, whether all keys are below 1000, and the
// tile's largest key (shfl_xor butterfly), and with `cg::reduce` the tile's
// sum of the keys and a float sum of scaled keys (whose bits the checksum
// takes: the library's butterfly, in the hardware's order); the tiles' results in shared
// memory by meta_group_rank, thread 0 combining them after the barrier.
__global__ void tile_stats(const int *keys, int n, int threshold, int *odd_prefix, int4 *stats,
                           float2 *tile_totals) {
  cg::thread_block cta = cg::this_thread_block();
  cg::thread_block_tile<16> tile = cg::tiled_partition<16>(cta);
  __shared__ int s_above[TILE_THREADS / 16];
  __shared__ int s_flags[TILE_THREADS / 16];
  __shared__ int s_max[TILE_THREADS / 16];

  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  const int key = i < n ? keys[i] : 0;
  int odd = (i < n) && (key & 1);
  for (int d = 1; d < tile.size(); d *= 2) {
    int other = tile.shfl_up(odd, d);
    if (tile.thread_rank() >= d) odd += other;
  }
  if (i < n) odd_prefix[i] = odd;

  unsigned above = tile.ballot(i < n && key > threshold);
  int seven = tile.any(i < n && key % 7 == 0);
  int small = tile.all(i >= n || key < 1000);
  int best = i < n ? key : -1;
  for (int m = tile.num_threads() / 2; m > 0; m >>= 1) best = max(best, tile.shfl_xor(best, m));
  int total = cg::reduce(tile, key, cg::plus<int>());
  float scaled = cg::reduce(tile, (float)key * 0.37f, cg::plus<float>());
  if (tile.thread_rank() == 0)
    tile_totals[blockIdx.x * (TILE_THREADS / 16) + tile.meta_group_rank()] = make_float2((float)total, scaled);

  if (tile.thread_rank() == 0) {
    s_above[tile.meta_group_rank()] = __popc(above);
    s_flags[tile.meta_group_rank()] = seven | (small << 1);
    s_max[tile.meta_group_rank()] = best;
  }
  cg::sync(cta);

  if (threadIdx.x == 0) {
    int4 r = make_int4(0, 0, 0, -1);
    for (int t = 0; t < (int)tile.meta_group_size(); ++t) {
      r.x += s_above[t];
      r.y += s_flags[t] & 1;
      r.z += (s_flags[t] >> 1) & 1;
      r.w = max(r.w, s_max[t]);
    }
    stats[blockIdx.x] = r;
  }
}

// One thread per segment.
__global__ void segment_stats(const int *keys, const int *offsets, int segments, int threshold,
                              long long *sums, int *odd_prefix, int4 *stats, const int *stat_offsets,
                              int *tile_sums, float2 *tile_totals) {
  const int seg = blockIdx.x * blockDim.x + threadIdx.x;
  if (seg >= segments) return;
  const int begin = offsets[seg], n = offsets[seg + 1] - begin;
  if (n == 0) return;
  const int pairs = (n + 2 * REDUCE_THREADS - 1) / (2 * REDUCE_THREADS);
#pragma dp threshold(128) consldt(block)
  reduce4<<<pairs, REDUCE_THREADS, REDUCE_THREADS * sizeof(int)>>>(keys + begin, sums + seg, n);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&launch_failures, 1u);
#pragma dp threshold(128) coarsen(4) consldt(block)
  tile_stats<<<(n + TILE_THREADS - 1) / TILE_THREADS, TILE_THREADS>>>(keys + begin, n, threshold, odd_prefix + begin,
                                                                     stats + stat_offsets[seg],
                                                                     tile_totals + stat_offsets[seg] * (TILE_THREADS / 16));
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&launch_failures, 1u);
#pragma dp threshold(128) consldt(warp)
  sum_kernel_tile_shfl<16><<<(n + 255) / 256, 64>>>(tile_sums + seg, keys + begin, n);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&launch_failures, 1u);
}

int main() {
  const int segments = 2500, threshold = 600;
  uint32_t x = 12345u;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  // Most segments short (0 to 40 keys), some of 300 to 3000.
  std::vector<int> offsets(segments + 1, 0), stat_offsets(segments + 1, 0);
  for (int s = 0; s < segments; ++s) {
    const uint32_t u = next();
    const int len = (u % 11 == 0) ? 300 + (int)(u % 2701) : (int)(u % 41);
    offsets[s + 1] = offsets[s] + len;
    stat_offsets[s + 1] = stat_offsets[s] + (len + TILE_THREADS - 1) / TILE_THREADS;
  }
  const int total = offsets[segments], blocks = stat_offsets[segments];
  std::vector<int> keys(total);
  for (int i = 0; i < total; ++i) keys[i] = (int)(next() % 1003);

  int *d_keys, *d_offsets, *d_stat_offsets, *d_odd, *d_tile_sums;
  long long *d_sums;
  int4 *d_stats;
  float2 *d_totals;
  checkCudaErrors(cudaMalloc(&d_keys, total * sizeof(int)));
  checkCudaErrors(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  checkCudaErrors(cudaMalloc(&d_stat_offsets, (segments + 1) * sizeof(int)));
  checkCudaErrors(cudaMalloc(&d_odd, total * sizeof(int)));
  checkCudaErrors(cudaMalloc(&d_sums, segments * sizeof(long long)));
  checkCudaErrors(cudaMalloc(&d_tile_sums, segments * sizeof(int)));
  checkCudaErrors(cudaMemset(d_tile_sums, 0, segments * sizeof(int)));
  checkCudaErrors(cudaMalloc(&d_stats, blocks * sizeof(int4)));
  checkCudaErrors(cudaMalloc(&d_totals, blocks * (TILE_THREADS / 16) * sizeof(float2)));
  checkCudaErrors(cudaMemset(d_totals, 0, blocks * (TILE_THREADS / 16) * sizeof(float2)));
  checkCudaErrors(cudaMemcpy(d_keys, keys.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  checkCudaErrors(
      cudaMemcpy(d_stat_offsets, stat_offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemset(d_odd, 0xff, total * sizeof(int)));
  checkCudaErrors(cudaMemset(d_sums, 0, segments * sizeof(long long)));
  checkCudaErrors(cudaMemset(d_stats, 0, blocks * sizeof(int4)));
  checkCudaErrors(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  checkCudaErrors(cudaEventRecord(start));
  segment_stats<<<(segments + 127) / 128, 128>>>(d_keys, d_offsets, segments, threshold, d_sums, d_odd, d_stats,
                                                 d_stat_offsets, d_tile_sums, d_totals);
  checkCudaErrors(cudaGetLastError());
  checkCudaErrors(cudaEventRecord(stop));
  checkCudaErrors(cudaDeviceSynchronize());
  float ms = 0.f;
  checkCudaErrors(cudaEventElapsedTime(&ms, start, stop));

  std::vector<long long> sums(segments);
  std::vector<int> tile_sums(segments);
  checkCudaErrors(cudaMemcpy(tile_sums.data(), d_tile_sums, segments * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> odd(total);
  std::vector<int4> stats(blocks);
  std::vector<float2> totals(blocks * (TILE_THREADS / 16));
  checkCudaErrors(cudaMemcpy(totals.data(), d_totals, totals.size() * sizeof(float2), cudaMemcpyDeviceToHost));
  unsigned int lost = 0;
  checkCudaErrors(cudaMemcpy(sums.data(), d_sums, segments * sizeof(long long), cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(odd.data(), d_odd, total * sizeof(int), cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpy(stats.data(), d_stats, blocks * sizeof(int4), cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpyFromSymbol(&lost, launch_failures, sizeof(lost)));

  long long bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&h](long long v) { h = (h ^ (uint64_t)v) * 0x100000001b3ull; };
  for (int s = 0; s < segments; ++s) {
    const int begin = offsets[s], n = offsets[s + 1] - begin;
    long long sum = 0;
    for (int i = 0; i < n; ++i) sum += keys[begin + i];
    bad += sums[s] != sum;
    mix(sums[s]);
    bad += tile_sums[s] != sum;
    mix(tile_sums[s]);
    for (int b = 0; b * TILE_THREADS < n; ++b) {
      int4 ref = make_int4(0, 0, 0, -1);
      for (int t = 0; t < TILE_THREADS / 16; ++t) {
        int count = 0, seven = 0, small = 1, best = -1, total = 0;
        double scaled = 0.0;
        for (int l = 0; l < 16; ++l) {
          const int i = b * TILE_THREADS + t * 16 + l;
          if (i < n) {
            const int key = keys[begin + i];
            count += key & 1;
            bad += odd[begin + i] != count;
            mix(odd[begin + i]);
            ref.x += key > threshold;
            seven |= key % 7 == 0;
            small &= key < 1000;
            best = key > best ? key : best;
            total += key;
            scaled += (double)((float)key * 0.37f);
          }
        }
        ref.y += seven;
        ref.z += small;
        ref.w = best > ref.w ? best : ref.w;
        const float2 got = totals[(stat_offsets[s] + b) * (TILE_THREADS / 16) + t];
        bad += got.x != (float)total || !(std::fabs(got.y - scaled) <= 1e-5 * (1.0 + std::fabs(scaled)));
        uint32_t bits;
        std::memcpy(&bits, &got.y, sizeof bits);
        mix(bits);
      }
      const int4 got = stats[stat_offsets[s] + b];
      bad += got.x != ref.x || got.y != ref.y || got.z != ref.z || got.w != ref.w;
      mix(got.x);
      mix(got.y);
      mix(got.z);
      mix(got.w);
    }
  }
  const bool ok = bad == 0;
  printf("result example=tile_reductions input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u segments=%d keys=%d bad=%lld\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, segments, total, bad);
  checkCudaErrors(cudaFree(d_keys));
  checkCudaErrors(cudaFree(d_offsets));
  checkCudaErrors(cudaFree(d_stat_offsets));
  checkCudaErrors(cudaFree(d_odd));
  checkCudaErrors(cudaFree(d_sums));
  checkCudaErrors(cudaFree(d_stats));
  checkCudaErrors(cudaFree(d_tile_sums));
  checkCudaErrors(cudaFree(d_totals));
  return (ok && lost == 0) ? 0 : 1;
}
