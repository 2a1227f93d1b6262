// tree_heights.cu - tree heights and descendant counts on a synthetic tree.
//
// Workload (after the "tree descendants / tree heights" benchmarks of the
// workload-consolidation paper, Section 5.1): for every node of a rooted tree
// compute
//   height[v] = 1 for a leaf, 1 + max(height of children) otherwise
//   desc[v]   = number of nodes in the subtree of v, excluding v itself
//   level[v]  = depth of v (root = 0)
//
// CDP2 has no device-side cudaDeviceSynchronize, so a parent grid cannot wait
// for its children. The quantities are therefore computed top-down: every
// visited non-root node records its depth, adds 1 to the descendant count of
// each of its ancestors (atomicAdd), and if it is a leaf also raises the height
// of the ancestor at distance k to at least k + 1 (atomicMax). The result is
// independent of the order in which nodes are visited.
//
// Tree generator (as in the paper): nodes at depth < D have children with
// probability rho = (1/2)^sparsity, and a node with children has exactly
// `outdeg` of them (sparsity 0 -> full regular tree). The root always has
// children. Nodes are created in BFS order until adding another full set of
// children would exceed --max-nodes; from then on every node is a leaf.
// The defaults (D=4, K=32, S=1) give a tree of about 193,000 nodes; with
// D=6 the cap is reached on level 6, giving just under 4,000,000 nodes (the
// plain CDP version then takes minutes).
//
// Implementations:
//   flat : one host launch per depth level, one thread per node of the level.
//   cdp  : recursive kernel heights_rec; thread i handles child i of `node` and
//          relaunches itself on that child if it has children.

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Threads per block of the host launches of the parent kernel; -DPARENT_BLOCK=1024 checks that transformed parents stay launchable with 1,024 threads.
#ifndef PARENT_BLOCK
#define PARENT_BLOCK 64
#endif

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,   \
                    __LINE__, cudaGetErrorString(err_));                       \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

__device__ unsigned int g_launch_failures = 0;
#ifdef DPOPT_STATS
// Launch statements executed: the device-side launches of the original
// program. dpopt's generated code defines the two functions (-DDPOPT_STATS).
__device__ unsigned long long g_launch_requests = 0;
extern "C" void dpopt_stats_report(FILE *) __attribute__((weak));
extern "C" void dpopt_stats_reset(void) __attribute__((weak));
#endif

// Per-node work shared by both implementations (uses no thread indices).
__device__ void visit_node(int c, int depth, const int* child_count, const int* parent,
                           unsigned int* height, unsigned int* desc, int* level)
{
    level[c] = depth;
    const bool leaf = child_count[c] == 0;
    if (leaf) height[c] = 1u;
    unsigned int dist = 1;
    for (int a = parent[c]; a >= 0; a = parent[a], ++dist) {
        atomicAdd(&desc[a], 1u);
        if (leaf) atomicMax(&height[a], dist + 1u);
    }
}

// Flat version: one thread per node of one depth level [first, first + count).
__global__ void heights_flat(const int* child_count, const int* parent, unsigned int* height,
                             unsigned int* desc, int* level, int first, int count, int depth)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    visit_node(first + i, depth, child_count, parent, height, desc, level);
}

// Recursive version: thread i handles child i of `node` (which is at `depth`).
__global__ void heights_rec(const int* child_start, const int* child_count, const int* parent,
                            unsigned int* height, unsigned int* desc, int* level,
                            int count, int node, int depth)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int c = child_start[node] + i;
    visit_node(c, depth + 1, child_count, parent, height, desc, level);
    int nchildren = child_count[c];
    if (nchildren > 0) {
#ifdef DPOPT_STATS
        atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(32) coarsen(4)
        heights_rec<<<(nchildren + 63) / 64, 64>>>(child_start, child_count, parent, height, desc, level, nchildren, c, depth + 1);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
    }
}

// ---------------------------------------------------------------- host side

#include "common/tree.h"  // Tree, generate_tree
// The load-balanced flat version (impl=flat-lb): bottom-up, one launch per
// depth level, a thread, a warp or the block per node by its children.
#include "common/lb_tree.cuh"

// CPU reference: children have larger BFS indices, so walk nodes backwards.
static void cpu_reference(const Tree& t, std::vector<unsigned>& height, std::vector<unsigned>& desc)
{
    int n = t.size();
    height.assign(n, 1u);
    desc.assign(n, 0u);
    for (int v = n - 1; v >= 0; --v) {
        for (int k = 0; k < t.child_count[v]; ++k) {
            int c = t.child_start[v] + k;
            height[v] = std::max(height[v], height[c] + 1u);
            desc[v] += desc[c] + 1u;
        }
    }
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

struct DeviceTree {
    int *child_start, *child_count, *parent, *level;
    unsigned int *height, *desc;
};

static void run_flat(const Tree& t, const DeviceTree& g)
{
    for (int d = 1; d <= t.max_depth; ++d) {
        int first = t.level_start[d], count = t.level_start[d + 1] - first;
        heights_flat<<<(count + 255) / 256, 256>>>(g.child_count, g.parent, g.height, g.desc,
                                                   g.level, first, count, d);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaDeviceSynchronize());
    }
}

static void run_cdp(const Tree& t, const DeviceTree& g)
{
    int count = t.child_count[0];  // root always has children
    heights_rec<<<(count + PARENT_BLOCK - 1) / PARENT_BLOCK, PARENT_BLOCK>>>(
        g.child_start, g.child_count, g.parent, g.height, g.desc, g.level, count, 0, 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
}

// With -DDPOPT_RUNTIME_KNOBS dpopt's tuning values are read at run time from
// environment variables (DPOPT_THRESHOLD, ...): one build serves a sweep.
#ifdef DPOPT_RUNTIME_KNOBS
extern "C" int dpopt_knobs_from_env(void) __attribute__((weak));
#endif

int main(int argc, char** argv)
{
#ifdef DPOPT_RUNTIME_KNOBS
    if (dpopt_knobs_from_env) printf("info runtime_knobs_set=%d\n", dpopt_knobs_from_env());
#endif
    int depth = 4, outdeg = 32, sparsity = 1, reps = 5;
    long long max_nodes = 4000000, pending_limit = 0;
    uint64_t seed = 12345;
    for (int a = 1; a < argc; ++a) {
        std::string arg = argv[a];
        if (a + 1 >= argc) { fprintf(stderr, "missing value for %s\n", arg.c_str()); return 1; }
        const char* val = argv[++a];
        if (arg == "--depth") depth = atoi(val);
        else if (arg == "--outdeg") outdeg = atoi(val);
        else if (arg == "--sparsity") sparsity = atoi(val);
        else if (arg == "--max-nodes") max_nodes = atoll(val);
        else if (arg == "--pending") pending_limit = atoll(val);
        else if (arg == "--reps") reps = atoi(val);
        else if (arg == "--seed") seed = strtoull(val, nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); return 1; }
    }
    // depth <= 20 keeps the launch nesting of heights_rec within the CDP limit (24)
    if (depth < 1 || depth > 20 || outdeg < 1 || sparsity < 0 || sparsity > 63 || reps < 1 ||
        max_nodes < (long long)outdeg + 1 || max_nodes > (1ll << 30)) {
        fprintf(stderr, "invalid arguments (depth 1..20, outdeg >= 1, sparsity 0..63, "
                        "reps >= 1, outdeg + 1 <= max-nodes <= 2^30)\n");
        return 1;
    }

    Tree t = generate_tree(depth, outdeg, sparsity, max_nodes, seed);
    const int n = t.size();
    std::vector<unsigned> ref_height, ref_desc;
    cpu_reference(t, ref_height, ref_desc);

    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t pending = std::min<size_t>(std::max<size_t>(2048, (size_t)n), (size_t)1 << 20);
    if (pending_limit > 0) pending = (size_t)pending_limit;  // --pending: the device runtime's pending-launch limit
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
    printf("info example=tree_heights nodes=%d leaves=%d depth=%d gpu=%s\n", n, t.leaves,
           t.max_depth, prop.name);

    DeviceTree g;
    size_t ibytes = (size_t)n * sizeof(int), ubytes = (size_t)n * sizeof(unsigned);
    CUDA_CHECK(cudaMalloc(&g.child_start, ibytes));
    CUDA_CHECK(cudaMalloc(&g.child_count, ibytes));
    CUDA_CHECK(cudaMalloc(&g.parent, ibytes));
    CUDA_CHECK(cudaMalloc(&g.level, ibytes));
    CUDA_CHECK(cudaMalloc(&g.height, ubytes));
    CUDA_CHECK(cudaMalloc(&g.desc, ubytes));
    CUDA_CHECK(cudaMemcpy(g.child_start, t.child_start.data(), ibytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g.child_count, t.child_count.data(), ibytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g.parent, t.parent.data(), ibytes, cudaMemcpyHostToDevice));

    cudaEvent_t ev_start, ev_stop;
    CUDA_CHECK(cudaEventCreate(&ev_start));
    CUDA_CHECK(cudaEventCreate(&ev_stop));

    std::string input = "d" + std::to_string(depth) + "-k" + std::to_string(outdeg) + "-s" +
                        std::to_string(sparsity);
    std::vector<unsigned> height(n), desc(n);
    std::vector<int> level(n);
    bool all_ok = true;

    for (int impl = 0; impl < lb::impls_to_run(3); ++impl) {  // DPOPT_FLAT_ONLY=1: no cdp
        const char* name = impl == 0 ? "flat" : impl == 1 ? "flat-lb" : "cdp";
        unsigned zero = 0;
        CUDA_CHECK(cudaMemcpyToSymbol(g_launch_failures, &zero, sizeof(zero)));
        std::vector<float> times;
        bool verified = true;
        uint64_t checksum = 0;
        for (int r = 0; r <= reps; ++r) {  // r == 0 is the untimed warm-up
#ifdef DPOPT_STATS
            if (r == reps) {  // count the launches of the last run only
              const unsigned long long zero64 = 0;
              cudaMemcpyToSymbol(g_launch_requests, &zero64, sizeof zero64);
              if (dpopt_stats_reset) dpopt_stats_reset();
            }
#endif
            // flat-lb stores every value: poisoned, so that a node it misses shows
            const int fill = impl == 1 ? 0xff : 0;
            CUDA_CHECK(cudaMemset(g.height, fill, ubytes));
            CUDA_CHECK(cudaMemset(g.desc, fill, ubytes));
            CUDA_CHECK(cudaMemset(g.level, fill, ibytes));
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaEventRecord(ev_start));
            if (impl == 0) run_flat(t, g);
            else if (impl == 1)
                lb::tree_launch(t.level_start, t.max_depth, g.child_start, g.child_count, g.desc,
                                g.height, g.level);
            else run_cdp(t, g);
            CUDA_CHECK(cudaEventRecord(ev_stop));
            CUDA_CHECK(cudaEventSynchronize(ev_stop));
            float ms = 0.f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
            if (r > 0) times.push_back(ms);

            CUDA_CHECK(cudaMemcpy(height.data(), g.height, ubytes, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(desc.data(), g.desc, ubytes, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(level.data(), g.level, ibytes, cudaMemcpyDeviceToHost));
            int bad = 0;
            for (int v = 0; v < n; ++v) {
                if (height[v] != ref_height[v] || desc[v] != ref_desc[v] || level[v] != t.level[v]) {
                    if (bad < 5)
                        fprintf(stderr, "%s rep %d node %d: height %u/%u desc %u/%u level %d/%d\n",
                                name, r, v, height[v], ref_height[v], desc[v], ref_desc[v],
                                level[v], t.level[v]);
                    ++bad;
                }
            }
            if (bad) verified = false;
            checksum = fnv1a(14695981039346656037ull, height.data(), ubytes);
            checksum = fnv1a(checksum, desc.data(), ubytes);
        }
#ifdef DPOPT_STATS
        {
          unsigned long long requests = 0;
          cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
          printf("stats example=tree_heights launch_requests=%llu\n", requests);
          if (dpopt_stats_report) dpopt_stats_report(stdout);
        }
#endif
        unsigned failures = 0;
        CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));

        std::sort(times.begin(), times.end());
        size_t m = times.size();
        double median = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
        printf("result example=tree_heights input=%s impl=%s time_ms=%.4f verified=%s "
               "checksum=%016llx launch_failures=%u\n",
               input.c_str(), name, median, verified ? "yes" : "no",
               (unsigned long long)checksum, failures);
        if (!verified || failures != 0) all_ok = false;
    }

    CUDA_CHECK(cudaEventDestroy(ev_start));
    CUDA_CHECK(cudaEventDestroy(ev_stop));
    CUDA_CHECK(cudaFree(g.child_start));
    CUDA_CHECK(cudaFree(g.child_count));
    CUDA_CHECK(cudaFree(g.parent));
    CUDA_CHECK(cudaFree(g.level));
    CUDA_CHECK(cudaFree(g.height));
    CUDA_CHECK(cudaFree(g.desc));
    return all_ok ? 0 : 1;
}
