// tree_heights_cdp1.cu - tree heights and descendant counts written the CDP1
// way (CUDA 11-era style): every thread handles one child of `node`, launches
// the kernel on its own children, waits for them with a device-side
// cudaDeviceSynchronize(), and then combines their results bottom-up:
//   height[v] = 1 for a leaf, 1 + max(height of children) otherwise
//   desc[v]   = number of nodes in the subtree of v, excluding v itself
//   level[v]  = depth of v (root = 0)
//
// This is the postwork of paper 002: code that runs after the children. CUDA
// 12 removed the device-side wait and sm_90 has only CDP2, so this file
// compiles for sm_90 only after `dpopt transform --migrate-sync`, which turns
// the code after each sync into a continuation tail-launched after the grid
// and all its children (each level's continuation runs after its subtree).
//
// Same tree generator and inputs as examples/tree_heights.cu and
// examples/tree_descendants.cu (examples/common/tree.h): the two result lines
// carry the checksums those examples print for the same flags
//   result example=tree_heights ...      checksum = FNV-1a(height, desc)
//   result example=tree_descendants ...  checksum = FNV-1a(desc)
// Flags: --depth D (4)  --outdeg K (32)  --sparsity S (1)  --max-nodes N (4000000)
//        --seed X (12345)  --reps R (3)  --pending P  --heap MiB (256)
// Build: dpopt transform --migrate-sync tree_heights_cdp1.cu -o t.dp.cu
//        nvcc -O3 -rdc=true -arch=sm_90 -I examples -o tree_heights_cdp1 t.dp.cu -lcudadevrt

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

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
extern "C" void dpopt_postwork_report(FILE*) __attribute__((weak));
#endif

// Thread i handles child i of `node` (which is at `depth`): it launches the
// kernel on that child's children, waits, and combines them.
__global__ void heights_cdp1(const int* child_start, const int* child_count, unsigned int* height,
                             unsigned int* desc, int* level, int count, int node, int depth)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int c = child_start[node] + i;
    level[c] = depth + 1;
    int nchildren = child_count[c];
    if (nchildren > 0) {
        heights_cdp1<<<(nchildren + 63) / 64, 64>>>(child_start, child_count, height, desc, level,
                                                     nchildren, c, depth + 1);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
    }
    cudaDeviceSynchronize();  // CDP1: wait for the subtree of c
    unsigned int h = 1, d = 0;
    for (int k = 0; k < nchildren; ++k) {
        int cc = child_start[c] + k;
        h = max(h, height[cc] + 1u);
        d += desc[cc] + 1u;
    }
    height[c] = h;
    desc[c] = d;
}

// The root (node 0): one thread launches the first level and combines it.
__global__ void heights_root(const int* child_start, const int* child_count, unsigned int* height,
                             unsigned int* desc, int* level, int block)
{
    const int count = child_count[0];
    level[0] = 0;
    heights_cdp1<<<(count + block - 1) / block, block>>>(child_start, child_count, height, desc, level,
                                                         count, 0, 0);
    cudaDeviceSynchronize();
    unsigned int h = 1, d = 0;
    for (int k = 0; k < count; ++k) {
        h = max(h, height[child_start[0] + k] + 1u);
        d += desc[child_start[0] + k] + 1u;
    }
    height[0] = h;
    desc[0] = d;
}

// ---------------------------------------------------------------- host side

#include "common/tree.h"  // Tree, generate_tree (shared with the CDP2 examples)

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

int main(int argc, char** argv)
{
    int depth = 4, outdeg = 32, sparsity = 1, reps = 3, heap_mib = 256;
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
        else if (arg == "--heap") heap_mib = atoi(val);
        else if (arg == "--seed") seed = strtoull(val, nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); return 1; }
    }
    // the continuations add one nesting level per tree level: depth <= 10 stays within 24
    if (depth < 1 || depth > 10 || outdeg < 1 || sparsity < 0 || sparsity > 63 || reps < 1 ||
        heap_mib < 0 || max_nodes < (long long)outdeg + 1 || max_nodes > (1ll << 30)) {
        fprintf(stderr, "invalid arguments (depth 1..10, outdeg >= 1, sparsity 0..63, reps >= 1)\n");
        return 1;
    }
    Tree t = generate_tree(depth, outdeg, sparsity, max_nodes, seed);
    const int n = t.size();
    std::vector<unsigned> ref_height, ref_desc;
    cpu_reference(t, ref_height, ref_desc);

    size_t pending = std::min<size_t>(std::max<size_t>(2048, (size_t)n), (size_t)1 << 20);
    if (pending_limit > 0) pending = (size_t)pending_limit;
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
    if (heap_mib > 0) CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)heap_mib << 20));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("info example=tree_heights_cdp1 nodes=%d leaves=%d depth=%d gpu=%s\n", n, t.leaves,
           t.max_depth, prop.name);

    int *d_child_start, *d_child_count, *d_level;
    unsigned *d_height, *d_desc;
    size_t ibytes = (size_t)n * sizeof(int), ubytes = (size_t)n * sizeof(unsigned);
    CUDA_CHECK(cudaMalloc(&d_child_start, ibytes));
    CUDA_CHECK(cudaMalloc(&d_child_count, ibytes));
    CUDA_CHECK(cudaMalloc(&d_level, ibytes));
    CUDA_CHECK(cudaMalloc(&d_height, ubytes));
    CUDA_CHECK(cudaMalloc(&d_desc, ubytes));
    CUDA_CHECK(cudaMemcpy(d_child_start, t.child_start.data(), ibytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_child_count, t.child_count.data(), ibytes, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));

    std::string input = "d" + std::to_string(depth) + "-k" + std::to_string(outdeg) + "-s" +
                        std::to_string(sparsity);
    std::vector<unsigned> height(n), desc(n);
    std::vector<int> level(n);
    std::vector<float> times;
    bool verified = true;
    uint64_t sum_heights = 0, sum_desc = 0;
    for (int r = 0; r <= reps; ++r) {  // r == 0 is the untimed warm-up
        CUDA_CHECK(cudaMemset(d_height, 0, ubytes));
        CUDA_CHECK(cudaMemset(d_desc, 0, ubytes));
        CUDA_CHECK(cudaMemset(d_level, 0xff, ibytes));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(e0));
        heights_root<<<1, 1>>>(d_child_start, d_child_count, d_height, d_desc, d_level, 64);
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaDeviceSynchronize());
        float ms = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) times.push_back(ms);
        CUDA_CHECK(cudaMemcpy(height.data(), d_height, ubytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(desc.data(), d_desc, ubytes, cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(level.data(), d_level, ibytes, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int v = 0; v < n; ++v) {
            if (height[v] != ref_height[v] || desc[v] != ref_desc[v] || level[v] != t.level[v]) {
                if (bad < 5)
                    fprintf(stderr, "rep %d node %d: height %u/%u desc %u/%u level %d/%d\n", r, v,
                            height[v], ref_height[v], desc[v], ref_desc[v], level[v], t.level[v]);
                ++bad;
            }
        }
        if (bad) verified = false;
        sum_heights = fnv1a(fnv1a(14695981039346656037ull, height.data(), ubytes), desc.data(), ubytes);
        sum_desc = fnv1a(14695981039346656037ull, desc.data(), ubytes);
    }
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    unsigned failures = 0;
    CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));
    std::sort(times.begin(), times.end());
    size_t m = times.size();
    double median = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
    printf("result example=tree_heights input=%s impl=cdp1_migrated time_ms=%.4f verified=%s "
           "checksum=%016llx launch_failures=%u\n",
           input.c_str(), median, verified ? "yes" : "no", (unsigned long long)sum_heights, failures);
    printf("result example=tree_descendants input=%s impl=cdp1_migrated time_ms=%.4f verified=%s "
           "checksum=%016llx launch_failures=%u\n",
           input.c_str(), median, verified ? "yes" : "no", (unsigned long long)sum_desc, failures);
    return verified && failures == 0 ? 0 : 1;
}
