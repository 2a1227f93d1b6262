// lb_frontier.cuh - the load-balanced flat BFS and SSSP (impl=flat-lb of
// bfs.cu and sssp.cu): frontier queues, TWC expansion (lb_twc.cuh) and one
// persistent cooperative grid for the whole traversal, so that a level costs
// a grid barrier instead of a kernel launch, a memset, a host
// synchronization and a copy (the flat version's ~19 us per level on the
// road grid).
//
//   * The frontier of level (or round) L is a queue; each of its vertices is
//     expanded with lb::twc: a block per vertex of >= LB_FRONTIER_BLOCK
//     edges, a warp per vertex of >= 32 edges, a thread per smaller vertex.
//     Discovered vertices are appended to the next queue with one atomicAdd
//     per group of converged threads (warp-aggregated).
//   * Small-frontier fast path: while a frontier fits one block (<= 512
//     vertices with <= LB_FRONTIER_SMALL_EDGES edges in all: every level of
//     the road grid), block 0 alone runs the levels back to back with
//     __syncthreads only; the other blocks wait at the next grid barrier.
//     Larger frontiers are spread over all blocks (grid-stride), one
//     grid.sync per level. (The pushes also count the edges of the next
//     frontier, one atomicAdd per group as for the queue.)
//   * No host synchronization inside the traversal: the host launches one
//     grid and records the end event (timed like the flat version, from the
//     start event to the end event).
// BFS marks a vertex with atomicCAS(level, -1, L + 1), so it is queued once.
// SSSP (data-driven Bellman-Ford, the example's algorithm) relaxes with
// atomicMin and queues a lowered vertex for round L + 1 at most once, with a
// round stamp: atomicMax(&mark[v], L + 1) < L + 1. A vertex reads its
// distance when it is expanded; one lowered after that is queued again, so
// at the end (an empty queue) no edge can lower a distance: the distances
// are the shortest ones, whatever the order (the CPU reference, Dijkstra,
// must match exactly).
//
// Mutable arrays are read with __ldcg (L2, not the SM's L1) since other
// blocks write them between grid barriers.
#pragma once

#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "lb_twc.cuh"

#ifndef LB_FRONTIER_BLOCK
#define LB_FRONTIER_BLOCK 512
#endif
// Resident blocks per SM of the persistent grid (fewer: a cheaper grid
// barrier; more: more memory parallelism on large frontiers; the registers
// are bounded for it with __launch_bounds__).
#ifndef LB_FRONTIER_BLOCKS_PER_SM
#define LB_FRONTIER_BLOCKS_PER_SM 2
#endif
// The most edges a frontier run by block 0 alone may have (-1: never alone).
#ifndef LB_FRONTIER_SMALL_EDGES
#define LB_FRONTIER_SMALL_EDGES 4096
#endif
// Experiment (bench/lb_check.sh exp): > 0 ends the grid after that many
// levels, and the host relaunches it after a synchronization and a copy of
// the state, like the other versions' host loop (1: one launch per level).
#ifndef LB_FRONTIER_LEVELS_PER_LAUNCH
#define LB_FRONTIER_LEVELS_PER_LAUNCH 0
#endif

namespace lb {

struct Frontier {
  int* queue[2];  // capacity n each
  int* count;     // 3 rotating counters: level L reads count[L % 3]
  int* edges;     // 3 rotating counters: the edges of queue L in edges[L % 3]
  int* level_no;  // level reached by block 0 in the small-frontier mode
  unsigned* mark; // SSSP: last round a vertex was queued for
};

// Where level L + 1's vertices go: its queue, vertex and edge counters.
struct Out {
  int* queue;
  int* count;
  int* edges;
};

// Appends v (of degree deg) to the queue: one atomicAdd per counter and
// group of converged threads.
__device__ __forceinline__ void push(const Out& out, int v, int deg) {
  cooperative_groups::coalesced_group g = cooperative_groups::coalesced_threads();
  int base = 0;
  if (g.thread_rank() == 0) base = atomicAdd(out.count, int(g.size()));
  base = g.shfl(base, 0);
  out.queue[base + int(g.thread_rank())] = v;
  int sum = deg;  // the group's edges (a shuffle tree over its size)
  for (unsigned k = 1; k < g.size(); k <<= 1) {
    const int other = g.shfl(sum, (g.thread_rank() + k) % g.size());
    if (g.thread_rank() + k < g.size()) sum += other;
  }
  if (g.thread_rank() == 0) atomicAdd(out.edges, sum);
}

struct BfsPolicy {
  const int* row;
  const int* col;
  int* level;
  __device__ void init(cooperative_groups::grid_group&, int) const {}
  // Expands this thread's frontier vertex v (if valid) of level L.
  __device__ void expand(bool valid, int v, int L, const Out& out) const {
    const int b = valid ? row[v] : 0, e = valid ? row[v + 1] : 0;
    int* lvl = level;
    const int* c = col;
    const int* r = row;
    twc<LB_FRONTIER_BLOCK, false, int>(
        valid, v, 0, b, e, 0,
        [=](int k, int, int) {
          const int nb = c[k];
          if (__ldcg(&lvl[nb]) == -1 && atomicCAS(&lvl[nb], -1, L + 1) == -1)
            push(out, nb, r[nb + 1] - r[nb]);
          return 0;
        },
        Plus(), NoFinish());
  }
};

struct SsspPolicy {
  const int* row;
  const int* col;
  const unsigned int* weight;
  unsigned int* dist;
  unsigned int* mark;
  int n;
  __device__ void init(cooperative_groups::grid_group& grid, int) const {
    for (long long i = grid.thread_rank(); i < n; i += grid.size()) mark[i] = 0;
  }
  __device__ void expand(bool valid, int v, int L, const Out& out) const {
    const int b = valid ? row[v] : 0, e = valid ? row[v + 1] : 0;
    const int* r = row;
    // The distance when v is expanded (lowered later: v is queued again).
    const unsigned int dv = valid ? __ldcg(&dist[v]) : 0u;
    const int* c = col;
    const unsigned int* w = weight;
    unsigned int* d = dist;
    unsigned int* mk = mark;
    twc<LB_FRONTIER_BLOCK, false, int>(
        valid, v, int(dv), b, e, 0,
        [=](int k, int, int aux) {
          const unsigned int du = unsigned(aux);
          const int nb = c[k];
          const unsigned int nd = du + w[k];
          if (nd < du) return 0;  // overflow: longer than any 32-bit distance
          if (nd < __ldcg(&d[nb]) && atomicMin(&d[nb], nd) > nd &&
              atomicMax(&mk[nb], unsigned(L + 1)) < unsigned(L + 1))
            push(out, nb, r[nb + 1] - r[nb]);
          return 0;
        },
        Plus(), NoFinish());
  }
};

// Levels [first, first + max_levels) (max_levels 0: all); first == 0 sets up
// the state, a later first continues from the state the last grid left.
template <class Policy>
__global__ void __launch_bounds__(LB_FRONTIER_BLOCK, LB_FRONTIER_BLOCKS_PER_SM)
    frontier_kernel(Policy p, Frontier f, int src, int first, int max_levels) {
  namespace cg = cooperative_groups;
  cg::grid_group grid = cg::this_grid();
  const int limit = max_levels > 0 ? first + max_levels : 0x7fffffff;
  if (first == 0) {
    p.init(grid, src);
    if (grid.thread_rank() == 0) {
      f.queue[0][0] = src;
      f.count[0] = 1;
      f.count[1] = 0;
      f.count[2] = 0;
      f.edges[0] = p.row[src + 1] - p.row[src];
      f.edges[1] = 0;
      f.edges[2] = 0;
    }
    grid.sync();
  }
  int L = first;
  for (;;) {
    int cnt = __ldcg(&f.count[L % 3]);  // every block reads the same value
    if (cnt == 0 || L >= limit) break;
    if (cnt <= LB_FRONTIER_BLOCK && __ldcg(&f.edges[L % 3]) <= LB_FRONTIER_SMALL_EDGES) {
      // Small frontier: block 0 runs levels alone until it grows or ends.
      if (blockIdx.x == 0) {
        for (;;) {
          // count/edges[(L + 2) % 3] were last read in level L - 1: reuse.
          if (threadIdx.x == 0) f.count[(L + 2) % 3] = f.edges[(L + 2) % 3] = 0;
          const bool valid = int(threadIdx.x) < cnt;
          const int v = valid ? __ldcg(&f.queue[L & 1][threadIdx.x]) : 0;
          p.expand(valid, v, L, Out{f.queue[(L + 1) & 1], &f.count[(L + 1) % 3],
                                    &f.edges[(L + 1) % 3]});
          __syncthreads();  // the block's pushes (atomics, queue) are done
          ++L;
          cnt = __ldcg(&f.count[L % 3]);
          const int edges = __ldcg(&f.edges[L % 3]);
          if (cnt == 0 || cnt > LB_FRONTIER_BLOCK || edges > LB_FRONTIER_SMALL_EDGES ||
              L >= limit)
            break;
        }
        if (threadIdx.x == 0) *f.level_no = L;
      }
      grid.sync();
      L = __ldcg(f.level_no);
      continue;
    }
    // Large frontier: all blocks, grid-stride over the queue, one barrier.
    if (blockIdx.x == 0 && threadIdx.x == 0) f.count[(L + 2) % 3] = f.edges[(L + 2) % 3] = 0;
    const int* in = f.queue[L & 1];
    for (int base = blockIdx.x * LB_FRONTIER_BLOCK; base < cnt;
         base += gridDim.x * LB_FRONTIER_BLOCK) {  // block-uniform trip count
      const int i = base + int(threadIdx.x);
      const bool valid = i < cnt;
      const int v = valid ? __ldcg(&in[i]) : 0;
      p.expand(valid, v, L, Out{f.queue[(L + 1) & 1], &f.count[(L + 1) % 3],
                                &f.edges[(L + 1) % 3]});
    }
    grid.sync();
    ++L;
  }
  if (blockIdx.x == 0 && threadIdx.x == 0) *f.level_no = L;  // the level reached
}

// Buffers and grid size of the persistent kernel (set up outside the timing).
struct FrontierRunner {
  Frontier f{};
  int blocks = 0;
  int n = 0;
};

template <class Policy>
inline void frontier_setup(FrontierRunner& r, int n) {
  auto check = [](cudaError_t e, const char* what) {
    if (e != cudaSuccess) {
      std::fprintf(stderr, "flat-lb setup: %s: %s\n", what, cudaGetErrorString(e));
      std::exit(1);
    }
  };
  r.n = n;
  check(cudaMalloc(&r.f.queue[0], sizeof(int) * std::max(n, 1)), "queue");
  check(cudaMalloc(&r.f.queue[1], sizeof(int) * std::max(n, 1)), "queue");
  int* state = nullptr;  // count[3], edges[3], level_no: one copy reads all
  check(cudaMalloc(&state, sizeof(int) * 7), "state");
  r.f.count = state;
  r.f.edges = state + 3;
  r.f.level_no = state + 6;
  check(cudaMalloc(&r.f.mark, sizeof(unsigned) * std::max(n, 1)), "mark");
  int dev = 0, sms = 0, coop = 0, per_sm = 0;
  check(cudaGetDevice(&dev), "device");
  check(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), "SMs");
  check(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev), "coop");
  if (!coop) {
    std::fprintf(stderr, "flat-lb: the device has no cooperative launch\n");
    std::exit(1);
  }
  check(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            &per_sm, frontier_kernel<Policy>, LB_FRONTIER_BLOCK, 0), "occupancy");
  per_sm = std::min(per_sm, LB_FRONTIER_BLOCKS_PER_SM);
  if (per_sm < 1) {
    std::fprintf(stderr, "flat-lb: frontier kernel cannot be resident\n");
    std::exit(1);
  }
  r.blocks = per_sm * sms;
}

template <class Policy>
inline cudaError_t frontier_launch(const FrontierRunner& r, Policy p, int src) {
  Frontier f = r.f;
  int first = 0, max_levels = LB_FRONTIER_LEVELS_PER_LAUNCH;
  void* args[] = {&p, &f, &src, &first, &max_levels};
  for (;;) {
    cudaError_t e = cudaLaunchCooperativeKernel(
        (const void*)frontier_kernel<Policy>, dim3(r.blocks),
        dim3(LB_FRONTIER_BLOCK), args, 0, 0);
    if (e != cudaSuccess || max_levels == 0) return e;
    int state[7];  // experiment: the host loop the other versions have
    e = cudaMemcpy(state, f.count, sizeof state, cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return e;
    first = state[6];
    if (state[first % 3] == 0) return cudaSuccess;
  }
}

inline void frontier_free(FrontierRunner& r) {
  cudaFree(r.f.queue[0]);
  cudaFree(r.f.queue[1]);
  cudaFree(r.f.count);  // also edges and level_no
  cudaFree(r.f.mark);
}

}  // namespace lb
