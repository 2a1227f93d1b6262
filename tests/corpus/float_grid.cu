// float_grid.cu - corpus program for dpopt: a parent that sizes its child
// with 64-bit arithmetic (the cell count of a rows x cols patch as
// `long long`, clamped to the buffer) and launches a child whose grid size
// is a float expression, `ceilf(n / 32.0f)`, as ported numerical code
// often writes it.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o float_grid float_grid.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cmath>
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

#define MAX_CELLS 6000LL

__device__ unsigned int dev_failures;

// cells[k] = row(k) * 1000 + col(k) + bias for the k-th cell of a patch.
__global__ void label_cells(int *cells, int n, int cols, int bias) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= n) return;
  cells[k] = (k / cols) * 1000 + (k % cols) + bias;
}

__global__ void label_patches(const int2 *shape, const long long *offset, int npatches, int *cells) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= npatches) return;
  long long area = (long long)shape[p].x * (long long)shape[p].y;
  long long clamped = area < MAX_CELLS ? area : MAX_CELLS;
  int n = (int)clamped;
  if (n <= 0) return;
#pragma dp threshold(128) coarsen(4)
  label_cells<<<ceilf(n / 32.0f), 32>>>(cells + offset[p], n, shape[p].y, p);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&dev_failures, 1u);
}

int main() {
  const int npatches = 3000;
  std::vector<int2> shape(npatches);
  std::vector<long long> offset(npatches + 1, 0);
  for (int p = 0; p < npatches; ++p) {
    // Most patches small; some have an area past MAX_CELLS (clamped).
    shape[p].x = (p % 31 == 0) ? 40 + (p * 13) % 150 : 1 + (p * 7) % 12;
    shape[p].y = (p % 31 == 0) ? 30 + (p * 17) % 90 : 1 + (p * 11) % 15;
    long long area = (long long)shape[p].x * shape[p].y;
    offset[p + 1] = offset[p] + (area < MAX_CELLS ? area : MAX_CELLS);
  }
  const long long total = offset[npatches];
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 13));
  int2 *d_shape;
  long long *d_offset;
  int *d_cells;
  CK(cudaMalloc(&d_shape, npatches * sizeof(int2)));
  CK(cudaMalloc(&d_offset, (npatches + 1) * sizeof(long long)));
  CK(cudaMalloc(&d_cells, total * sizeof(int)));
  CK(cudaMemcpy(d_shape, shape.data(), npatches * sizeof(int2), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_offset, offset.data(), (npatches + 1) * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemset(d_cells, 0xff, total * sizeof(int)));

  cudaEvent_t start, stop;
  CK(cudaEventCreate(&start));
  CK(cudaEventCreate(&stop));
  CK(cudaEventRecord(start));
  label_patches<<<(npatches + 255) / 256, 256>>>(d_shape, d_offset, npatches, d_cells);
  CK(cudaGetLastError());
  CK(cudaEventRecord(stop));
  CK(cudaDeviceSynchronize());
  float ms = 0.0f;
  CK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> cells(total);
  CK(cudaMemcpy(cells.data(), d_cells, total * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned int failures = 0;
  CK(cudaMemcpyFromSymbol(&failures, dev_failures, sizeof(failures)));
  bool ok = true;
  for (int p = 0; p < npatches; ++p)
    for (long long k = offset[p]; k < offset[p + 1]; ++k) {
      long long i = k - offset[p];
      if (cells[k] != (int)(i / shape[p].y) * 1000 + (int)(i % shape[p].y) + p) ok = false;
    }
  uint64_t h = 0xcbf29ce484222325ull;
  for (int v : cells) h = (h ^ (uint32_t)v) * 0x100000001b3ull;
  printf("result example=float_grid input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  CK(cudaFree(d_shape));
  CK(cudaFree(d_offset));
  CK(cudaFree(d_cells));
  return (ok && failures == 0) ? 0 : 1;
}
