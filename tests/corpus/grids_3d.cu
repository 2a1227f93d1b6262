// grids_3d.cu - corpus program for dpopt: children on 2-D and 3-D grids
// given as `dim3` variables. Each parent thread owns one image and one
// volume: a 3x3 box filter over the image runs on a 2-D grid of 16x16
// blocks with a dynamically sized shared-memory tile (halo included), in a
// stream the parent creates; the volume is initialised by a 3-D grid.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o grids_3d grids_3d.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CALL(f)                                                              \
  do {                                                                            \
    cudaError_t r = (f);                                                          \
    if (r != cudaSuccess) {                                                       \
      fprintf(stderr, "CUDA error %d (%s) at %s:%d\n", (int)r, cudaGetErrorString(r), __FILE__, __LINE__); \
      exit(1);                                                                    \
    }                                                                             \
  } while (0)

struct Item {
  int img_off, w, h;
  int vol_off, nx, ny, nz;
};

__device__ unsigned g_fail;

__global__ void box3x3(const int *src, int *dst, int w, int h) {
  extern __shared__ int tile[];  // (blockDim.x + 2) x (blockDim.y + 2)
  const int tw = blockDim.x + 2, th = blockDim.y + 2;
  const int x0 = (int)(blockIdx.x * blockDim.x) - 1, y0 = (int)(blockIdx.y * blockDim.y) - 1;
  for (int ty = threadIdx.y; ty < th; ty += blockDim.y)
    for (int tx = threadIdx.x; tx < tw; tx += blockDim.x) {
      const int gx = min(max(x0 + tx, 0), w - 1), gy = min(max(y0 + ty, 0), h - 1);
      tile[ty * tw + tx] = src[gy * w + gx];
    }
  __syncthreads();
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  int s = 0;
  for (int dy = 0; dy < 3; ++dy)
    for (int dx = 0; dx < 3; ++dx) s += tile[(threadIdx.y + dy) * tw + threadIdx.x + dx];
  dst[y * w + x] = s;
}

__global__ void init_volume(int *vol, int nx, int ny, int nz, int seed) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x;
  const int y = blockIdx.y * blockDim.y + threadIdx.y;
  const int z = blockIdx.z * blockDim.z + threadIdx.z;
  if (x < nx && y < ny && z < nz) vol[(z * ny + y) * nx + x] = seed + x + 7 * y + 13 * z;
}

__global__ void per_item(const Item *items, int nitems, const int *images, int *filtered, int *volumes) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= nitems) return;
  const Item it = items[p];
  cudaStream_t stream;
  if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess) {
    atomicAdd(&g_fail, 1u);
    return;
  }
  const int gx = (it.w + 15) / 16, gy = (it.h + 15) / 16;
  dim3 grid(gx, gy), block(16, 16);
#pragma dp consldt(warp)
  box3x3<<<grid, block, (16 + 2) * (16 + 2) * sizeof(int), stream>>>(images + it.img_off, filtered + it.img_off, it.w, it.h);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_fail, 1u);
  cudaStreamDestroy(stream);
  dim3 vgrid((it.nx + 7) / 8, (it.ny + 7) / 8, (it.nz + 3) / 4);
  dim3 vblock(8, 8, 4);
#pragma dp threshold(128) coarsen(2)
  init_volume<<<vgrid, vblock, 0, cudaStreamFireAndForget>>>(volumes + it.vol_off, it.nx, it.ny, it.nz, p);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_fail, 1u);
}

int main() {
  const int nitems = 600;
  std::vector<Item> items(nitems);
  int img_total = 0, vol_total = 0;
  for (int p = 0; p < nitems; ++p) {
    Item &it = items[p];
    it.w = (p % 17 == 0) ? 120 + (p * 7) % 130 : 3 + (p * 5) % 30;
    it.h = (p % 17 == 0) ? 90 + (p * 11) % 100 : 2 + (p * 3) % 25;
    it.nx = 2 + p % 23;
    it.ny = 1 + (p * 3) % 13;
    it.nz = (p % 29 == 0) ? 20 + p % 9 : 1 + p % 5;
    it.img_off = img_total;
    it.vol_off = vol_total;
    img_total += it.w * it.h;
    vol_total += it.nx * it.ny * it.nz;
  }
  std::vector<int> images(img_total);
  for (int i = 0; i < img_total; ++i) images[i] = (i * 37 + (i >> 5)) % 256;

  CUDA_CALL(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 13));
  Item *d_items;
  int *d_images, *d_filtered, *d_volumes;
  CUDA_CALL(cudaMalloc(&d_items, nitems * sizeof(Item)));
  CUDA_CALL(cudaMalloc(&d_images, img_total * sizeof(int)));
  CUDA_CALL(cudaMalloc(&d_filtered, img_total * sizeof(int)));
  CUDA_CALL(cudaMalloc(&d_volumes, vol_total * sizeof(int)));
  CUDA_CALL(cudaMemcpy(d_items, items.data(), nitems * sizeof(Item), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemcpy(d_images, images.data(), img_total * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CALL(cudaMemset(d_filtered, 0, img_total * sizeof(int)));
  CUDA_CALL(cudaMemset(d_volumes, 0, vol_total * sizeof(int)));

  cudaEvent_t t0, t1;
  CUDA_CALL(cudaEventCreate(&t0));
  CUDA_CALL(cudaEventCreate(&t1));
  CUDA_CALL(cudaEventRecord(t0));
  per_item<<<(nitems + 63) / 64, 64>>>(d_items, nitems, d_images, d_filtered, d_volumes);
  CUDA_CALL(cudaGetLastError());
  CUDA_CALL(cudaEventRecord(t1));
  CUDA_CALL(cudaDeviceSynchronize());
  float ms = 0;
  CUDA_CALL(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<int> filtered(img_total), volumes(vol_total);
  CUDA_CALL(cudaMemcpy(filtered.data(), d_filtered, img_total * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CALL(cudaMemcpy(volumes.data(), d_volumes, vol_total * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned fails = 0;
  CUDA_CALL(cudaMemcpyFromSymbol(&fails, g_fail, sizeof fails));
  bool ok = true;
  for (int p = 0; p < nitems; ++p) {
    const Item &it = items[p];
    for (int y = 0; y < it.h; ++y)
      for (int x = 0; x < it.w; ++x) {
        int s = 0;
        for (int dy = -1; dy <= 1; ++dy)
          for (int dx = -1; dx <= 1; ++dx) {
            const int sx = std::min(std::max(x + dx, 0), it.w - 1), sy = std::min(std::max(y + dy, 0), it.h - 1);
            s += images[it.img_off + sy * it.w + sx];
          }
        if (filtered[it.img_off + y * it.w + x] != s) ok = false;
      }
    for (int z = 0; z < it.nz; ++z)
      for (int y = 0; y < it.ny; ++y)
        for (int x = 0; x < it.nx; ++x)
          if (volumes[it.vol_off + (z * it.ny + y) * it.nx + x] != p + x + 7 * y + 13 * z) ok = false;
  }
  uint64_t h = 0xcbf29ce484222325ull;
  for (int v : filtered) h = (h ^ (uint32_t)v) * 0x100000001b3ull;
  for (int v : volumes) h = (h ^ (uint32_t)v) * 0x100000001b3ull;
  printf("result example=grids_3d input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, fails);
  CUDA_CALL(cudaFree(d_items));
  CUDA_CALL(cudaFree(d_images));
  CUDA_CALL(cudaFree(d_filtered));
  CUDA_CALL(cudaFree(d_volumes));
  return (ok && fails == 0) ? 0 : 1;
}
