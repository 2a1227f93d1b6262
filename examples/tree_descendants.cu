// tree_descendants.cu - number of descendants of every node of a synthetic
// tree, with a recursive CDP kernel.
//
// Workload (after the "tree descendants" benchmark of the workload-
// consolidation paper, Section 5.1): for every node v of a rooted tree
//   desc[v] = number of nodes in the subtree of v, excluding v itself.
//
// CDP2 has no device-side cudaDeviceSynchronize, so a parent grid cannot wait
// for its children and sum their counts bottom-up. The counts are therefore
// accumulated top-down: every node below v has exactly one parent in the
// subtree of v (v included), so
//   desc[v] = sum of child_count[w] over the inner nodes w of the subtree of v.
// Each inner node w adds child_count[w] to its own counter and to the counter
// of each of its ancestors (atomicAdd, walking the parent array); leaves add
// nothing. The result is independent of the order in which nodes are visited.
//
// Tree generator (that of tree_heights.cu, as in the paper): nodes at depth
// < D have children with probability rho = (1/2)^sparsity, and a node with
// children has exactly `outdeg` of them (sparsity 0 -> full regular tree). The
// root always has children. Nodes are created in BFS order until adding
// another full set of children would exceed --max-nodes; from then on every
// node is a leaf. The defaults (D=4, K=32, S=1; tree_heights.cu's benchmark
// input) give 192,897 nodes, 6,028 of them inner (one device-side launch
// each). The plain CDP version launches into each block's NULL stream, which
// costs about 40 us per launch on an H200 (0.23 s per run here); with D=5
// (3,095,041 nodes, 96,720 launches) a run did not end within 15 s.
//
// Implementations:
//   flat : one host launch, one thread per node; an inner node walks up its
//          parent chain serially.
//   cdp  : recursive kernel desc_rec over the node range [first, first +
//          count): thread i handles node first + i, and if it has children
//          relaunches desc_rec on them (one child thread per child node). The
//          host launches it on the root alone.
//
// Flags: --depth D (4)  --outdeg K (32)  --sparsity S (1)
//        --max-nodes N (4000000)  --seed X (12345)  --reps R (5)
//        --pending P (pending-launch limit; default max(2048, nodes), at most 2^20)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o tree_descendants tree_descendants.cu -lcudadevrt

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
#define PARENT_BLOCK 32
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

// Number of failed device-side launches (checked by the host).
__device__ unsigned int g_launch_failures = 0;
#ifdef DPOPT_STATS
// Launch statements executed: the device-side launches of the original
// program. dpopt's generated code defines the two functions (-DDPOPT_STATS).
__device__ unsigned long long g_launch_requests = 0;
extern "C" void dpopt_stats_report(FILE *) __attribute__((weak));
extern "C" void dpopt_stats_reset(void) __attribute__((weak));
#endif

// Per-node work shared by both implementations (uses no thread indices):
// inner node v adds its child count to itself and to every ancestor.
__device__ void add_children_upwards(int v, int nchildren, const int* parent,
                                     unsigned int* desc)
{
    for (int a = v; a >= 0; a = parent[a]) atomicAdd(&desc[a], (unsigned int)nchildren);
}

// Flat version: one thread per node of the whole tree.
__global__ void desc_flat(const int* child_count, const int* parent, unsigned int* desc, int n)
{
    int v = blockIdx.x * blockDim.x + threadIdx.x;
    if (v >= n) return;
    int nchildren = child_count[v];
    if (nchildren > 0) add_children_upwards(v, nchildren, parent, desc);
}

// Recursive version: thread i handles node first + i, then relaunches the
// kernel on that node's children [child_start[v], child_start[v] + nchildren).
__global__ void desc_rec(const int* child_start, const int* child_count, const int* parent,
                         unsigned int* desc, int first, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int v = first + i;
    int nchildren = child_count[v];
    if (nchildren > 0) {
        add_children_upwards(v, nchildren, parent, desc);
#ifdef DPOPT_STATS
        atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8)
        desc_rec<<<(nchildren + 31) / 32, 32>>>(child_start, child_count, parent, desc, child_start[v], nchildren);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
    }
}

// ---------------------------------------------------------------- host side

#include "common/tree.h"  // Tree, generate_tree
// The load-balanced flat version (impl=flat-lb): bottom-up, one launch per
// depth level, a thread, a warp or the block per node by its children.
#include "common/lb_tree.cuh"

// CPU reference: children have larger BFS indices, so walk nodes backwards.
static std::vector<unsigned> cpu_reference(const Tree& t)
{
    int n = t.size();
    std::vector<unsigned> desc(n, 0u);
    for (int v = n - 1; v >= 0; --v)
        for (int k = 0; k < t.child_count[v]; ++k) desc[v] += desc[t.child_start[v] + k] + 1u;
    return desc;
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

struct DeviceTree {
    int *child_start, *child_count, *parent;
    unsigned int* desc;
};

static void run_flat(int n, const DeviceTree& g)
{
    desc_flat<<<(n + 255) / 256, 256>>>(g.child_count, g.parent, g.desc, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
}

static void run_cdp(const DeviceTree& g)
{
    // the root alone: node range [0, 1); threads past it exit at desc_rec's bounds check
    const int count = 1;
    desc_rec<<<(count + PARENT_BLOCK - 1) / PARENT_BLOCK, PARENT_BLOCK>>>(
        g.child_start, g.child_count, g.parent, g.desc, 0, count);
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
    // depth <= 20 keeps the launch nesting of desc_rec within the CDP limit (24)
    if (depth < 1 || depth > 20 || outdeg < 1 || sparsity < 0 || sparsity > 63 || reps < 1 ||
        max_nodes < (long long)outdeg + 1 || max_nodes > (1ll << 30)) {
        fprintf(stderr, "invalid arguments (depth 1..20, outdeg >= 1, sparsity 0..63, "
                        "reps >= 1, outdeg + 1 <= max-nodes <= 2^30)\n");
        return 1;
    }

    Tree t = generate_tree(depth, outdeg, sparsity, max_nodes, seed);
    const int n = t.size();
    const int inner = n - t.leaves;  // = device-side launches of the cdp version
    const std::vector<unsigned> ref = cpu_reference(t);

    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    size_t pending = std::min<size_t>(std::max<size_t>(2048, (size_t)n), (size_t)1 << 20);
    if (pending_limit > 0) pending = (size_t)pending_limit;  // --pending: the device runtime's pending-launch limit
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
    printf("info example=tree_descendants nodes=%d inner=%d leaves=%d depth=%d gpu=%s\n", n,
           inner, t.leaves, t.max_depth, prop.name);

    DeviceTree g;
    size_t ibytes = (size_t)n * sizeof(int), ubytes = (size_t)n * sizeof(unsigned);
    CUDA_CHECK(cudaMalloc(&g.child_start, ibytes));
    CUDA_CHECK(cudaMalloc(&g.child_count, ibytes));
    CUDA_CHECK(cudaMalloc(&g.parent, ibytes));
    CUDA_CHECK(cudaMalloc(&g.desc, ubytes));
    CUDA_CHECK(cudaMemcpy(g.child_start, t.child_start.data(), ibytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g.child_count, t.child_count.data(), ibytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(g.parent, t.parent.data(), ibytes, cudaMemcpyHostToDevice));

    cudaEvent_t ev_start, ev_stop;
    CUDA_CHECK(cudaEventCreate(&ev_start));
    CUDA_CHECK(cudaEventCreate(&ev_stop));

    std::string input = "d" + std::to_string(depth) + "-k" + std::to_string(outdeg) + "-s" +
                        std::to_string(sparsity);
    std::vector<unsigned> desc(n);
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
            // flat-lb stores every count: poisoned, so that a node it misses shows
            CUDA_CHECK(cudaMemset(g.desc, impl == 1 ? 0xff : 0, ubytes));
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaEventRecord(ev_start));
            if (impl == 0) run_flat(n, g);
            else if (impl == 1)
                lb::tree_launch(t.level_start, t.max_depth, g.child_start, g.child_count, g.desc,
                                nullptr, nullptr);
            else run_cdp(g);
            CUDA_CHECK(cudaEventRecord(ev_stop));
            CUDA_CHECK(cudaEventSynchronize(ev_stop));
            float ms = 0.f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
            if (r > 0) times.push_back(ms);

            CUDA_CHECK(cudaMemcpy(desc.data(), g.desc, ubytes, cudaMemcpyDeviceToHost));
            int bad = 0;
            for (int v = 0; v < n; ++v) {
                if (desc[v] != ref[v]) {
                    if (bad < 5)
                        fprintf(stderr, "%s rep %d node %d: desc %u/%u\n", name, r, v, desc[v],
                                ref[v]);
                    ++bad;
                }
            }
            if (bad) verified = false;
            checksum = fnv1a(14695981039346656037ull, desc.data(), ubytes);
        }
#ifdef DPOPT_STATS
        {
          unsigned long long requests = 0;
          cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
          printf("stats example=tree_descendants launch_requests=%llu\n", requests);
          if (dpopt_stats_report) dpopt_stats_report(stdout);
        }
#endif
        unsigned failures = 0;
        CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));

        std::sort(times.begin(), times.end());
        size_t m = times.size();
        double median = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
        printf("result example=tree_descendants input=%s impl=%s time_ms=%.4f verified=%s "
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
    CUDA_CHECK(cudaFree(g.desc));
    return all_ok ? 0 : 1;
}
