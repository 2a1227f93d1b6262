// region_histograms.cu - corpus program for dpopt: intensity histograms of
// the leaves of an adaptive quadtree over an 8-bit image (as a region-based
// segmenter or an adaptive tone mapper computes them). One parent thread per
// leaf launches a grid of 16x8 tiles over its leaf (8x8 to 256x256 pixels).
// The child is written with cooperative groups, as cuda-samples and CUTLASS
// style code writes it: the block's group `block`, its rank, size, thread and
// group indices and dimensions (`block.thread_rank()`, `block.size()`,
// `block.thread_index()`, `block.group_index()`, `block.group_dim()`,
// `block.dim_threads()`, `cg::thread_rank(block)`, `cg::group_size(block)`),
// a helper taking the group by reference that clears the shared bins and
// waits, shared-memory atomics and a block reduction of the leaf's sum.
// The CPU reference checks every bin and sum exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o region_histograms region_histograms.cu -lcudadevrt
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace cg = cooperative_groups;

#define CUDA_CHECK(call)                                                     \
  do {                                                                       \
    const cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(EXIT_FAILURE);                                                    \
    }                                                                        \
  } while (0)

#define TILE_W 16
#define TILE_H 8
#define BINS 64

__device__ unsigned int failed_launches;

struct Leaf {
  int x, y, w, h;
};

__device__ void clear_bins(const cg::thread_block &block, unsigned int *bins) {
  for (unsigned int b = block.thread_rank(); b < BINS; b += block.num_threads()) bins[b] = 0;
  block.sync();
}

__global__ void __launch_bounds__(TILE_W * TILE_H)
leaf_histogram(const unsigned char *__restrict__ image, int pitch, Leaf leaf,
               unsigned int *hist, unsigned long long *sum) {
  cg::thread_block block = cg::this_thread_block();
  __shared__ unsigned int bins[BINS];
  __shared__ unsigned int partial[TILE_W * TILE_H];
  clear_bins(block, bins);
  const dim3 t = block.thread_index();
  const dim3 tile = block.group_index();
  const int x = leaf.x + (int)(tile.x * block.group_dim().x + t.x);
  const int y = leaf.y + (int)(tile.y * block.dim_threads().y + t.y);
  unsigned int v = 0;
  if (x < leaf.x + leaf.w && y < leaf.y + leaf.h) {
    v = image[(size_t)y * pitch + x];
    atomicAdd(&bins[v >> 2], 1u);
  }
  partial[block.thread_rank()] = v;
  cg::sync(block);
  for (unsigned int s = block.size() / 2; s > 0; s >>= 1) {
    if (block.thread_rank() < s) partial[block.thread_rank()] += partial[block.thread_rank() + s];
    block.sync();
  }
  if (cg::thread_rank(block) == 0) atomicAdd(sum, (unsigned long long)partial[0]);
  for (unsigned int b = block.thread_rank(); b < BINS; b += cg::group_size(block))
    if (bins[b] != 0) atomicAdd(&hist[b], bins[b]);
}

__global__ void leaf_histograms(const unsigned char *image, int pitch, const Leaf *leaves,
                                int count, unsigned int *hists, unsigned long long *sums) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const Leaf leaf = leaves[i];
  const dim3 threads(TILE_W, TILE_H);
  const dim3 tiles((leaf.w + TILE_W - 1) / TILE_W, (leaf.h + TILE_H - 1) / TILE_H);
#pragma dp threshold(256)
  leaf_histogram<<<tiles, threads>>>(image, pitch, leaf, hists + (size_t)i * BINS, sums + i);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

static uint32_t rng = 20261202u;
static uint32_t next() {
  rng ^= rng << 13;
  rng ^= rng >> 17;
  rng ^= rng << 5;
  return rng;
}

// Split a square into four while it is large, or at random while above 8.
static void subdivide(int x, int y, int size, std::vector<Leaf> &out) {
  if (size > 256 || (size > 8 && next() % 100 < 62)) {
    const int half = size / 2;
    subdivide(x, y, half, out);
    subdivide(x + half, y, half, out);
    subdivide(x, y + half, half, out);
    subdivide(x + half, y + half, half, out);
  } else {
    out.push_back({x, y, size, size});
  }
}

int main() {
  const int width = 2048, height = 1024, pitch = width + 64;
  std::vector<Leaf> leaves;
  for (int y = 0; y < height; y += 512)
    for (int x = 0; x < width; x += 512) subdivide(x, y, 512, leaves);
  const int count = (int)leaves.size();
  std::vector<unsigned char> image((size_t)pitch * height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < pitch; ++x)
      image[(size_t)y * pitch + x] = (unsigned char)((x * 7 + y * 3 + (next() & 63)) & 255);

  unsigned char *d_image;
  Leaf *d_leaves;
  unsigned int *d_hists;
  unsigned long long *d_sums;
  CUDA_CHECK(cudaMalloc(&d_image, image.size()));
  CUDA_CHECK(cudaMalloc(&d_leaves, count * sizeof(Leaf)));
  CUDA_CHECK(cudaMalloc(&d_hists, (size_t)count * BINS * sizeof(unsigned int)));
  CUDA_CHECK(cudaMalloc(&d_sums, count * sizeof(unsigned long long)));
  CUDA_CHECK(cudaMemcpy(d_image, image.data(), image.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_leaves, leaves.data(), count * sizeof(Leaf), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_hists, 0, (size_t)count * BINS * sizeof(unsigned int)));
  CUDA_CHECK(cudaMemset(d_sums, 0, count * sizeof(unsigned long long)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 16384));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  leaf_histograms<<<(count + 127) / 128, 128>>>(d_image, pitch, d_leaves, count, d_hists, d_sums);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<unsigned int> hists((size_t)count * BINS);
  std::vector<unsigned long long> sums(count);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(hists.data(), d_hists, hists.size() * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, count * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));

  bool ok = true;
  int bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  std::vector<unsigned int> ref(BINS);
  for (int i = 0; i < count; ++i) {
    const Leaf &l = leaves[i];
    std::fill(ref.begin(), ref.end(), 0u);
    unsigned long long s = 0;
    for (int y = l.y; y < l.y + l.h; ++y)
      for (int x = l.x; x < l.x + l.w; ++x) {
        const unsigned int v = image[(size_t)y * pitch + x];
        ++ref[v >> 2];
        s += v;
      }
    bool leaf_ok = sums[i] == s;
    for (int b = 0; b < BINS; ++b) {
      leaf_ok = leaf_ok && hists[(size_t)i * BINS + b] == ref[b];
      h = (h ^ (uint64_t)hists[(size_t)i * BINS + b]) * 0x100000001b3ull;
    }
    h = (h ^ sums[i]) * 0x100000001b3ull;
    if (!leaf_ok) ++bad;
    ok = ok && leaf_ok;
  }
  printf("result example=region_histograms input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u leaves=%d bad_leaves=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, count, bad);
  CUDA_CHECK(cudaFree(d_image));
  CUDA_CHECK(cudaFree(d_leaves));
  CUDA_CHECK(cudaFree(d_hists));
  CUDA_CHECK(cudaFree(d_sums));
  return (ok && lost == 0) ? 0 : 1;
}
