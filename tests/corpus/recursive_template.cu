// recursive_template.cu - corpus program for dpopt: a quadtree over points,
// built top-down by a recursive template kernel. Each block of build<N>
// owns one node: its N threads count the node's points with a shared-memory
// reduction, and thread 0 launches the four children of a node that is too
// full, down to a fixed depth (the launch's `<<<` stands on the line after
// the template arguments).
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o recursive_template recursive_template.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                   \
  do {                                                                \
    const cudaError_t e_ = (call);                                    \
    if (e_ != cudaSuccess) {                                          \
      printf("CUDA failure %s:%d '%s'\n", __FILE__, __LINE__,         \
             cudaGetErrorString(e_));                                 \
      exit(EXIT_FAILURE);                                             \
    }                                                                 \
  } while (0)

constexpr int kMaxDepth = 5;      // root is depth 0
constexpr int kLeafPoints = 24;   // a node with more points is split
constexpr int kWorld = 1024;      // coordinates in [0, kWorld)
constexpr int kNodes = (1 << (2 * (kMaxDepth + 1))) / 3;  // 1 + 4 + ... + 4^kMaxDepth

struct Points {
  const int *x;
  const int *y;
  int count;
};

__device__ unsigned int g_failed_launches;

// Block b of a launch is quadrant b of node `parent` (x0, y0, size).
template <int N>
__global__ void build(Points pts, int *node_count, int parent, int x0, int y0, int size, int depth) {
  extern __shared__ int partial[];
  const int half = size / 2;
  const int node = (depth == 0) ? 0 : 4 * parent + 1 + blockIdx.x;
  const int bx = (depth == 0) ? x0 : x0 + (blockIdx.x & 1) * half;
  const int by = (depth == 0) ? y0 : y0 + (blockIdx.x >> 1) * half;
  const int side = (depth == 0) ? size : half;
  int mine = 0;
  for (int i = threadIdx.x; i < pts.count; i += N) {
    const int px = pts.x[i], py = pts.y[i];
    mine += (px >= bx && px < bx + side && py >= by && py < by + side);
  }
  partial[threadIdx.x] = mine;
  __syncthreads();
  for (int s = N / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) {
    const int count = partial[0];
    node_count[node] = count;
    if (depth < kMaxDepth && count > kLeafPoints) {
#pragma dp coarsen(2)
      build<N>
          <<<4, N, N * sizeof(int)>>>(pts, node_count, node, bx, by, side, depth + 1);
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_failed_launches, 1u);
    }
  }
}

static void reference(const std::vector<int> &x, const std::vector<int> &y, std::vector<int> &count,
                      int node, int x0, int y0, int side, int depth) {
  int c = 0;
  for (size_t i = 0; i < x.size(); ++i)
    c += (x[i] >= x0 && x[i] < x0 + side && y[i] >= y0 && y[i] < y0 + side);
  count[node] = c;
  if (depth >= kMaxDepth || c <= kLeafPoints) return;
  const int h = side / 2;
  for (int q = 0; q < 4; ++q)
    reference(x, y, count, 4 * node + 1 + q, x0 + (q & 1) * h, y0 + (q >> 1) * h, h, depth + 1);
}

int main() {
  const int n = 6000;
  std::vector<int> hx(n), hy(n);
  uint32_t state = 12345u;
  auto next = [&state]() { state = state * 1664525u + 1013904223u; return state >> 8; };
  for (int i = 0; i < n; ++i) {  // four clusters plus uniform noise
    const int c = i % 5;
    if (c == 4) { hx[i] = next() % kWorld; hy[i] = next() % kWorld; continue; }
    const int cx = 150 + 240 * c, cy = 900 - 200 * c;
    hx[i] = (cx + (int)(next() % 121) - 60 + kWorld) % kWorld;
    hy[i] = (cy + (int)(next() % 81) - 40 + kWorld) % kWorld;
  }
  int *d_x, *d_y, *d_count;
  CHECK(cudaMalloc(&d_x, n * sizeof(int)));
  CHECK(cudaMalloc(&d_y, n * sizeof(int)));
  CHECK(cudaMalloc(&d_count, kNodes * sizeof(int)));
  CHECK(cudaMemcpy(d_x, hx.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemcpy(d_y, hy.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CHECK(cudaMemset(d_count, 0xff, kNodes * sizeof(int)));
  Points pts{d_x, d_y, n};

  cudaEvent_t begin, end;
  CHECK(cudaEventCreate(&begin));
  CHECK(cudaEventCreate(&end));
  CHECK(cudaEventRecord(begin));
  build<128><<<1, 128, 128 * sizeof(int)>>>(pts, d_count, -1, 0, 0, kWorld, 0);
  CHECK(cudaGetLastError());
  CHECK(cudaEventRecord(end));
  CHECK(cudaDeviceSynchronize());
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, begin, end));

  std::vector<int> count(kNodes), ref(kNodes, -1);
  CHECK(cudaMemcpy(count.data(), d_count, kNodes * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned int failed = 0;
  CHECK(cudaMemcpyFromSymbol(&failed, g_failed_launches, sizeof(failed)));
  reference(hx, hy, ref, 0, 0, 0, kWorld, 0);
  const bool ok = (count == ref);
  uint64_t h = 0xcbf29ce484222325ull;
  for (int v : count) h = (h ^ (uint32_t)v) * 0x100000001b3ull;
  printf("result example=recursive_template input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failed);
  CHECK(cudaFree(d_x));
  CHECK(cudaFree(d_y));
  CHECK(cudaFree(d_count));
  return (ok && failed == 0) ? 0 : 1;
}
