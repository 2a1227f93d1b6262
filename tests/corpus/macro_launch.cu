// macro_launch.cu - corpus program for dpopt: launches written through the
// project's macros, as code bases that wrap their launch boilerplate do.
// The gather child is launched through a function-like macro
// (`LAUNCH_GATHER(n, ...)`) that stands after the pragma; the scatter child
// is launched directly with a configuration built from macros
// (`GRID_1D(n, BS)`, `BS`).
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o macro_launch macro_launch.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define BS 128
#define GRID_1D(n, bs) (((n) + (bs) - 1) / (bs))
#define LAUNCH_GATHER(n, ...) gather_child<<<GRID_1D(n, BS), BS>>>(__VA_ARGS__)
#define RECORD_LAUNCH() \
  do { if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_bad_launches, 1u); } while (0)

#define GPU_CHECK(x)                                                          \
  do {                                                                        \
    cudaError_t status_ = (x);                                                \
    if (status_ != cudaSuccess) {                                             \
      fprintf(stderr, "GPU_CHECK(%s) -> %s\n", #x, cudaGetErrorString(status_)); \
      exit(EXIT_FAILURE);                                                     \
    }                                                                         \
  } while (0)

__device__ unsigned g_bad_launches;

// gathered[i] = table[idx[i]] for i < n
__global__ void gather_child(int *gathered, const int *table, const int *idx, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  gathered[i] = table[idx[i]];
}

// dst[i] = src[i] * k + bias for i < n
__global__ void scale_child(int *dst, const int *src, int n, int k, int bias) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  dst[i] = src[i] * k + bias;
}

__global__ void process_lists(const int *table, const int *idx, const int *list_off, int nlists,
                              int *gathered, int *scaled) {
  int l = blockIdx.x * blockDim.x + threadIdx.x;
  if (l >= nlists) return;
  int off = list_off[l], n = list_off[l + 1] - off;
  if (n == 0) return;
#pragma dp threshold(128) coarsen(2)
  LAUNCH_GATHER(n, gathered + off, table, idx + off, n);
  RECORD_LAUNCH();
#pragma dp threshold(128) coarsen(2)
  scale_child<<<GRID_1D(n, BS), BS>>>(scaled + off, table + (l % 64), n, l % 9 + 1, -l);
  RECORD_LAUNCH();
}

int main() {
  const int nlists = 4000, table_size = 8192;
  std::vector<int> list_off(nlists + 1, 0);
  for (int l = 0; l < nlists; ++l)
    list_off[l + 1] = list_off[l] + ((l % 43 == 1) ? 900 + (l * 67) % 3000 : (l * 23) % 120);
  const int total = list_off[nlists];
  std::vector<int> table(table_size), idx(total);
  for (int i = 0; i < table_size; ++i) table[i] = (i * 911) % 10007;
  for (int i = 0; i < total; ++i) idx[i] = (int)(((long long)i * 48271) % table_size);
  GPU_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 15));
  int *d_table, *d_idx, *d_off, *d_gathered, *d_scaled;
  GPU_CHECK(cudaMalloc(&d_table, table_size * sizeof(int)));
  GPU_CHECK(cudaMalloc(&d_idx, total * sizeof(int)));
  GPU_CHECK(cudaMalloc(&d_off, (nlists + 1) * sizeof(int)));
  GPU_CHECK(cudaMalloc(&d_gathered, total * sizeof(int)));
  GPU_CHECK(cudaMalloc(&d_scaled, total * sizeof(int)));
  GPU_CHECK(cudaMemcpy(d_table, table.data(), table_size * sizeof(int), cudaMemcpyHostToDevice));
  GPU_CHECK(cudaMemcpy(d_idx, idx.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  GPU_CHECK(cudaMemcpy(d_off, list_off.data(), (nlists + 1) * sizeof(int), cudaMemcpyHostToDevice));

  cudaEvent_t t0, t1;
  GPU_CHECK(cudaEventCreate(&t0));
  GPU_CHECK(cudaEventCreate(&t1));
  GPU_CHECK(cudaEventRecord(t0));
  process_lists<<<GRID_1D(nlists, BS), BS>>>(d_table, d_idx, d_off, nlists, d_gathered, d_scaled);
  GPU_CHECK(cudaGetLastError());
  GPU_CHECK(cudaEventRecord(t1));
  GPU_CHECK(cudaDeviceSynchronize());
  float ms = 0;
  GPU_CHECK(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<int> gathered(total), scaled(total);
  GPU_CHECK(cudaMemcpy(gathered.data(), d_gathered, total * sizeof(int), cudaMemcpyDeviceToHost));
  GPU_CHECK(cudaMemcpy(scaled.data(), d_scaled, total * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned bad = 0;
  GPU_CHECK(cudaMemcpyFromSymbol(&bad, g_bad_launches, sizeof bad));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int l = 0; l < nlists; ++l)
    for (int i = 0, off = list_off[l]; i < list_off[l + 1] - off; ++i) {
      if (gathered[off + i] != table[idx[off + i]]) ok = false;
      if (scaled[off + i] != table[l % 64 + i] * (l % 9 + 1) - l) ok = false;
      h = (h ^ (uint32_t)gathered[off + i]) * 0x100000001b3ull;
      h = (h ^ (uint32_t)scaled[off + i]) * 0x100000001b3ull;
    }
  printf("result example=macro_launch input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, bad);
  GPU_CHECK(cudaFree(d_table));
  GPU_CHECK(cudaFree(d_idx));
  GPU_CHECK(cudaFree(d_off));
  GPU_CHECK(cudaFree(d_gathered));
  GPU_CHECK(cudaFree(d_scaled));
  return (ok && bad == 0) ? 0 : 1;
}
