// pyramid_paths.cu - corpus program for dpopt: cheapest top-to-bottom paths
// through many small cost grids at once (a batch of route queries, each a
// grid of its own width), the way Rodinia's pathfinder computes one: a block
// takes a strip of columns with a halo on each side, keeps the current row
// of the dynamic program in shared memory and advances it row by row, each
// round narrowing the strip it can trust by one column per side (the
// "pyramid"); between rounds the block waits at barriers, and it leaves the
// round loop with `if (i == rounds - 1) break;` between two of them. One
// parent thread per grid launches the strips of its grid.
// Integer costs: the CPU reference runs the same dynamic program row by row
// and checks every column of every grid.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o pyramid_paths pyramid_paths.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_SAFE_CALL(x)                                                              \
  do {                                                                                 \
    cudaError_t status_ = (x);                                                         \
    if (status_ != cudaSuccess) {                                                      \
      fprintf(stderr, "%s failed at %s:%d: %s\n", #x, __FILE__, __LINE__,              \
              cudaGetErrorString(status_));                                            \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)

#define STRIP 64  // threads per block: columns of a strip, halo included
#define ROWS 5    // rows of every grid: ROWS - 1 rounds after the first row
#define HALO 1
#define IN_RANGE(x, lo, hi) ((x) >= (lo) && (x) <= (hi))
#define MIN(a, b) ((a) <= (b) ? (a) : (b))

struct Grid {
  int cols;
  long long offset;  // of its first cost in the batch's costs (ROWS x cols)
};

__device__ unsigned int failed_launches;

// Advances the first row of `cost` (row-major, ROWS x cols) through `rounds`
// rows; `best` gets each column's cheapest path cost. A strip trusts
// STRIP - 2 * rounds * HALO columns; its halo reaches `halo` columns left.
__global__ void strip_rounds(int rounds, const int *cost, int *best, int cols, int halo) {
  __shared__ int prev[STRIP];
  __shared__ int result[STRIP];

  int bx = blockIdx.x;
  int tx = threadIdx.x;

  // the columns this strip computes, and where it starts in the grid
  int trusted = STRIP - rounds * HALO * 2;
  int first = trusted * bx - halo;
  int last = first + STRIP - 1;
  int col = first + tx;

  // the strip's own part of the grid
  int lo = (first < 0) ? -first : 0;
  int hi = (last > cols - 1) ? STRIP - 1 - (last - cols + 1) : STRIP - 1;

  int west = tx - 1;
  int east = tx + 1;
  west = (west < lo) ? lo : west;
  east = (east > hi) ? hi : east;

  bool inside = IN_RANGE(tx, lo, hi);

  if (IN_RANGE(col, 0, cols - 1)) {
    prev[tx] = cost[col];
  }
  __syncthreads();
  bool computed;
  for (int i = 0; i < rounds; i++) {
    computed = false;
    if (IN_RANGE(tx, i + 1, STRIP - i - 2) && inside) {
      computed = true;
      int cheapest = MIN(prev[west], prev[tx]);
      cheapest = MIN(cheapest, prev[east]);
      result[tx] = cheapest + cost[cols * (i + 1) + col];
    }
    __syncthreads();
    if (i == rounds - 1)
      break;
    if (computed)  // the next round starts from this one
      prev[tx] = result[tx];
    __syncthreads();
  }

  if (computed) {
    best[col] = result[tx];
  }
}

__global__ void route_batch(const Grid *grids, int count, const int *costs, int *best) {
  int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= count) return;
  const Grid grid = grids[g];
  const int rounds = ROWS - 1;
  const int halo = rounds * HALO;
  const int trusted = STRIP - rounds * HALO * 2;
  const int strips = grid.cols / trusted + (grid.cols % trusted == 0 ? 0 : 1);
#pragma dp threshold(128)
  strip_rounds<<<strips, STRIP>>>(rounds, costs + grid.offset, best + grid.offset, grid.cols, halo);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int count = 4000;
  std::vector<Grid> grids(count);
  uint64_t x = 0x9e3779b97f4a7c15ull;
  auto next = [&x]() {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    return (uint32_t)((x * 0x2545f4914f6cdd1dull) >> 32);
  };
  long long total = 0;
  for (int g = 0; g < count; ++g) {
    const uint32_t u = next();
    // many narrow grids (one strip), some wide ones
    grids[g].cols = (u % 10 == 0) ? 200 + (int)(next() % 3000) : 2 + (int)(next() % 54);
    grids[g].offset = total;
    total += (long long)ROWS * grids[g].cols;
  }
  std::vector<int> costs(total);
  for (auto &c : costs) c = (int)(next() % 10);

  Grid *d_grids;
  int *d_costs, *d_best;
  CUDA_SAFE_CALL(cudaMalloc(&d_grids, count * sizeof(Grid)));
  CUDA_SAFE_CALL(cudaMalloc(&d_costs, total * sizeof(int)));
  CUDA_SAFE_CALL(cudaMalloc(&d_best, total * sizeof(int)));
  CUDA_SAFE_CALL(cudaMemcpy(d_grids, grids.data(), count * sizeof(Grid), cudaMemcpyHostToDevice));
  CUDA_SAFE_CALL(cudaMemcpy(d_costs, costs.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_SAFE_CALL(cudaMemset(d_best, 0xff, total * sizeof(int)));
  CUDA_SAFE_CALL(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_SAFE_CALL(cudaEventCreate(&start));
  CUDA_SAFE_CALL(cudaEventCreate(&stop));
  CUDA_SAFE_CALL(cudaEventRecord(start));
  route_batch<<<(count + 255) / 256, 256>>>(d_grids, count, d_costs, d_best);
  CUDA_SAFE_CALL(cudaGetLastError());
  CUDA_SAFE_CALL(cudaEventRecord(stop));
  CUDA_SAFE_CALL(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_SAFE_CALL(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> best(total);
  unsigned int lost = 0;
  CUDA_SAFE_CALL(cudaMemcpy(best.data(), d_best, total * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_SAFE_CALL(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  long long wrong = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  std::vector<int> row, nextrow;
  for (const Grid &grid : grids) {
    const int *c = &costs[grid.offset];
    row.assign(c, c + grid.cols);
    for (int r = 1; r < ROWS; ++r) {
      nextrow.resize(grid.cols);
      for (int k = 0; k < grid.cols; ++k) {
        int m = row[k];
        if (k > 0) m = std::min(m, row[k - 1]);
        if (k < grid.cols - 1) m = std::min(m, row[k + 1]);
        nextrow[k] = m + c[(long long)r * grid.cols + k];
      }
      row.swap(nextrow);
    }
    for (int k = 0; k < grid.cols; ++k) {
      const int got = best[grid.offset + k];
      wrong += got != row[k];
      h = (h ^ (uint64_t)(uint32_t)got) * 0x100000001b3ull;
    }
  }
  const bool ok = wrong == 0;
  printf("result example=pyramid_paths input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u grids=%d wrong=%lld\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, count, wrong);
  CUDA_SAFE_CALL(cudaFree(d_grids));
  CUDA_SAFE_CALL(cudaFree(d_costs));
  CUDA_SAFE_CALL(cudaFree(d_best));
  return (ok && lost == 0) ? 0 : 1;
}
