// tile_splats.cu - corpus program for dpopt: tile-based splatting of point
// lists, written the way tiled rasterizers (3D Gaussian splatting's forward
// pass) write it. Each image of a batch has its points binned per 8 x 8
// pixel tile (`ranges[tile]`: the tile's slice of the sorted point list).
// One block per tile fetches its points in rounds of 64 into shared memory,
// waits, and every pixel adds up the weights of the points that cover it,
// front to back, until it is saturated; the block leaves the round loop once
// every pixel is (`__syncthreads_count(done)` then `break`). A pixel keeps
// its channels in `int acc[CHANNELS] = {0};`. One parent thread per image
// launches its tiles (a 2-D grid, a `dim3` block).
// Integer weights: the CPU reference splats every pixel of every image and
// checks each channel and the count of points each pixel took.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o tile_splats tile_splats.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_CUDA(call)                                                             \
  do {                                                                               \
    cudaError_t e = (call);                                                          \
    if (e != cudaSuccess) {                                                          \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call,              \
                   cudaGetErrorString(e));                                           \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

#define BLOCK_X 8
#define BLOCK_Y 8
#define BLOCK_SIZE (BLOCK_X * BLOCK_Y)
#define CHANNELS 3
#define SATURATED 600

struct Image {
  int width, height;          // pixels
  long long range_offset;     // of its tiles' ranges
  long long pixel_offset;     // of its pixels in the outputs
};

__device__ unsigned int failed_launches;

// One block per tile of one image. points: (x, y, radius, color) packed as
// int4, sorted per tile front to back; ranges[tile]: [begin, end) of the
// tile's entries in point_list.
template <uint32_t C>
__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)
splat_tiles(const uint2 *__restrict__ ranges, const int *__restrict__ point_list,
            const int4 *__restrict__ points, int W, int H, int *__restrict__ out_color,
            int *__restrict__ n_taken) {
  uint32_t horizontal_blocks = (W + BLOCK_X - 1) / BLOCK_X;
  uint2 pix_min = {blockIdx.x * BLOCK_X, blockIdx.y * BLOCK_Y};
  uint2 pix = {pix_min.x + threadIdx.x, pix_min.y + threadIdx.y};
  uint32_t pix_id = W * pix.y + pix.x;
  bool inside = pix.x < W && pix.y < H;
  bool done = !inside;

  uint2 range = ranges[blockIdx.y * horizontal_blocks + blockIdx.x];
  const int rounds = ((range.y - range.x + BLOCK_SIZE - 1) / BLOCK_SIZE);
  int toDo = range.y - range.x;

  __shared__ int4 collected[BLOCK_SIZE];

  int taken = 0;
  int weight = 0;
  int acc[C] = {0};

  for (int i = 0; i < rounds; i++, toDo -= BLOCK_SIZE) {
    // every pixel saturated: the tile is finished
    int num_done = __syncthreads_count(done);
    if (num_done == BLOCK_SIZE)
      break;

    int progress = i * BLOCK_SIZE + (threadIdx.y * BLOCK_X + threadIdx.x);
    if (range.x + progress < range.y) {
      collected[threadIdx.y * BLOCK_X + threadIdx.x] = points[point_list[range.x + progress]];
    }
    __syncthreads();

    for (int j = 0; !done && j < min(BLOCK_SIZE, toDo); j++) {
      const int4 p = collected[j];
      const int dx = p.x - (int)pix.x, dy = p.y - (int)pix.y;
      const int d2 = dx * dx + dy * dy;
      if (d2 > p.z * p.z)
        continue;
      const int w = p.z * p.z - d2 + 1;
      for (int ch = 0; ch < C; ch++)
        acc[ch] += w * ((p.w >> (8 * ch)) & 0xff);
      weight += w;
      taken++;
      if (weight >= SATURATED)
        done = true;
    }
  }

  if (inside) {
    for (int ch = 0; ch < C; ch++)
      out_color[ch * H * W + pix_id] = acc[ch];
    n_taken[pix_id] = taken;
  }
}

__global__ void render_batch(const Image *images, int count, const uint2 *ranges,
                             const int *point_list, const int4 *points, int *color, int *taken) {
  const int im = blockIdx.x * blockDim.x + threadIdx.x;
  if (im >= count) return;
  const Image img = images[im];
  dim3 tile(BLOCK_X, BLOCK_Y);
  dim3 tiles((img.width + BLOCK_X - 1) / BLOCK_X, (img.height + BLOCK_Y - 1) / BLOCK_Y);
#pragma dp threshold(128)
  splat_tiles<CHANNELS><<<tiles, tile>>>(ranges + img.range_offset, point_list, points, img.width,
                                        img.height, color + CHANNELS * img.pixel_offset,
                                        taken + img.pixel_offset);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int count = 600;
  uint32_t s = 2026u;
  auto rnd = [&s](uint32_t n) {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s % n;
  };
  // points shared by every image: (x, y, radius, rgb), x and y in [0, 256)
  const int npoints = 20000;
  std::vector<int4> points(npoints);
  for (auto &p : points)
    p = make_int4((int)rnd(256), (int)rnd(256), 1 + (int)rnd(9), (int)rnd(1u << 24));
  std::vector<Image> images(count);
  std::vector<uint2> ranges;
  std::vector<int> point_list;
  long long pixels = 0;
  for (int im = 0; im < count; ++im) {
    Image &img = images[im];
    // mostly thumbnails of one tile, some larger images
    img.width = (rnd(10) == 0) ? 64 + (int)rnd(192) : 4 + (int)rnd(13);
    img.height = (rnd(10) == 0) ? 64 + (int)rnd(192) : 4 + (int)rnd(13);
    img.range_offset = (long long)ranges.size();
    img.pixel_offset = pixels;
    pixels += (long long)img.width * img.height;
    const int tx = (img.width + BLOCK_X - 1) / BLOCK_X, ty = (img.height + BLOCK_Y - 1) / BLOCK_Y;
    // this image's points: a random subset, binned per tile they touch, in
    // the image's own front-to-back order
    const int first = (int)rnd(npoints), mine = 50 + (int)rnd(600);
    std::vector<std::vector<int>> bins(tx * ty);
    for (int k = 0; k < mine; ++k) {
      const int id = (first + k * 7) % npoints;
      const int4 p = points[id];
      for (int by = std::max(0, (p.y - p.z) / BLOCK_Y); by <= std::min(ty - 1, (p.y + p.z) / BLOCK_Y); ++by)
        for (int bx = std::max(0, (p.x - p.z) / BLOCK_X); bx <= std::min(tx - 1, (p.x + p.z) / BLOCK_X); ++bx)
          bins[by * tx + bx].push_back(id);
    }
    for (auto &b : bins) {
      const unsigned begin = (unsigned)point_list.size();
      point_list.insert(point_list.end(), b.begin(), b.end());
      ranges.push_back(make_uint2(begin, (unsigned)point_list.size()));
    }
  }
  if (point_list.empty()) point_list.push_back(0);

  Image *d_images;
  uint2 *d_ranges;
  int *d_list, *d_color, *d_taken;
  int4 *d_points;
  CHECK_CUDA(cudaMalloc(&d_images, count * sizeof(Image)));
  CHECK_CUDA(cudaMalloc(&d_ranges, ranges.size() * sizeof(uint2)));
  CHECK_CUDA(cudaMalloc(&d_list, point_list.size() * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_points, npoints * sizeof(int4)));
  CHECK_CUDA(cudaMalloc(&d_color, CHANNELS * pixels * sizeof(int)));
  CHECK_CUDA(cudaMalloc(&d_taken, pixels * sizeof(int)));
  CHECK_CUDA(cudaMemcpy(d_images, images.data(), count * sizeof(Image), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_ranges, ranges.data(), ranges.size() * sizeof(uint2), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_list, point_list.data(), point_list.size() * sizeof(int), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemcpy(d_points, points.data(), npoints * sizeof(int4), cudaMemcpyHostToDevice));
  CHECK_CUDA(cudaMemset(d_color, 0xff, CHANNELS * pixels * sizeof(int)));
  CHECK_CUDA(cudaMemset(d_taken, 0xff, pixels * sizeof(int)));
  CHECK_CUDA(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

  cudaEvent_t start, stop;
  CHECK_CUDA(cudaEventCreate(&start));
  CHECK_CUDA(cudaEventCreate(&stop));
  CHECK_CUDA(cudaEventRecord(start));
  render_batch<<<(count + 127) / 128, 128>>>(d_images, count, d_ranges, d_list, d_points, d_color, d_taken);
  CHECK_CUDA(cudaGetLastError());
  CHECK_CUDA(cudaEventRecord(stop));
  CHECK_CUDA(cudaDeviceSynchronize());
  float ms = 0.f;
  CHECK_CUDA(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> color(CHANNELS * pixels), taken(pixels);
  unsigned int lost = 0;
  CHECK_CUDA(cudaMemcpy(color.data(), d_color, color.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpy(taken.data(), d_taken, taken.size() * sizeof(int), cudaMemcpyDeviceToHost));
  CHECK_CUDA(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));

  long long wrong = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const Image &img : images) {
    const int tx = (img.width + BLOCK_X - 1) / BLOCK_X;
    for (int y = 0; y < img.height; ++y)
      for (int x = 0; x < img.width; ++x) {
        const uint2 r = ranges[img.range_offset + (y / BLOCK_Y) * tx + x / BLOCK_X];
        int acc[CHANNELS] = {0}, weight = 0, n = 0;
        for (unsigned k = r.x; k < r.y && weight < SATURATED; ++k) {
          const int4 p = points[point_list[k]];
          const int dx = p.x - x, dy = p.y - y, d2 = dx * dx + dy * dy;
          if (d2 > p.z * p.z) continue;
          const int w = p.z * p.z - d2 + 1;
          for (int ch = 0; ch < CHANNELS; ++ch) acc[ch] += w * ((p.w >> (8 * ch)) & 0xff);
          weight += w;
          ++n;
        }
        const long long px = img.pixel_offset + (long long)y * img.width + x;
        for (int ch = 0; ch < CHANNELS; ++ch) {
          const int got = color[CHANNELS * img.pixel_offset + (long long)ch * img.height * img.width +
                                (long long)y * img.width + x];
          wrong += got != acc[ch];
          h = (h ^ (uint64_t)(uint32_t)got) * 0x100000001b3ull;
        }
        wrong += taken[px] != n;
        h = (h ^ (uint64_t)(uint32_t)taken[px]) * 0x100000001b3ull;
      }
  }
  const bool ok = wrong == 0;
  std::printf("result example=tile_splats input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u images=%d pixels=%lld wrong=%lld\n",
              ms, ok ? "yes" : "no", (unsigned long long)h, lost, count, pixels, wrong);
  CHECK_CUDA(cudaFree(d_images));
  CHECK_CUDA(cudaFree(d_ranges));
  CHECK_CUDA(cudaFree(d_list));
  CHECK_CUDA(cudaFree(d_points));
  CHECK_CUDA(cudaFree(d_color));
  CHECK_CUDA(cudaFree(d_taken));
  return (ok && lost == 0) ? 0 : 1;
}
