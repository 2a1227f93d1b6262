// mstf.cu - minimum spanning forest by Boruvka's algorithm on a weighted
// graph with skewed degrees; the find-minimum-edge kernel ("MST find", mstf)
// of LonestarGPU's / KLAP's Boruvka MST with dynamic parallelism.
//
// Edges are totally ordered by (weight, min endpoint, max endpoint), so the
// minimum spanning forest is unique. An undirected edge's id is its rank in
// (min endpoint, max endpoint) order, so the packed 64-bit key
// weight << 32 | id orders edges exactly that way.
//
// Host loop, one Boruvka round per iteration, until a round merges nothing:
//   find    : every vertex v offers each edge that leaves its component
//             comp[v] to atomicMin(&minkey[comp[v]], key): afterwards
//             minkey[c] is the lightest edge leaving component c. Two
//             implementations:
//               flat : one thread per vertex scans its edges serially and
//                      offers the lightest leaving edge.
//               cdp  : one thread per vertex launches a child grid with one
//                      thread per edge, which offers its edge (CUDA dynamic
//                      parallelism).
//   choose  : each component c marks its edge as a forest edge and points to
//             the component at the edge's other end; of two components that
//             chose the same edge, the smaller one points to itself.
//   jump    : pointer jumping (double-buffered) until every component points
//             to the root of its tree of choices.
//   relabel : comp[v] = root of comp[v].
// comp[v] is always a root, and comp[c] == c for a root c. The result is the
// set of forest edges (one byte per undirected edge). The CPU reference is
// Kruskal with the same edge order; every GPU run must choose exactly its
// edges (and so reach its total weight).
// time_ms is the whole loop (all rounds, all kernels).
//
// Input: a seeded R-MAT generator (a=0.57, b=c=0.19, d=0.05; 2^scale
// vertices, ef*2^scale generated edges), symmetrised, with self loops and
// duplicate edges removed; each undirected edge gets an integer weight drawn
// uniformly from [1, 100] (the same in both directions). Vertex labels are not
// permuted, so vertex 0 is the largest hub. Alternatively a LonestarGPU binary
// .gr file with 4-byte edge weights, made undirected: self loops are dropped
// and u-v and v-u become one edge with the smaller of their weights.
//
// Flags: --scale S (14)  --ef E (16)  --seed X (1)  --gr PATH  --reps R (5)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o mstf mstf.cu -lcudadevrt
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

// Key of "no leaving edge" (larger than every edge key: ids are < 2^31).
#define MST_NONE 0xffffffffffffffffull

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

// Flat version: each vertex finds its lightest edge that leaves its component
// and offers it to the component.
__global__ void mstf_flat(const int* row, const int* col,
                          const unsigned int* weight, const int* eid,
                          const int* comp, unsigned long long* minkey, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  const int c = comp[v];
  unsigned long long best = MST_NONE;
  for (int e = row[v]; e < row[v + 1]; ++e) {
    if (comp[col[e]] == c) continue;  // inside the component
    unsigned long long key =
        ((unsigned long long)weight[e] << 32) | (unsigned int)eid[e];
    if (key < best) best = key;
  }
  // minkey only decreases: skipping the atomic when it is already lower is safe.
  if (best < minkey[c]) atomicMin(&minkey[c], best);
}

// Child grid: one thread per edge of one vertex, whose component is c.
__global__ void mstf_child(const int* col, const unsigned int* weight,
                           const int* eid, const int* comp,
                           unsigned long long* minkey, int start, int deg,
                           int c) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= deg) return;
  int e = start + i;
  if (comp[col[e]] == c) return;  // inside the component
  unsigned long long key =
      ((unsigned long long)weight[e] << 32) | (unsigned int)eid[e];
  if (key < minkey[c]) atomicMin(&minkey[c], key);
}

// CDP version: each vertex launches a child grid over its edges.
__global__ void mstf_parent(const int* row, const int* col,
                            const unsigned int* weight, const int* eid,
                            const int* comp, unsigned long long* minkey,
                            int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= n) return;
  int deg = row[v + 1] - row[v];
  if (deg > 0) {
#ifdef DPOPT_STATS
    atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8)
    mstf_child<<<(deg + 31) / 32, 32>>>(col, weight, eid, comp, minkey, row[v], deg, comp[v]);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
  }
}

// comp[v] = v: every vertex its own component.
__global__ void mst_init(int* comp, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) comp[v] = v;
}

// Each component c with a leaving edge marks it as a forest edge and points
// to the component at its other end; the choices form trees whose only
// cycles are two components that chose the same edge (keys are unique), and
// the smaller of the two becomes the root. Non-roots and components without
// a leaving edge point to themselves.
__global__ void mst_choose(const int* comp, const unsigned long long* minkey,
                           const int* eu, const int* ev, int* parent,
                           unsigned char* in_forest, int n, int* merged) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  const unsigned long long key = minkey[c];
  if (comp[c] != c || key == MST_NONE) { parent[c] = c; return; }
  const int k = int(key & 0xffffffffu);
  const int a = comp[eu[k]], b = comp[ev[k]];
  const int o = a == c ? b : a;
  in_forest[k] = 1;  // benign race: both components of a pair store 1
  *merged = 1;
  parent[c] = (minkey[o] == key && c < o) ? c : o;
}

// One pointer-jumping step: next[c] = cur[cur[c]].
__global__ void mst_jump(const int* cur, int* next, int n, int* changed) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= n) return;
  const int p = cur[c];
  const int gp = cur[p];
  next[c] = gp;
  if (gp != p) *changed = 1;
}

// Every vertex joins the root of its component's tree.
__global__ void mst_relabel(int* comp, const int* root, int n) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v < n) comp[v] = root[comp[v]];
}

// ------------------------------------------------------------------ graph --

#include "common/mst_graph.h"  // Graph, make_rmat, read_gr, cpu_kruskal, fnv1a64

// ------------------------------------------------------------------- host --

// The load-balanced flat version (impl=flat-lb): find with a thread, a warp
// or the block per vertex by its degree; the roots of the choices in one
// kernel per round instead of a pointer-jumping loop.
#define LB_MST_FIND
#include "common/lb_mst.cuh"

enum class Impl { Flat, FlatLb, Cdp };

static const char* impl_name(Impl impl) {
  return impl == Impl::Flat ? "flat" : impl == Impl::FlatLb ? "flat-lb" : "cdp";
}

struct DeviceGraph {
  int n, mu;
  int *row, *col, *eid, *eu, *ev;
  unsigned int* weight;
  int* comp;
  int* parent[2];  // pointer-jumping buffers
  unsigned long long* minkey;
  unsigned char* in_forest;
  int* flag;
  int* bad;  // flat-lb: cyclic choices seen
};

// Every vertex its own component, no forest edge.
static void reset_state(const DeviceGraph& d) {
  const int threads = 256;
  mst_init<<<(d.n + threads - 1) / threads, threads>>>(d.comp, d.n);
  CK(cudaGetLastError());
  CK(cudaMemset(d.in_forest, 0, std::max(d.mu, 1)));
  CK(cudaDeviceSynchronize());
}

// Rounds, and pointer-jumping steps per round, after which a run gives up
// (and fails verification): correct runs need at most 32 of each (n < 2^31;
// every round at least halves the components that still have a leaving
// edge, every step halves the depth of the trees of choices), but wrong
// minimum edges could make the choices cyclic and the loops endless.
#define MST_MAX_STEPS 64

// The same rounds with the flat-lb kernels: one host synchronization per
// round (the merged flag), none per pointer-jumping step.
static float run_mst_lb(const DeviceGraph& d, cudaEvent_t t0, cudaEvent_t t1,
                        int* rounds, bool* finished) {
  const int threads = 256;
  const int blocks = (d.n + threads - 1) / threads;
  *rounds = 0;
  *finished = false;
  CK(cudaMemset(d.bad, 0, sizeof(int)));
  CK(cudaEventRecord(t0));
  for (;;) {
    int merged = 0;
    CK(cudaMemset(d.minkey, 0xff, sizeof(unsigned long long) * d.n));  // MST_NONE
    lb::mstf_launch(d.row, d.col, d.weight, d.eid, d.comp, d.minkey, d.n);
    CK(cudaGetLastError());
    CK(cudaMemset(d.flag, 0, sizeof(int)));
    mst_choose<<<blocks, threads>>>(d.comp, d.minkey, d.eu, d.ev, d.parent[0],
                                    d.in_forest, d.n, d.flag);
    CK(cudaGetLastError());
    CK(cudaMemcpy(&merged, d.flag, sizeof(int), cudaMemcpyDeviceToHost));
    if (!merged) { *finished = true; break; }
    if (++*rounds > MST_MAX_STEPS) break;
    lb::mst_roots<<<blocks, threads>>>(d.parent[0], d.parent[1], d.n, d.bad);
    CK(cudaGetLastError());
    mst_relabel<<<blocks, threads>>>(d.comp, d.parent[1], d.n);
    CK(cudaGetLastError());
  }
  CK(cudaEventRecord(t1));
  CK(cudaEventSynchronize(t1));
  int bad = 0;
  CK(cudaMemcpy(&bad, d.bad, sizeof(int), cudaMemcpyDeviceToHost));
  if (bad) *finished = false;
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

// One full Boruvka from an already reset state; returns elapsed ms, the
// number of rounds that merged components, and whether the loops finished.
static float run_mst(Impl impl, const DeviceGraph& d, cudaEvent_t t0,
                     cudaEvent_t t1, int* rounds, bool* finished) {
  if (impl == Impl::FlatLb) return run_mst_lb(d, t0, t1, rounds, finished);
  const int threads = 256;
  const int blocks = (d.n + threads - 1) / threads;
  const int parent_blocks = (d.n + PARENT_BLOCK - 1) / PARENT_BLOCK;
  *rounds = 0;
  *finished = false;
  CK(cudaEventRecord(t0));
  for (;;) {
    int merged = 0;
    CK(cudaMemset(d.minkey, 0xff, sizeof(unsigned long long) * d.n));  // MST_NONE
    if (impl == Impl::Flat)
      mstf_flat<<<blocks, threads>>>(d.row, d.col, d.weight, d.eid, d.comp,
                                     d.minkey, d.n);
    else
      mstf_parent<<<parent_blocks, PARENT_BLOCK>>>(d.row, d.col, d.weight, d.eid,
                                                   d.comp, d.minkey, d.n);
    CK(cudaGetLastError());
    CK(cudaMemset(d.flag, 0, sizeof(int)));
    mst_choose<<<blocks, threads>>>(d.comp, d.minkey, d.eu, d.ev, d.parent[0],
                                    d.in_forest, d.n, d.flag);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());  // find (parents and all their children), choose
    CK(cudaMemcpy(&merged, d.flag, sizeof(int), cudaMemcpyDeviceToHost));
    if (!merged) { *finished = true; break; }
    if (++*rounds > MST_MAX_STEPS) break;
    int* cur = d.parent[0];
    int* next = d.parent[1];
    bool rooted = false;
    for (int step = 0; step < MST_MAX_STEPS && !rooted; ++step) {
      int changed = 0;
      CK(cudaMemset(d.flag, 0, sizeof(int)));
      mst_jump<<<blocks, threads>>>(cur, next, d.n, d.flag);
      CK(cudaGetLastError());
      CK(cudaMemcpy(&changed, d.flag, sizeof(int), cudaMemcpyDeviceToHost));
      std::swap(cur, next);  // cur: the latest pointers
      rooted = !changed;
    }
    if (!rooted) break;  // cyclic choices
    mst_relabel<<<blocks, threads>>>(d.comp, cur, d.n);
    CK(cudaGetLastError());
  }
  CK(cudaEventRecord(t1));
  CK(cudaEventSynchronize(t1));
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

static void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--scale S] [--ef E] [--seed X] [--gr PATH] "
               "[--reps R]\n", prog);
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
  int scale = 14, ef = 16, reps = 5;
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
    else if (a == "--reps") reps = std::atoi(v);
    else usage(argv[0]);
  }
  if (scale < 1 || scale > 30 || ef < 1 || reps < 1) usage(argv[0]);

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

  const std::vector<unsigned char> ref = cpu_kruskal(g);
  int forest_edges = 0;
  unsigned long long forest_weight = 0;
  for (int k = 0; k < mu; ++k)
    if (ref[k]) { ++forest_edges; forest_weight += g.ew[k]; }

  cudaDeviceProp prop;
  CK(cudaSetDevice(0));
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t pending = std::min<size_t>(std::max<size_t>(2048, g.n), 1u << 20);
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

  DeviceGraph d;
  d.n = g.n;
  d.mu = mu;
  CK(cudaMalloc(&d.row, sizeof(int) * (g.n + 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * std::max(m, 1)));
  CK(cudaMalloc(&d.weight, sizeof(unsigned int) * std::max(m, 1)));
  CK(cudaMalloc(&d.eid, sizeof(int) * std::max(m, 1)));
  CK(cudaMalloc(&d.eu, sizeof(int) * std::max(mu, 1)));
  CK(cudaMalloc(&d.ev, sizeof(int) * std::max(mu, 1)));
  CK(cudaMalloc(&d.comp, sizeof(int) * g.n));
  CK(cudaMalloc(&d.parent[0], sizeof(int) * g.n));
  CK(cudaMalloc(&d.parent[1], sizeof(int) * g.n));
  CK(cudaMalloc(&d.minkey, sizeof(unsigned long long) * g.n));
  CK(cudaMalloc(&d.in_forest, std::max(mu, 1)));
  CK(cudaMalloc(&d.flag, sizeof(int)));
  CK(cudaMalloc(&d.bad, sizeof(int)));
  CK(cudaMemcpy(d.row, g.row.data(), sizeof(int) * (g.n + 1), cudaMemcpyHostToDevice));
  if (m > 0) {
    CK(cudaMemcpy(d.col, g.col.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.weight, g.weight.data(), sizeof(unsigned int) * m,
                  cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.eid, g.eid.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.eu, g.eu.data(), sizeof(int) * mu, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.ev, g.ev.data(), sizeof(int) * mu, cudaMemcpyHostToDevice));
  }
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));

  std::printf("info example=mstf vertices=%d edges=%d max_degree=%d "
              "forest_edges=%d forest_weight=%llu components=%d gpu=%s\n",
              g.n, m, max_deg, forest_edges, forest_weight, g.n - forest_edges,
              prop.name);

  bool ok = true;
  std::vector<unsigned char> out(mu);
  const Impl impls[3] = {Impl::Flat, Impl::FlatLb, Impl::Cdp};
  for (int ii = 0; ii < lb::impls_to_run(3); ++ii) {  // DPOPT_FLAT_ONLY=1: no cdp
    const Impl impl = impls[ii];
    const unsigned int zero = 0;
    CK(cudaMemcpyToSymbol(g_launch_failures, &zero, sizeof(zero)));
    bool verified = true;
    std::vector<float> times;
    int rounds = 0;
    for (int r = 0; r <= reps; ++r) {  // r == 0 is the untimed warm-up
#ifdef DPOPT_STATS
      if (r == reps) {  // count the launches of the last run only
        const unsigned long long zero64 = 0;
        cudaMemcpyToSymbol(g_launch_requests, &zero64, sizeof zero64);
        if (dpopt_stats_reset) dpopt_stats_reset();
      }
#endif
      reset_state(d);
      bool finished = false;
      float ms = run_mst(impl, d, t0, t1, &rounds, &finished);
      if (r > 0) times.push_back(ms);
      if (mu > 0)
        CK(cudaMemcpy(out.data(), d.in_forest, mu, cudaMemcpyDeviceToHost));
      unsigned long long weight = 0;  // of the GPU's forest
      for (int k = 0; k < mu; ++k)
        if (out[k]) weight += g.ew[k];
      if (out != ref || weight != forest_weight || !finished) verified = false;
    }
#ifdef DPOPT_STATS
    {
      unsigned long long requests = 0;
      cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
      printf("stats example=mstf launch_requests=%llu\n", requests);
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
    std::printf("info example=mstf impl=%s rounds=%d\n", impl_name(impl), rounds);
    std::printf("result example=mstf input=%s impl=%s time_ms=%.4f verified=%s "
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
  CK(cudaFree(d.eu));
  CK(cudaFree(d.ev));
  CK(cudaFree(d.comp));
  CK(cudaFree(d.parent[0]));
  CK(cudaFree(d.parent[1]));
  CK(cudaFree(d.minkey));
  CK(cudaFree(d.in_forest));
  CK(cudaFree(d.flag));
  CK(cudaFree(d.bad));
  return ok ? 0 : 1;
}
