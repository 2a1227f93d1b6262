// graph_descriptor.cu - corpus program for dpopt, in the style of a graph
// analytics suite: level-synchronous BFS over a CSR graph whose descriptor
// is a small class (user-provided constructor, accessor member functions)
// passed by value to the parent and to the child. Parents run in blocks of
// 1,024 threads; one thread per frontier vertex launches a child over its
// out-edges.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o graph_descriptor graph_descriptor.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define BLOCK_SIZE 1024
#define EDGE_BLOCK 64
#define INF_DIST 0x7fffffff

#define check_cuda(ans) gpu_assert((ans), __FILE__, __LINE__)
inline void gpu_assert(cudaError_t code, const char *file, int line) {
  if (code != cudaSuccess) {
    fprintf(stderr, "gpu_assert: %s %s %d\n", cudaGetErrorString(code), file, line);
    exit(code);
  }
}

__device__ unsigned g_launch_failures;

class CsrGraph {
 public:
  __host__ __device__ CsrGraph(int nodes, int edges, const int *row_start, const int *edge_dst)
      : nnodes(nodes), nedges(edges), row_start_(row_start), edge_dst_(edge_dst) {}
  __device__ int first_edge(int v) const { return row_start_[v]; }
  __device__ int out_degree(int v) const { return row_start_[v + 1] - row_start_[v]; }
  __device__ int edge_dest(int e) const { return edge_dst_[e]; }
  int nnodes;
  int nedges;

 private:
  const int *row_start_;
  const int *edge_dst_;
};

// One thread per out-edge of `src`: discover unvisited neighbours.
__global__ void visit_edges(CsrGraph graph, int *dist, int first, int degree, int level, int *changed) {
  int e = blockIdx.x * blockDim.x + threadIdx.x;
  if (e >= degree) return;
  int dst = graph.edge_dest(first + e);
  if (atomicCAS(&dist[dst], INF_DIST, level + 1) == INF_DIST) *changed = 1;
}

__global__ void bfs_level(CsrGraph graph, int *dist, int level, int *changed) {
  int src = blockIdx.x * BLOCK_SIZE + threadIdx.x;
  if (src >= graph.nnodes || dist[src] != level) return;
  int degree = graph.out_degree(src);
  if (degree == 0) return;
#pragma dp threshold(128) coarsen(4)
  visit_edges<<<(degree + EDGE_BLOCK - 1) / EDGE_BLOCK, EDGE_BLOCK>>>(graph, dist, graph.first_edge(src), degree, level, changed);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
}

static uint64_t hash_bytes(const void *p, size_t n) {
  const unsigned char *b = static_cast<const unsigned char *>(p);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

int main() {
  const int n = 24000;
  std::vector<int> row(n + 1, 0), col;
  for (int v = 0; v < n; ++v) {  // mostly small degrees, a few hubs
    int deg = (v % 89 == 0) ? 200 + (v * 31) % 700 : (v * 7) % 11;
    for (int k = 0; k < deg; ++k)
      col.push_back((int)(((long long)v * 7919 + (long long)k * 104729 + k * k) % n));
    row[v + 1] = (int)col.size();
  }
  const int m = (int)col.size();
  check_cuda(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 15));
  int *d_row, *d_col, *d_dist, *d_changed;
  check_cuda(cudaMalloc(&d_row, (n + 1) * sizeof(int)));
  check_cuda(cudaMalloc(&d_col, m * sizeof(int)));
  check_cuda(cudaMalloc(&d_dist, n * sizeof(int)));
  check_cuda(cudaMalloc(&d_changed, sizeof(int)));
  check_cuda(cudaMemcpy(d_row, row.data(), (n + 1) * sizeof(int), cudaMemcpyHostToDevice));
  check_cuda(cudaMemcpy(d_col, col.data(), m * sizeof(int), cudaMemcpyHostToDevice));
  std::vector<int> dist(n, INF_DIST);
  dist[0] = 0;
  check_cuda(cudaMemcpy(d_dist, dist.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CsrGraph graph(n, m, d_row, d_col);

  cudaEvent_t start, stop;
  check_cuda(cudaEventCreate(&start));
  check_cuda(cudaEventCreate(&stop));
  check_cuda(cudaEventRecord(start));
  int level = 0, changed = 1;
  while (changed) {
    changed = 0;
    check_cuda(cudaMemcpy(d_changed, &changed, sizeof(int), cudaMemcpyHostToDevice));
    bfs_level<<<(n + BLOCK_SIZE - 1) / BLOCK_SIZE, BLOCK_SIZE>>>(graph, d_dist, level, d_changed);
    check_cuda(cudaGetLastError());
    check_cuda(cudaMemcpy(&changed, d_changed, sizeof(int), cudaMemcpyDeviceToHost));
    ++level;
  }
  check_cuda(cudaEventRecord(stop));
  check_cuda(cudaEventSynchronize(stop));
  float ms = 0.f;
  check_cuda(cudaEventElapsedTime(&ms, start, stop));
  check_cuda(cudaMemcpy(dist.data(), d_dist, n * sizeof(int), cudaMemcpyDeviceToHost));
  unsigned failures = 0;
  check_cuda(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));

  // CPU reference: queue-based BFS from vertex 0.
  std::vector<int> ref(n, INF_DIST), queue(1, 0);
  ref[0] = 0;
  for (size_t head = 0; head < queue.size(); ++head) {
    int v = queue[head];
    for (int e = row[v]; e < row[v + 1]; ++e)
      if (ref[col[e]] == INF_DIST) { ref[col[e]] = ref[v] + 1; queue.push_back(col[e]); }
  }
  bool ok = (ref == dist);
  printf("result example=graph_descriptor input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)hash_bytes(dist.data(), n * sizeof(int)), failures);
  cudaFree(d_row); cudaFree(d_col); cudaFree(d_dist); cudaFree(d_changed);
  return (ok && failures == 0) ? 0 : 1;
}
