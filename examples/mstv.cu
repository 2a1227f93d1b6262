// mstv.cu - verification of a minimum spanning forest on a weighted graph
// with skewed degrees; the verify kernel ("MST verify", mstv) of
// LonestarGPU's / KLAP's Boruvka MST with dynamic parallelism.
//
// Edges are totally ordered by (weight, min endpoint, max endpoint), so the
// minimum spanning forest is unique. An undirected edge's id is its rank in
// (min endpoint, max endpoint) order, so the packed 64-bit key
// weight << 32 | id orders edges exactly that way.
//
// The forest to verify is computed on the CPU (Kruskal), optionally
// corrupted (--corrupt K), rooted (BFS from the smallest vertex of each tree)
// and given to the GPU with binary-lifting tables: up[j][v], the 2^j-th
// ancestor of v (a root is its own ancestor), and upmax[j][v], the largest
// key on the way there. The GPU gives every directed edge (CSR entry) e = v-u
// a verdict:
//   1 tree edge,
//   2 u and v lie in different trees (the forest does not span),
//   3 e is lighter than the heaviest tree edge on the tree path between u
//     and v (cycle property violated: the forest is not minimum),
//   0 otherwise (e is heavier than every edge of the tree path).
// A spanning forest is the minimum one exactly when no verdict is 2 or 3.
// (LonestarGPU's verify kernel checks one Boruvka round's choices: per
// component, a scan of the edges of the vertex that owns the chosen edge.
// This checks a whole forest with the same nesting: parent per vertex, child
// per edge.)
// Two implementations:
//   flat : one thread per vertex gives its edges their verdicts serially.
//   cdp  : one thread per vertex launches a child grid with one thread per
//          edge (CUDA dynamic parallelism).
// The CPU reference is independent of the lifting tables: it sweeps all
// edges in key order, joining the forest edges in a union-find; a non-forest
// edge connects two vertices already joined exactly when every edge of its
// tree path is lighter. Every GPU run must match it exactly. time_ms is the
// verify kernel (with its children).
//
// Input: a seeded R-MAT generator (a=0.57, b=c=0.19, d=0.05; 2^scale
// vertices, ef*2^scale generated edges), symmetrised, with self loops and
// duplicate edges removed; each undirected edge gets an integer weight drawn
// uniformly from [1, 100] (the same in both directions). Vertex labels are not
// permuted, so vertex 0 is the largest hub. Alternatively a LonestarGPU binary
// .gr file with 4-byte edge weights, made undirected: self loops are dropped
// and u-v and v-u become one edge with the smaller of their weights.
// --corrupt K (default 0: verify the minimum spanning forest itself) changes
// the forest K times, seeded: even steps replace a random edge of the tree
// path between the ends of a non-forest edge with that edge (the forest
// still spans, but is heavier), odd steps remove a random forest edge; the
// input name gets the suffix -cK.
//
// Flags: --scale S (14)  --ef E (16)  --seed X (1)  --gr PATH  --corrupt K (0)
//        --reps R (5)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o mstv mstv.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

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

// Verdicts of a directed edge.
#define MSTV_OK 0     // heavier than every edge of its tree path
#define MSTV_TREE 1   // a forest edge
#define MSTV_SPLIT 2  // its ends lie in different trees
#define MSTV_CYCLE 3  // lighter than an edge of its tree path

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

__device__ unsigned long long mstv_max(unsigned long long a,
                                       unsigned long long b) {
  return a > b ? a : b;
}

// Largest key on the tree path between a and b (same tree, a != b), with
// the lifting tables up[j * n + v], upmax[j * n + v], j < levels.
__device__ unsigned long long mstv_path_max(const int* depth, const int* up,
                                            const unsigned long long* upmax,
                                            int n, int levels, int a, int b) {
  unsigned long long m = 0;
  if (depth[a] < depth[b]) { int t = a; a = b; b = t; }
  // Lift a to the depth of b.
  for (int j = 0, diff = depth[a] - depth[b]; diff != 0; ++j, diff >>= 1) {
    if (diff & 1) {
      const size_t i = size_t(j) * n + a;
      m = mstv_max(m, upmax[i]);
      a = up[i];
    }
  }
  if (a == b) return m;
  // Lift both to just below their lowest common ancestor.
  for (int j = levels - 1; j >= 0; --j) {
    const size_t ia = size_t(j) * n + a, ib = size_t(j) * n + b;
    if (up[ia] != up[ib]) {
      m = mstv_max(m, mstv_max(upmax[ia], upmax[ib]));
      a = up[ia];
      b = up[ib];
    }
  }
  return mstv_max(m, mstv_max(upmax[a], upmax[b]));  // the two last edges
}

// Verdict of edge e of vertex v.
__device__ unsigned char mstv_verdict(const int* col,
                                      const unsigned int* weight,
                                      const int* eid,
                                      const unsigned char* in_forest,
                                      const int* tree, const int* depth,
                                      const int* up,
                                      const unsigned long long* upmax, int n,
                                      int levels, int v, int e) {
  const int u = col[e];
  const int k = eid[e];
  if (in_forest[k]) return MSTV_TREE;
  if (tree[u] != tree[v]) return MSTV_SPLIT;
  const unsigned long long key =
      ((unsigned long long)weight[e] << 32) | (unsigned int)k;
  // Keys are unique and e is not on the path: the maximum is never equal.
  return mstv_path_max(depth, up, upmax, n, levels, v, u) > key ? MSTV_CYCLE
                                                                : MSTV_OK;
}

// Flat version: each vertex gives its edges their verdicts.
__global__ void mstv_flat(const int* row, const int* col,
                          const unsigned int* weight, const int* eid,
                          const unsigned char* in_forest, const int* tree,
                          const int* depth, const int* up,
                          const unsigned long long* upmax, int n, int levels,
                          unsigned char* verdict) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  for (int e = row[v]; e < row[v + 1]; ++e)
    verdict[e] = mstv_verdict(col, weight, eid, in_forest, tree, depth, up,
                              upmax, n, levels, v, e);
}

// Child grid: one thread per edge of vertex v.
__global__ void mstv_child(const int* col, const unsigned int* weight,
                           const int* eid, const unsigned char* in_forest,
                           const int* tree, const int* depth, const int* up,
                           const unsigned long long* upmax, int n, int levels,
                           unsigned char* verdict, int start, int deg, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= deg) return;
  int e = start + i;
  verdict[e] = mstv_verdict(col, weight, eid, in_forest, tree, depth, up,
                            upmax, n, levels, v, e);
}

// CDP version: each vertex launches a child grid over its edges.
__global__ void mstv_parent(const int* row, const int* col,
                            const unsigned int* weight, const int* eid,
                            const unsigned char* in_forest, const int* tree,
                            const int* depth, const int* up,
                            const unsigned long long* upmax, int n, int levels,
                            unsigned char* verdict) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  int deg = row[v + 1] - row[v];
  if (deg > 0) {
#ifdef DPOPT_STATS
    atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8)
    mstv_child<<<(deg + 31) / 32, 32>>>(col, weight, eid, in_forest, tree, depth, up, upmax, n, levels, verdict, row[v], deg, v);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
  }
}

// ------------------------------------------------------------------ graph --

#include "common/mst_graph.h"  // Graph, make_rmat, read_gr, cpu_kruskal, fnv1a64

// A rooted forest: BFS from the smallest vertex of each tree.
struct Forest {
  std::vector<int> parent;       // a root is its own parent
  std::vector<int> parent_edge;  // id of the edge to the parent, -1 at a root
  std::vector<int> depth;
  std::vector<int> tree;         // the root of the vertex's tree
  int trees = 0, max_depth = 0;
};

static Forest root_forest(const Graph& g,
                          const std::vector<unsigned char>& in_forest) {
  Forest f;
  f.parent.assign(g.n, -1);
  f.parent_edge.assign(g.n, -1);
  f.depth.assign(g.n, 0);
  f.tree.assign(g.n, -1);
  std::vector<int> queue;
  queue.reserve(g.n);
  for (int r = 0; r < g.n; ++r) {
    if (f.parent[r] != -1) continue;
    ++f.trees;
    f.parent[r] = r;
    f.tree[r] = r;
    queue.clear();
    queue.push_back(r);
    for (size_t head = 0; head < queue.size(); ++head) {
      const int v = queue[head];
      for (int e = g.row[v]; e < g.row[v + 1]; ++e) {
        const int u = g.col[e];
        if (!in_forest[g.eid[e]] || f.parent[u] != -1) continue;
        f.parent[u] = v;
        f.parent_edge[u] = g.eid[e];
        f.depth[u] = f.depth[v] + 1;
        f.tree[u] = r;
        f.max_depth = std::max(f.max_depth, f.depth[u]);
        queue.push_back(u);
      }
    }
  }
  return f;
}

// K seeded changes of the forest: even steps swap a non-forest edge whose
// ends lie in one tree for a random edge of the tree path between its ends,
// odd steps remove a random forest edge. A step that finds no such edge
// changes nothing.
static void corrupt_forest(const Graph& g, std::vector<unsigned char>& in_forest,
                           int count, uint64_t seed) {
  const int mu = int(g.eu.size());
  if (mu == 0) return;
  uint64_t s = seed ^ 0x5851F42D4C957F2Dull;
  for (int i = 0; i < count; ++i) {
    const Forest f = root_forest(g, in_forest);
    const int start = int(splitmix64(s) % uint64_t(mu));
    for (int j = 0; j < mu; ++j) {
      const int k = (start + j) % mu;
      if (i % 2 == 1) {
        if (!in_forest[k]) continue;
        in_forest[k] = 0;
        break;
      }
      int a = g.eu[k], b = g.ev[k];
      if (in_forest[k] || f.tree[a] != f.tree[b]) continue;
      std::vector<int> path;  // tree path between a and b
      while (a != b) {
        if (f.depth[a] >= f.depth[b]) {
          path.push_back(f.parent_edge[a]);
          a = f.parent[a];
        } else {
          path.push_back(f.parent_edge[b]);
          b = f.parent[b];
        }
      }
      in_forest[path[splitmix64(s) % path.size()]] = 0;
      in_forest[k] = 1;
      break;
    }
  }
}

// Binary-lifting tables of a rooted forest (levels * n entries each):
// up[j * n + v] is the 2^j-th ancestor of v (at most the root) and
// upmax[j * n + v] the largest key on the way there (0 at a root).
static int lifting_tables(const Graph& g, const Forest& f, std::vector<int>& up,
                          std::vector<unsigned long long>& upmax) {
  int levels = 1;
  while ((int64_t(1) << levels) <= f.max_depth) ++levels;
  const size_t n = size_t(g.n);
  up.assign(levels * n, 0);
  upmax.assign(levels * n, 0);
  for (size_t v = 0; v < n; ++v) {
    up[v] = f.parent[v];
    const int k = f.parent_edge[v];
    upmax[v] = k < 0 ? 0 : (uint64_t(g.ew[k]) << 32) | uint32_t(k);
  }
  for (int j = 1; j < levels; ++j) {
    for (size_t v = 0; v < n; ++v) {
      const size_t mid = size_t(up[(j - 1) * n + v]);
      up[j * n + v] = up[(j - 1) * n + mid];
      upmax[j * n + v] = std::max(upmax[(j - 1) * n + v], upmax[(j - 1) * n + mid]);
    }
  }
  return levels;
}

// Verdicts of every directed edge, without the lifting tables: edges in key
// order, forest edges joined in a union-find as they come; a non-forest edge
// whose ends are already joined is heavier than its whole tree path.
static std::vector<unsigned char> cpu_verify(
    const Graph& g, const std::vector<unsigned char>& in_forest) {
  const int mu = int(g.eu.size());
  DisjointSets trees(g.n);  // the whole forest
  for (int k = 0; k < mu; ++k)
    if (in_forest[k]) trees.unite(g.eu[k], g.ev[k]);
  std::vector<uint64_t> order(mu);
  for (int k = 0; k < mu; ++k) order[k] = (uint64_t(g.ew[k]) << 32) | uint32_t(k);
  std::sort(order.begin(), order.end());
  DisjointSets lighter(g.n);  // the forest edges lighter than the current one
  std::vector<unsigned char> by_edge(mu);
  for (uint64_t key : order) {
    const int k = int(key & 0xffffffffu);
    const int a = g.eu[k], b = g.ev[k];
    if (in_forest[k]) {
      lighter.unite(a, b);
      by_edge[k] = MSTV_TREE;
    } else if (trees.find(a) != trees.find(b)) {
      by_edge[k] = MSTV_SPLIT;
    } else {
      by_edge[k] = lighter.find(a) == lighter.find(b) ? MSTV_OK : MSTV_CYCLE;
    }
  }
  std::vector<unsigned char> verdict(g.row[g.n]);
  for (int e = 0; e < g.row[g.n]; ++e) verdict[e] = by_edge[g.eid[e]];
  return verdict;
}

// ------------------------------------------------------------------- host --

// The load-balanced flat version (impl=flat-lb): a thread per edge.
#define LB_MST_VERIFY
#include "common/lb_mst.cuh"

enum class Impl { Flat, FlatLb, Cdp };

static const char* impl_name(Impl impl) {
  return impl == Impl::Flat ? "flat" : impl == Impl::FlatLb ? "flat-lb" : "cdp";
}

struct DeviceGraph {
  int n, levels, m;
  int *row, *col, *eid;
  unsigned int* weight;
  unsigned char* in_forest;
  int *tree, *depth, *up;
  unsigned long long* upmax;
  unsigned char* verdict;
};

// One verification; returns elapsed ms.
static float run_verify(Impl impl, const DeviceGraph& d, cudaEvent_t t0,
                        cudaEvent_t t1) {
  const int threads = 256;
  const int blocks = (d.n + threads - 1) / threads;
  const int parent_blocks = (d.n + PARENT_BLOCK - 1) / PARENT_BLOCK;
  CK(cudaEventRecord(t0));
  if (impl == Impl::Flat)
    mstv_flat<<<blocks, threads>>>(d.row, d.col, d.weight, d.eid, d.in_forest,
                                   d.tree, d.depth, d.up, d.upmax, d.n,
                                   d.levels, d.verdict);
  else if (impl == Impl::FlatLb)
    lb::mstv_launch(d.row, d.col, d.weight, d.eid, d.in_forest, d.tree, d.depth,
                    d.up, d.upmax, d.n, d.levels, d.m, d.verdict);
  else
    mstv_parent<<<parent_blocks, PARENT_BLOCK>>>(d.row, d.col, d.weight, d.eid,
                                                 d.in_forest, d.tree, d.depth, d.up,
                                                 d.upmax, d.n, d.levels, d.verdict);
  CK(cudaGetLastError());
  CK(cudaEventRecord(t1));
  CK(cudaDeviceSynchronize());  // parents and all their children
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

static void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--scale S] [--ef E] [--seed X] [--gr PATH] "
               "[--corrupt K] [--reps R]\n", prog);
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
  int scale = 14, ef = 16, reps = 5, corrupt = 0;
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
    else if (a == "--corrupt") corrupt = std::atoi(v);
    else if (a == "--reps") reps = std::atoi(v);
    else usage(argv[0]);
  }
  if (scale < 1 || scale > 30 || ef < 1 || reps < 1 || corrupt < 0) usage(argv[0]);

  std::string input;
  Graph g;
  if (!gr.empty()) {
    g = read_gr(gr.c_str());
    size_t slash = gr.find_last_of('/');
    input = slash == std::string::npos ? gr : gr.substr(slash + 1);
  } else {
    g = make_rmat(scale, ef, seed);
    input = "rmat-s" + std::to_string(scale) + "-e" + std::to_string(ef);
  }
  if (g.n == 0) { std::fprintf(stderr, "empty graph\n"); return 1; }
  const int m = g.row[g.n];
  const int mu = int(g.eu.size());
  int max_deg = 0;
  for (int v = 0; v < g.n; ++v) max_deg = std::max(max_deg, g.row[v + 1] - g.row[v]);
  if (corrupt > 0) input += "-c" + std::to_string(corrupt);

  // The forest to verify, its rooting and lifting tables, and the reference.
  std::vector<unsigned char> in_forest = cpu_kruskal(g);
  corrupt_forest(g, in_forest, corrupt, seed);
  const Forest forest = root_forest(g, in_forest);
  std::vector<int> up;
  std::vector<unsigned long long> upmax;
  const int levels = lifting_tables(g, forest, up, upmax);
  const std::vector<unsigned char> ref = cpu_verify(g, in_forest);
  int forest_edges = 0, split = 0, cycle = 0;
  for (int k = 0; k < mu; ++k) forest_edges += in_forest[k];
  for (int v = 0; v < g.n; ++v) {  // each undirected edge once
    for (int e = g.row[v]; e < g.row[v + 1]; ++e) {
      if (g.col[e] < v) continue;
      split += ref[e] == MSTV_SPLIT;
      cycle += ref[e] == MSTV_CYCLE;
    }
  }

  cudaDeviceProp prop;
  CK(cudaSetDevice(0));
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t pending = std::min<size_t>(std::max<size_t>(2048, g.n), 1u << 20);
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

  DeviceGraph d;
  d.n = g.n;
  d.levels = levels;
  d.m = m;
  const size_t table = up.size();
  CK(cudaMalloc(&d.row, sizeof(int) * (g.n + 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * std::max(m, 1)));
  CK(cudaMalloc(&d.weight, sizeof(unsigned int) * std::max(m, 1)));
  CK(cudaMalloc(&d.eid, sizeof(int) * std::max(m, 1)));
  CK(cudaMalloc(&d.in_forest, std::max(mu, 1)));
  CK(cudaMalloc(&d.tree, sizeof(int) * g.n));
  CK(cudaMalloc(&d.depth, sizeof(int) * g.n));
  CK(cudaMalloc(&d.up, sizeof(int) * table));
  CK(cudaMalloc(&d.upmax, sizeof(unsigned long long) * table));
  CK(cudaMalloc(&d.verdict, std::max(m, 1)));
  CK(cudaMemcpy(d.row, g.row.data(), sizeof(int) * (g.n + 1), cudaMemcpyHostToDevice));
  if (m > 0) {
    CK(cudaMemcpy(d.col, g.col.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.weight, g.weight.data(), sizeof(unsigned int) * m,
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.eid, g.eid.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.in_forest, in_forest.data(), mu, cudaMemcpyHostToDevice));
  }
  CK(cudaMemcpy(d.tree, forest.tree.data(), sizeof(int) * g.n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.depth, forest.depth.data(), sizeof(int) * g.n, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.up, up.data(), sizeof(int) * table, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.upmax, upmax.data(), sizeof(unsigned long long) * table,
                cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));

  std::printf("info example=mstv vertices=%d edges=%d max_degree=%d "
              "forest_edges=%d trees=%d max_depth=%d levels=%d corrupt=%d "
              "split_edges=%d cycle_edges=%d gpu=%s\n",
              g.n, m, max_deg, forest_edges, forest.trees, forest.max_depth,
              levels, corrupt, split, cycle, prop.name);

  bool ok = true;
  std::vector<unsigned char> out(m);
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
      CK(cudaMemset(d.verdict, 0xff, std::max(m, 1)));  // no verdict yet
      CK(cudaDeviceSynchronize());
      float ms = run_verify(impl, d, t0, t1);
      if (r > 0) times.push_back(ms);
      if (m > 0)
        CK(cudaMemcpy(out.data(), d.verdict, m, cudaMemcpyDeviceToHost));
      if (out != ref) verified = false;
    }
#ifdef DPOPT_STATS
    {
      unsigned long long requests = 0;
      cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
      printf("stats example=mstv launch_requests=%llu\n", requests);
      if (dpopt_stats_report) dpopt_stats_report(stdout);
    }
#endif
    unsigned int failures = 0;
    CK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));
    std::sort(times.begin(), times.end());
    const size_t k = times.size();
    const double median =
        k % 2 ? times[k / 2] : 0.5 * (double(times[k / 2 - 1]) + times[k / 2]);
    const uint64_t sum = fnv1a64(out.data(), out.size());
    std::printf("result example=mstv input=%s impl=%s time_ms=%.4f verified=%s "
                "checksum=%016llx launch_failures=%u\n",
                input.c_str(), impl_name(impl), median,
                verified ? "yes" : "no", (unsigned long long)sum, failures);
    if (!verified || failures != 0) ok = false;
  }

  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  CK(cudaFree(d.row));
  CK(cudaFree(d.col));
  CK(cudaFree(d.weight));
  CK(cudaFree(d.eid));
  CK(cudaFree(d.in_forest));
  CK(cudaFree(d.tree));
  CK(cudaFree(d.depth));
  CK(cudaFree(d.up));
  CK(cudaFree(d.upmax));
  CK(cudaFree(d.verdict));
  return ok ? 0 : 1;
}
