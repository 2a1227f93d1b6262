// tree_descendants_cdp1.cu - descendant counts written the CDP1 way: the
// kernel runs over a node range [first, first + count), thread i handles
// node first + i, relaunches the kernel on that node's children, waits for
// them with a device-side cudaDeviceSynchronize(), and then adds up their
// counts bottom-up:  desc[v] = sum over children c of (desc[c] + 1).
// The host launches it on the root alone, as examples/tree_descendants.cu
// does with its top-down CDP2 version.
//
// CUDA 12 removed the device-side wait and sm_90 has only CDP2: this file
// compiles for sm_90 after `dpopt transform --migrate-sync`, whose
// continuations run each level's sum after the level's whole subtree.
//
// Same generator and flags as examples/tree_descendants.cu (examples/common/tree.h),
// so `result example=tree_descendants ... checksum=` (FNV-1a of desc) must
// equal the checksum that example prints for the same flags.
// Flags: --depth D (4)  --outdeg K (32)  --sparsity S (1)  --max-nodes N (4000000)
//        --seed X (12345)  --reps R (3)  --pending P  --heap MiB (256)
// Build: dpopt transform --migrate-sync tree_descendants_cdp1.cu -o d.dp.cu
//        nvcc -O3 -rdc=true -arch=sm_90 -I examples -o tree_descendants_cdp1 d.dp.cu -lcudadevrt

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

__global__ void desc_cdp1(const int* child_start, const int* child_count, unsigned int* desc,
                          int first, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    int v = first + i;
    int nchildren = child_count[v];
    if (nchildren > 0) {
        desc_cdp1<<<(nchildren + 31) / 32, 32>>>(child_start, child_count, desc, child_start[v], nchildren);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
    }
    cudaDeviceSynchronize();  // CDP1: the subtree of v is counted
    unsigned int d = 0;
    for (int k = 0; k < nchildren; ++k) d += desc[child_start[v] + k] + 1u;
    desc[v] = d;
}

// ---------------------------------------------------------------- host side

#include "common/tree.h"  // Tree, generate_tree (shared with the CDP2 examples)

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
    // the continuations add a nesting level per tree level: depth <= 10 stays within 24
    if (depth < 1 || depth > 10 || outdeg < 1 || sparsity < 0 || sparsity > 63 || reps < 1 ||
        heap_mib < 0 || max_nodes < (long long)outdeg + 1 || max_nodes > (1ll << 30)) {
        fprintf(stderr, "invalid arguments (depth 1..10, outdeg >= 1, sparsity 0..63, reps >= 1)\n");
        return 1;
    }
    Tree t = generate_tree(depth, outdeg, sparsity, max_nodes, seed);
    const int n = t.size();
    const std::vector<unsigned> ref = cpu_reference(t);
    size_t pending = std::min<size_t>(std::max<size_t>(2048, (size_t)n), (size_t)1 << 20);
    if (pending_limit > 0) pending = (size_t)pending_limit;
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));
    if (heap_mib > 0) CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)heap_mib << 20));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("info example=tree_descendants_cdp1 nodes=%d leaves=%d depth=%d gpu=%s\n", n, t.leaves,
           t.max_depth, prop.name);

    int *d_child_start, *d_child_count;
    unsigned* d_desc;
    size_t ibytes = (size_t)n * sizeof(int), ubytes = (size_t)n * sizeof(unsigned);
    CUDA_CHECK(cudaMalloc(&d_child_start, ibytes));
    CUDA_CHECK(cudaMalloc(&d_child_count, ibytes));
    CUDA_CHECK(cudaMalloc(&d_desc, ubytes));
    CUDA_CHECK(cudaMemcpy(d_child_start, t.child_start.data(), ibytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_child_count, t.child_count.data(), ibytes, cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    std::string input = "d" + std::to_string(depth) + "-k" + std::to_string(outdeg) + "-s" +
                        std::to_string(sparsity);
    std::vector<unsigned> desc(n);
    std::vector<float> times;
    bool verified = true;
    uint64_t checksum = 0;
    for (int r = 0; r <= reps; ++r) {  // r == 0 is the untimed warm-up
        CUDA_CHECK(cudaMemset(d_desc, 0xff, ubytes));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaEventRecord(e0));
        desc_cdp1<<<1, 1>>>(d_child_start, d_child_count, d_desc, 0, 1);  // the root alone
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaEventRecord(e1));
        CUDA_CHECK(cudaEventSynchronize(e1));
        CUDA_CHECK(cudaDeviceSynchronize());
        float ms = 0.f;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r > 0) times.push_back(ms);
        CUDA_CHECK(cudaMemcpy(desc.data(), d_desc, ubytes, cudaMemcpyDeviceToHost));
        int bad = 0;
        for (int v = 0; v < n; ++v)
            if (desc[v] != ref[v]) {
                if (bad < 5) fprintf(stderr, "rep %d node %d: desc %u/%u\n", r, v, desc[v], ref[v]);
                ++bad;
            }
        if (bad) verified = false;
        checksum = fnv1a(14695981039346656037ull, desc.data(), ubytes);
    }
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    unsigned failures = 0;
    CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));
    std::sort(times.begin(), times.end());
    size_t m = times.size();
    double median = m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
    printf("result example=tree_descendants input=%s impl=cdp1_migrated time_ms=%.4f verified=%s "
           "checksum=%016llx launch_failures=%u\n",
           input.c_str(), median, verified ? "yes" : "no", (unsigned long long)checksum, failures);
    return verified && failures == 0 ? 0 : 1;
}
