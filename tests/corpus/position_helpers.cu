// position_helpers.cu - corpus program for dpopt: children whose __device__
// helpers read threadIdx, blockIdx, blockDim and gridDim themselves, as real
// code bases write them, instead of taking the position as an argument.
// Two parent kernels over a few thousand work items each (1-D blocks of 256):
//  - render_patches: one child per patch of the complex plane, escape-time
//    dwells in fixed point on 2-D blocks of 16x8 over a 2-D grid of tiles;
//    the pixel comes from pixel_coord(), which calls flat_tid() (threadIdx,
//    blockDim) and tile_origin() (blockIdx, blockDim): two levels deep.
//    Patch sizes are skewed: most 1-2 tiles, every 41st up to 19x15 tiles.
//  - process_segments: two children per segment of a skewed segment list:
//    weigh_segment (util::global_index() from a namespace, lane_base() with a
//    default argument, a template lane_tag<T>() used with an explicit and a
//    deduced type) and fill_strided (a grid-stride loop in a helper that
//    reads gridDim, on a grid capped at MAX_FILL_BLOCKS blocks).
// Integer arithmetic throughout (shared with the CPU reference through
// __host__ __device__ functions), plain stores: the result is independent of
// the order children run in.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o position_helpers position_helpers.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(call)                                                                   \
  do {                                                                             \
    cudaError_t err = call;                                                        \
    if (err != cudaSuccess) {                                                      \
      fprintf(stderr, "Cuda error in file '%s' in line %i : %s.\n", __FILE__, __LINE__, \
              cudaGetErrorString(err));                                            \
      exit(EXIT_FAILURE);                                                          \
    }                                                                              \
  } while (0)

#define TILE_W 16
#define TILE_H 8
#define FRAC_BITS 24
#define MAX_DWELL 96
#define PARENT_THREADS 256
#define MAX_FILL_BLOCKS 64

__device__ unsigned int g_launch_failures;

struct Patch {
  long long cx0, cy0, step;  // Q24 fixed point
  int w, h, off;
};

// ---------------------------------------------------------------- helpers

// Escape time of c = (cx, cy) (Q24), at most MAX_DWELL.
__host__ __device__ inline int dwell_at(long long cx, long long cy) {
  long long zx = 0, zy = 0;
  int d = 0;
  while (d < MAX_DWELL) {
    const long long x2 = (zx * zx) >> FRAC_BITS, y2 = (zy * zy) >> FRAC_BITS;
    if (x2 + y2 > (4LL << FRAC_BITS)) break;
    zy = ((zx * zy) >> (FRAC_BITS - 1)) + cy;
    zx = x2 - y2 + cx;
    ++d;
  }
  return d;
}

__host__ __device__ inline int mix(unsigned seed, unsigned i) {
  unsigned h = seed * 2654435761u ^ (i + 0x9e3779b9u) * 40503u;
  h ^= h >> 15;
  return (int)(h & 0xffffu);
}

// Row-major rank of the calling thread in its (2-D) block.
__device__ __forceinline__ int flat_tid() { return threadIdx.y * blockDim.x + threadIdx.x; }

// Top-left pixel of the tile the calling block covers.
__device__ __forceinline__ int2 tile_origin() {
  return make_int2(blockIdx.x * blockDim.x, blockIdx.y * blockDim.y);
}

// Pixel of the calling thread: its tile's origin plus its rank, unflattened.
__device__ int2 pixel_coord() {
  const int2 o = tile_origin();
  const int t = flat_tid();
  return make_int2(o.x + t % (int)blockDim.x, o.y + t / (int)blockDim.x);
}

namespace util {
__device__ __forceinline__ int global_index() { return blockIdx.x * blockDim.x + threadIdx.x; }
}  // namespace util

// First element of the calling thread when each thread owns `stride` of them.
__device__ int lane_base(int stride = 1) { return (int)(blockIdx.x * blockDim.x + threadIdx.x) * stride; }

// The thread's lane in its warp, scaled, in the caller's type.
template <typename T>
__device__ T lane_tag(T scale) {
  return static_cast<T>(threadIdx.x & 31) * scale;
}

// dst[i] = mix(seed, i) for i < n, as a grid-stride loop over the whole grid.
__device__ void stride_fill(int *dst, int n, unsigned seed) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x) dst[i] = mix(seed, i);
}

// ---------------------------------------------------------------- children

__global__ void dwell_tile(Patch pt, int *dwell) {
  const int2 px = pixel_coord();
  if (px.x >= pt.w || px.y >= pt.h) return;
  dwell[pt.off + px.y * pt.w + px.x] = dwell_at(pt.cx0 + px.x * pt.step, pt.cy0 + px.y * pt.step);
}

// weighted[i] = vals[i] * (1 + lane % 4) + vals[2i + 1] (when in range)
//               + 3 * lane + lane + seg, lane = i % 32
__global__ void weigh_segment(const int *vals, long long *weighted, int len, int seg) {
  const int i = util::global_index();
  if (i >= len) return;
  const int first = lane_base();
  const int pair = lane_base(2);
  long long v = (long long)vals[first] * (1 + (lane_tag<unsigned>(1u) & 3));
  if (pair + 1 < len) v += vals[pair + 1];
  v += lane_tag(3LL) + lane_tag<int>(1) + seg;
  weighted[i] = v;
}

__global__ void fill_strided(int *dst, int n, unsigned seed) { stride_fill(dst, n, seed); }

// ---------------------------------------------------------------- parents

__global__ void render_patches(const Patch *patches, int npatches, int *dwell) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npatches) return;
  const Patch pt = patches[p];
  dim3 grid((pt.w + TILE_W - 1) / TILE_W, (pt.h + TILE_H - 1) / TILE_H), block(TILE_W, TILE_H);
#pragma dp threshold(128) coarsen(2)
  dwell_tile<<<grid, block>>>(pt, dwell);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
}

__global__ void process_segments(const int *seg_start, int nseg, const int *vals, long long *weighted, int *fill) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= nseg) return;
  const int begin = seg_start[s], len = seg_start[s + 1] - begin;
  if (len == 0) return;
#pragma dp threshold(128) consldt(warp)
  weigh_segment<<<(len + 127) / 128, 128>>>(vals + begin, weighted + begin, len, s);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
  const int blocks = min((len + 255) / 256, MAX_FILL_BLOCKS);
#pragma dp consldt(grid)
  fill_strided<<<blocks, 256>>>(fill + begin, len, 7919u * s + 1);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
}

// ---------------------------------------------------------------- host

int main() {
  // Patches: most 1..24 x 1..8 pixels, every 41st 100..300 x 40..120.
  const int npatches = 3000;
  std::vector<Patch> patches(npatches);
  int npixels = 0;
  for (int p = 0; p < npatches; ++p) {
    Patch &pt = patches[p];
    const bool big = p % 41 == 0;
    pt.w = big ? 100 + (p * 37) % 201 : 1 + (p * 7) % 24;
    pt.h = big ? 40 + (p * 13) % 81 : 1 + (p * 5) % 8;
    pt.cx0 = -(9LL << (FRAC_BITS - 2)) + (long long)(p % 53) * (1LL << (FRAC_BITS - 5));
    pt.cy0 = -(5LL << (FRAC_BITS - 2)) + (long long)(p % 37) * (1LL << (FRAC_BITS - 5));
    pt.step = 1LL << (FRAC_BITS - 7);
    pt.off = npixels;
    npixels += pt.w * pt.h;
  }
  // Segments: most 0..59 elements, every 97th 5,000..44,999.
  const int nseg = 4000;
  std::vector<int> seg_start(nseg + 1, 0);
  for (int s = 0; s < nseg; ++s)
    seg_start[s + 1] = seg_start[s] + ((s % 97 == 0) ? 5000 + (s * 131) % 40000 : (s * 7) % 60);
  const int nvals = seg_start[nseg];
  std::vector<int> vals(nvals);
  for (int i = 0; i < nvals; ++i) vals[i] = (i * 17 + (i >> 7)) % 201 - 100;

  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  Patch *d_patches;
  int *d_dwell, *d_seg_start, *d_vals, *d_fill;
  long long *d_weighted;
  CK(cudaMalloc(&d_patches, npatches * sizeof(Patch)));
  CK(cudaMalloc(&d_dwell, npixels * sizeof(int)));
  CK(cudaMalloc(&d_seg_start, (nseg + 1) * sizeof(int)));
  CK(cudaMalloc(&d_vals, nvals * sizeof(int)));
  CK(cudaMalloc(&d_weighted, nvals * sizeof(long long)));
  CK(cudaMalloc(&d_fill, nvals * sizeof(int)));
  CK(cudaMemcpy(d_patches, patches.data(), npatches * sizeof(Patch), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_seg_start, seg_start.data(), (nseg + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_vals, vals.data(), nvals * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_dwell, 0xff, npixels * sizeof(int)));
  CK(cudaMemset(d_weighted, 0xff, nvals * sizeof(long long)));
  CK(cudaMemset(d_fill, 0xff, nvals * sizeof(int)));

  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  CK(cudaEventRecord(start));
  render_patches<<<(npatches + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(d_patches, npatches, d_dwell);
  CK(cudaGetLastError());
  process_segments<<<(nseg + PARENT_THREADS - 1) / PARENT_THREADS, PARENT_THREADS>>>(d_seg_start, nseg, d_vals,
                                                                                     d_weighted, d_fill);
  CK(cudaGetLastError());
  CK(cudaEventRecord(stop));
  CK(cudaDeviceSynchronize());
  float ms = 0.0f;
  CK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> dwell(npixels), fill(nvals);
  std::vector<long long> weighted(nvals);
  CK(cudaMemcpy(dwell.data(), d_dwell, npixels * sizeof(int), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(weighted.data(), d_weighted, nvals * sizeof(long long), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(fill.data(), d_fill, nvals * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned int failures = 0;
  CK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));

  // CPU reference.
  long long bad = 0;
  for (int p = 0; p < npatches; ++p) {
    const Patch &pt = patches[p];
    for (int y = 0; y < pt.h; ++y)
      for (int x = 0; x < pt.w; ++x)
        if (dwell[pt.off + y * pt.w + x] != dwell_at(pt.cx0 + x * pt.step, pt.cy0 + y * pt.step)) ++bad;
  }
  for (int s = 0; s < nseg; ++s) {
    const int begin = seg_start[s], len = seg_start[s + 1] - begin;
    for (int i = 0; i < len; ++i) {
      const int lane = i % 32;
      long long v = (long long)vals[begin + i] * (1 + lane % 4);
      if (2 * i + 1 < len) v += vals[begin + 2 * i + 1];
      v += 3LL * lane + lane + s;
      if (weighted[begin + i] != v) ++bad;
      if (fill[begin + i] != mix(7919u * s + 1, i)) ++bad;
    }
  }
  const bool ok = bad == 0;
  if (!ok) fprintf(stderr, "position_helpers: %lld mismatches\n", bad);
  uint64_t h = 0xcbf29ce484222325ull;
  for (int v : dwell) h = (h ^ (uint32_t)v) * 0x100000001b3ull;
  for (long long v : weighted) h = (h ^ (uint64_t)v) * 0x100000001b3ull;
  for (int v : fill) h = (h ^ (uint32_t)v) * 0x100000001b3ull;
  printf("result example=position_helpers input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  CK(cudaFree(d_patches));
  CK(cudaFree(d_dwell));
  CK(cudaFree(d_seg_start));
  CK(cudaFree(d_vals));
  CK(cudaFree(d_weighted));
  CK(cudaFree(d_fill));
  return (ok && failures == 0) ? 0 : 1;
}
