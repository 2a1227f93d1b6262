// bfs.cu - level-synchronous breadth-first search on a graph with skewed
// degrees, in the style of SHOC's BFS with dynamic parallelism.
//
// Two GPU implementations share one host loop (one kernel launch per level,
// until a level discovers no new vertex):
//   flat : one thread per frontier vertex walks its neighbour list serially.
//   cdp  : one thread per frontier vertex launches a child grid with one
//          thread per neighbour (CUDA dynamic parallelism).
//
// Input: a seeded R-MAT generator (a=0.57, b=c=0.19, d=0.05; 2^scale
// vertices, ef*2^scale generated edges), symmetrised, with self loops and
// duplicate edges removed. Vertex labels are not permuted, so vertex 0 is the
// largest hub. Alternatively a LonestarGPU binary .gr file (used as directed).
//
// Flags: --scale S (14)  --ef E (16)  --seed X (1)  --gr PATH  --road W (a W x W
//        road-like grid instead of R-MAT)  --web N (a power-law
//        web-like graph of N pages, like cnr-2000)  --src V (0)
//        --reps R (5)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o bfs bfs.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "common/web_graph.h"  // make_web

// Threads per block of the host launches of the parent kernel; -DPARENT_BLOCK=1024 checks that transformed parents stay launchable with 1,024 threads.
#ifndef PARENT_BLOCK
#define PARENT_BLOCK 256
#endif

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n",                    \
                   cudaGetErrorName(err_), __FILE__, __LINE__,                \
                   cudaGetErrorString(err_));                                 \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// ---------------------------------------------------------------- kernels --

// Number of failed device-side launches (checked by the host).
__device__ unsigned int g_launch_failures = 0;
#ifdef DPOPT_STATS
// Launch statements executed: the device-side launches of the original
// program. dpopt's generated code defines the two functions (-DDPOPT_STATS).
__device__ unsigned long long g_launch_requests = 0;
extern "C" void dpopt_stats_report(FILE *) __attribute__((weak));
extern "C" void dpopt_stats_reset(void) __attribute__((weak));
#endif

// Flat version: each thread of the current level visits its neighbours.
__global__ void bfs_flat(const int* row, const int* col, int* level, int n,
                         int cur, int* changed) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  for (int e = row[v]; e < row[v + 1]; ++e) {
    int nb = col[e];
    if (level[nb] == -1) {  // benign race: all writers store cur + 1
      level[nb] = cur + 1;
      *changed = 1;
    }
  }
}

// Child grid: one thread per neighbour of one frontier vertex.
__global__ void bfs_child(const int* row, const int* col, int* level,
                          int start, int deg, int cur, int* changed) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= deg) return;
  int nb = col[start + i];
  if (level[nb] == -1) {  // benign race: all writers store cur + 1
    level[nb] = cur + 1;
    *changed = 1;
  }
}

// CDP version: each thread of the current level launches a child grid.
__global__ void bfs_parent(const int* row, const int* col, int* level, int n,
                           int cur, int* changed) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n || level[v] != cur) return;
  int deg = row[v + 1] - row[v];
  if (deg > 0) {
#ifdef DPOPT_STATS
    atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8)
    bfs_child<<<(deg + 31) / 32, 32>>>(row, col, level, row[v], deg, cur, changed);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
  }
}

// ------------------------------------------------------------------ graph --

struct Graph {
  int n = 0;
  std::vector<int> row;  // n + 1 offsets
  std::vector<int> col;  // row[n] destinations
};

static uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static Graph csr_from_lists(std::vector<std::vector<int>>& adj);

static Graph make_rmat(int scale, int ef, uint64_t seed) {
  const double a = 0.57, b = 0.19, c = 0.19;
  const int64_t n = int64_t(1) << scale;
  const int64_t m = n * ef;
  std::vector<std::vector<int>> adj(n);
  uint64_t s = seed;
  for (int64_t k = 0; k < m; ++k) {
    int64_t u = 0, v = 0;
    for (int bit = scale - 1; bit >= 0; --bit) {
      double r = double(splitmix64(s) >> 11) * 0x1.0p-53;
      if (r < a) {
      } else if (r < a + b) {
        v |= int64_t(1) << bit;
      } else if (r < a + b + c) {
        u |= int64_t(1) << bit;
      } else {
        u |= int64_t(1) << bit;
        v |= int64_t(1) << bit;
      }
    }
    if (u == v) continue;  // no self loops
    adj[u].push_back(int(v));
    adj[v].push_back(int(u));  // symmetric
  }
  return csr_from_lists(adj);
}

// Road-like graph (paper 000 Sec. VIII-D: USA-road-NY, 264k vertices, degree
// about 2.8): a side x side grid whose horizontal and vertical links are each
// kept with probability 0.7 (seeded); symmetric, degrees 0 to 4, a large
// diameter (hundreds of BFS levels) and tiny children: the worst case for CDP.
static Graph make_road(int side, uint64_t seed) {
  const int64_t n = int64_t(side) * side;
  std::vector<std::vector<int>> adj(n);
  uint64_t s = seed;
  for (int64_t u = 0; u < n; ++u) {
    const int64_t x = u % side;
    for (int64_t v : {x + 1 < side ? u + 1 : -1, u + side < n ? u + side : -1}) {
      if (v < 0 || (splitmix64(s) >> 11) * 0x1.0p-53 >= 0.7) continue;
      adj[u].push_back(int(v));
      adj[v].push_back(int(u));
    }
  }
  return csr_from_lists(adj);
}

// Power-law web-like graph (like cnr-2000; common/web_graph.h), symmetrised.
static Graph make_web(int64_t n, uint64_t seed) {
  std::vector<std::vector<int>> adj(n);
  web_graph_edges(n, seed, [&adj](int64_t u, int64_t v) {
    adj[u].push_back(int(v));
    adj[v].push_back(int(u));
  });
  return csr_from_lists(adj);
}

// Sorted, duplicate-free neighbour lists as CSR.
static Graph csr_from_lists(std::vector<std::vector<int>>& adj) {
  const int64_t n = int64_t(adj.size());
  Graph g;
  g.n = int(n);
  g.row.assign(n + 1, 0);
  int64_t total = 0;
  for (int64_t u = 0; u < n; ++u) {
    std::sort(adj[u].begin(), adj[u].end());
    adj[u].erase(std::unique(adj[u].begin(), adj[u].end()), adj[u].end());
    total += int64_t(adj[u].size());
    if (total > INT32_MAX) {
      std::fprintf(stderr, "graph too large for 32-bit offsets\n");
      std::exit(1);
    }
    g.row[u + 1] = int(total);
  }
  g.col.reserve(total);
  for (int64_t u = 0; u < n; ++u)
    g.col.insert(g.col.end(), adj[u].begin(), adj[u].end());
  return g;
}

// LonestarGPU binary .gr: u64 version, u64 weight size, u64 nodes, u64 edges,
// nodes x u64 row-end offsets, edges x u32 destinations (+pad), weights.
static Graph read_gr(const char* path) {
  FILE* f = std::fopen(path, "rb");
  if (!f) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
  uint64_t hdr[4];
  if (std::fread(hdr, sizeof(uint64_t), 4, f) != 4 || hdr[0] != 1) {
    std::fprintf(stderr, "%s: bad .gr header\n", path);
    std::exit(1);
  }
  const uint64_t n = hdr[2], m = hdr[3];
  if (n >= uint64_t(INT32_MAX) || m > uint64_t(INT32_MAX)) {
    std::fprintf(stderr, "%s: graph too large for 32-bit indices\n", path);
    std::exit(1);
  }
  std::vector<uint64_t> ends(n);
  std::vector<uint32_t> dst(m);
  if (std::fread(ends.data(), sizeof(uint64_t), n, f) != n ||
      std::fread(dst.data(), sizeof(uint32_t), m, f) != m) {
    std::fprintf(stderr, "%s: truncated .gr file\n", path);
    std::exit(1);
  }
  std::fclose(f);  // padding and edge weights are ignored
  Graph g;
  g.n = int(n);
  g.row.assign(n + 1, 0);
  for (uint64_t i = 0; i < n; ++i) {
    if (ends[i] > m || (i > 0 && ends[i] < ends[i - 1])) {
      std::fprintf(stderr, "%s: bad row offsets\n", path);
      std::exit(1);
    }
    g.row[i + 1] = int(ends[i]);
  }
  if (n > 0 && ends[n - 1] != m) {
    std::fprintf(stderr, "%s: row offsets do not end at #edges\n", path);
    std::exit(1);
  }
  g.col.resize(m);
  for (uint64_t e = 0; e < m; ++e) {
    if (dst[e] >= n) { std::fprintf(stderr, "%s: bad edge\n", path); std::exit(1); }
    g.col[e] = int(dst[e]);
  }
  return g;
}

static std::vector<int> cpu_bfs(const Graph& g, int src) {
  std::vector<int> level(g.n, -1), queue;
  queue.reserve(g.n);
  level[src] = 0;
  queue.push_back(src);
  for (size_t head = 0; head < queue.size(); ++head) {
    int v = queue[head];
    for (int e = g.row[v]; e < g.row[v + 1]; ++e) {
      int nb = g.col[e];
      if (level[nb] == -1) { level[nb] = level[v] + 1; queue.push_back(nb); }
    }
  }
  return level;
}

static uint64_t fnv1a64(const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 0x100000001b3ull; }
  return h;
}

// ------------------------------------------------------------------- host --

// The load-balanced flat version (impl=flat-lb): frontier queues, thread/
// warp/block expansion by degree, one persistent grid for all levels.
#include "common/lb_frontier.cuh"

enum class Impl { Flat, FlatLb, Cdp };

static const char* impl_name(Impl impl) {
  return impl == Impl::Flat ? "flat" : impl == Impl::FlatLb ? "flat-lb" : "cdp";
}

struct DeviceGraph {
  int n;
  int *row, *col, *level, *changed;
};

static void reset_levels(const DeviceGraph& d, int src) {
  const int zero = 0;
  CK(cudaMemset(d.level, 0xff, sizeof(int) * d.n));  // all -1
  CK(cudaMemcpy(d.level + src, &zero, sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaDeviceSynchronize());
}

static lb::FrontierRunner g_lb;  // set up once, outside the timing

// One full BFS from an already reset level array; returns elapsed ms.
static float run_bfs(Impl impl, const DeviceGraph& d, int src, cudaEvent_t t0,
                     cudaEvent_t t1) {
  if (impl == Impl::FlatLb) {  // one grid for all levels, no host round trip
    CK(cudaEventRecord(t0));
    CK(lb::frontier_launch(g_lb, lb::BfsPolicy{d.row, d.col, d.level}, src));
    CK(cudaEventRecord(t1));
    CK(cudaEventSynchronize(t1));
    float ms = 0.f;
    CK(cudaEventElapsedTime(&ms, t0, t1));
    return ms;
  }
  const int threads = 256;
  const int blocks = (d.n + threads - 1) / threads;
  const int parent_blocks = (d.n + PARENT_BLOCK - 1) / PARENT_BLOCK;
  CK(cudaEventRecord(t0));
  for (int cur = 0;; ++cur) {
    int changed = 0;
    CK(cudaMemset(d.changed, 0, sizeof(int)));
    if (impl == Impl::Flat)
      bfs_flat<<<blocks, threads>>>(d.row, d.col, d.level, d.n, cur, d.changed);
    else
      bfs_parent<<<parent_blocks, PARENT_BLOCK>>>(d.row, d.col, d.level, d.n, cur, d.changed);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    CK(cudaMemcpy(&changed, d.changed, sizeof(int), cudaMemcpyDeviceToHost));
    if (!changed) break;
  }
  CK(cudaEventRecord(t1));
  CK(cudaEventSynchronize(t1));
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

static void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--scale S] [--ef E] [--seed X] [--gr PATH] [--road W] [--web N] "
               "[--src V] [--reps R]\n", prog);
  std::exit(1);
}

// With -DDPOPT_RUNTIME_KNOBS dpopt's tuning values are read at run time from
// environment variables (DPOPT_THRESHOLD, ...): one build serves a sweep.
#ifdef DPOPT_RUNTIME_KNOBS
extern "C" int dpopt_knobs_from_env(void) __attribute__((weak));
#endif

int main(int argc, char** argv) {
#ifdef DPOPT_RUNTIME_KNOBS
  if (dpopt_knobs_from_env) std::printf("info runtime_knobs_set=%d\n", dpopt_knobs_from_env());
#endif
  int scale = 14, ef = 16, reps = 5, road = 0;
  long long web = 0;
  long long src_arg = -1;
  uint64_t seed = 1;
  std::string gr;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const char* v = argv[++i];
    if (a == "--scale") scale = std::atoi(v);
    else if (a == "--ef") ef = std::atoi(v);
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "--gr") gr = v;
    else if (a == "--road") road = std::atoi(v);
    else if (a == "--web") web = std::atoll(v);
    else if (a == "--src") src_arg = std::atoll(v);
    else if (a == "--reps") reps = std::atoi(v);
    else usage(argv[0]);
  }
  if (scale < 1 || scale > 30 || ef < 1 || reps < 1 || road < 0 || road > 40000 ||
      web < 0 || web > (1ll << 26)) usage(argv[0]);

  std::string input;
  Graph g;
  if (!gr.empty()) {
    g = read_gr(gr.c_str());
    size_t slash = gr.find_last_of('/');
    input = slash == std::string::npos ? gr : gr.substr(slash + 1);
  } else if (road > 0) {
    g = make_road(road, seed);
    input = "road-w" + std::to_string(road);
  } else if (web > 0) {
    g = make_web(web, seed);
    input = "web-n" + std::to_string(web);
  } else {
    g = make_rmat(scale, ef, seed);
    input = "rmat-s" + std::to_string(scale) + "-e" + std::to_string(ef);
  }
  if (g.n == 0) { std::fprintf(stderr, "empty graph\n"); return 1; }
  const int m = g.row[g.n];
  int max_deg = 0, hub = 0;
  for (int v = 0; v < g.n; ++v) {
    int deg = g.row[v + 1] - g.row[v];
    if (deg > max_deg) { max_deg = deg; hub = v; }
  }
  int src = 0;
  if (src_arg >= 0) {
    if (src_arg >= g.n) { std::fprintf(stderr, "--src out of range\n"); return 1; }
    src = int(src_arg);
  } else if (g.row[1] == g.row[0]) {
    src = hub;
    std::fprintf(stderr, "note: vertex 0 has degree 0, using source %d (degree %d)\n",
                 src, max_deg);
  }

  const std::vector<int> ref = cpu_bfs(g, src);
  const int levels = 1 + *std::max_element(ref.begin(), ref.end());

  cudaDeviceProp prop;
  CK(cudaSetDevice(0));
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t pending = std::min<size_t>(std::max<size_t>(2048, g.n), 1u << 20);
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

  DeviceGraph d;
  d.n = g.n;
  CK(cudaMalloc(&d.row, sizeof(int) * (g.n + 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * std::max(m, 1)));
  CK(cudaMalloc(&d.level, sizeof(int) * g.n));
  CK(cudaMalloc(&d.changed, sizeof(int)));
  CK(cudaMemcpy(d.row, g.row.data(), sizeof(int) * (g.n + 1), cudaMemcpyHostToDevice));
  if (m > 0)
    CK(cudaMemcpy(d.col, g.col.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
  lb::frontier_setup<lb::BfsPolicy>(g_lb, g.n);
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));

  std::printf("info example=bfs vertices=%d edges=%d max_degree=%d levels=%d gpu=%s\n",
              g.n, m, max_deg, levels, prop.name);

  bool ok = true;
  std::vector<int> out(g.n);
  const Impl impls[3] = {Impl::Flat, Impl::FlatLb, Impl::Cdp};
  for (int ii = 0; ii < lb::impls_to_run(3); ++ii) {  // DPOPT_FLAT_ONLY=1: no cdp
    const Impl impl = impls[ii];
    const unsigned int zero = 0;
    CK(cudaMemcpyToSymbol(g_launch_failures, &zero, sizeof(zero)));
    bool verified = true;
    std::vector<float> times;
    for (int r = 0; r <= reps; ++r) {  // r == 0 is the untimed warm-up
#ifdef DPOPT_STATS
      if (r == reps) {  // count the launches of the last run only
        const unsigned long long zero64 = 0;
        cudaMemcpyToSymbol(g_launch_requests, &zero64, sizeof zero64);
        if (dpopt_stats_reset) dpopt_stats_reset();
      }
#endif
      reset_levels(d, src);
      float ms = run_bfs(impl, d, src, t0, t1);
      if (r > 0) times.push_back(ms);
      CK(cudaMemcpy(out.data(), d.level, sizeof(int) * g.n, cudaMemcpyDeviceToHost));
      if (out != ref) verified = false;
    }
#ifdef DPOPT_STATS
    {
      unsigned long long requests = 0;
      cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
      printf("stats example=bfs launch_requests=%llu\n", requests);
      if (dpopt_stats_report) dpopt_stats_report(stdout);
    }
#endif
    unsigned int failures = 0;
    CK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));
    std::sort(times.begin(), times.end());
    const size_t k = times.size();
    const double median =
        k % 2 ? times[k / 2] : 0.5 * (double(times[k / 2 - 1]) + times[k / 2]);
    const uint64_t sum = fnv1a64(out.data(), sizeof(int) * out.size());
    std::printf("result example=bfs input=%s impl=%s time_ms=%.4f verified=%s "
                "checksum=%016llx launch_failures=%u\n",
                input.c_str(), impl_name(impl), median,
                verified ? "yes" : "no", (unsigned long long)sum, failures);
    if (!verified || failures != 0) ok = false;
  }

  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  CK(cudaFree(d.row));
  CK(cudaFree(d.col));
  CK(cudaFree(d.level));
  CK(cudaFree(d.changed));
  lb::frontier_free(g_lb);
  return ok ? 0 : 1;
}
