// recursive_sum.cu - a recursive reduction written the CDP1 way: every level
// splits its range among FANOUT threads, each thread launches a child grid on
// its part (or sums it serially when it is small), waits for the child with a
// device-side cudaDeviceSynchronize(), and then adds its children's sums.
//
// CUDA 12 removed the device-side wait and sm_90 has only CDP2, so this file
// compiles for sm_90 only after `dpopt transform --migrate-sync`: the code
// after each sync becomes a continuation tail-launched after the grid and all
// its children (each level's continuation runs after its whole subtree).
//
// Output: `result example=recursive_sum input=... verified=yes checksum=...`
// (checksum: FNV-1a of every node's sum; the CPU computes the same tree).
// Flags: --n N (1000000)  --leaf L (2048)  --seed X (7)  --heap MiB (64)
// Build: dpopt transform --migrate-sync recursive_sum.cu -o r.dp.cu
//        nvcc -O3 -rdc=true -arch=sm_90 -o recursive_sum r.dp.cu -lcudadevrt

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define FANOUT 8

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
// dpopt's generated code defines it (-DDPOPT_STATS): the continuation counters.
extern "C" void dpopt_postwork_report(FILE*) __attribute__((weak));
#endif

// The range [lo, hi) of `node` is split among the FANOUT threads of the
// block; thread t owns child node node * FANOUT + t + 1.
__global__ void sum_rec(const int* data, unsigned long long* sums, int lo, int hi, int node, int leaf)
{
    const int t = threadIdx.x;
    const long long len = hi - lo;
    const int clo = lo + (int)(len * t / FANOUT);
    const int chi = lo + (int)(len * (t + 1) / FANOUT);
    const int me = node * FANOUT + t + 1;
    const bool split = chi - clo > leaf;
    if (split) {
        sum_rec<<<1, FANOUT>>>(data, sums, clo, chi, me, leaf);
        if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
    } else {
        unsigned long long s = 0;
        for (int i = clo; i < chi; ++i) s += (unsigned long long)data[i];
        sums[me] = s;
    }
    cudaDeviceSynchronize();
    // Postwork: the children's sums are complete.
    if (!split) return;
    unsigned long long s = 0;
    for (int c = 1; c <= FANOUT; ++c) s += sums[(long long)me * FANOUT + c];
    sums[me] = s;
}

// The root: one block of FANOUT threads over the whole array, then node 0.
__global__ void sum_root(const int* data, unsigned long long* sums, int n, int leaf)
{
    sum_rec<<<1, FANOUT>>>(data, sums, 0, n, 0, leaf);
    cudaDeviceSynchronize();
    unsigned long long s = 0;
    for (int c = 1; c <= FANOUT; ++c) s += sums[c];
    sums[0] = s;
}

// ---------------------------------------------------------------- host side

static long long cpu_sum(const std::vector<int>& a, std::vector<unsigned long long>& sums,
                         int lo, int hi, int node, int leaf)
{
    unsigned long long total = 0;
    for (int t = 0; t < FANOUT; ++t) {
        const long long len = hi - lo;
        const int clo = lo + (int)(len * t / FANOUT), chi = lo + (int)(len * (t + 1) / FANOUT);
        const int me = node * FANOUT + t + 1;
        unsigned long long s = 0;
        if (chi - clo > leaf) s = cpu_sum(a, sums, clo, chi, me, leaf);
        else for (int i = clo; i < chi; ++i) s += (unsigned long long)a[i];
        sums[me] = s;
        total += s;
    }
    return (long long)total;
}

static int max_node(int lo, int hi, int node, int leaf)
{
    int m = node;
    for (int t = 0; t < FANOUT; ++t) {
        const long long len = hi - lo;
        const int clo = lo + (int)(len * t / FANOUT), chi = lo + (int)(len * (t + 1) / FANOUT);
        const int me = node * FANOUT + t + 1;
        m = m > me ? m : me;
        if (chi - clo > leaf) {
            int c = max_node(clo, chi, me, leaf);
            m = m > c ? m : c;
        }
    }
    return m;
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

int main(int argc, char** argv)
{
    int n = 1000000, leaf = 2048, heap_mib = 64;
    uint64_t seed = 7;
    for (int a = 1; a + 1 < argc; a += 2) {
        std::string arg = argv[a];
        if (arg == "--n") n = atoi(argv[a + 1]);
        else if (arg == "--leaf") leaf = atoi(argv[a + 1]);
        else if (arg == "--seed") seed = strtoull(argv[a + 1], nullptr, 10);
        else if (arg == "--heap") heap_mib = atoi(argv[a + 1]);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); return 1; }
    }
    if (n < 1 || leaf < 1 || heap_mib < 1) { fprintf(stderr, "invalid arguments\n"); return 1; }
    std::vector<int> a(n);
    uint64_t s = seed;
    for (int i = 0; i < n; ++i) { s = s * 6364136223846793005ull + 1442695040888963407ull; a[i] = (int)(s >> 45); }
    const int nodes = max_node(0, n, 0, leaf) + 1;
    std::vector<unsigned long long> ref(nodes, 0), got(nodes, 0);
    ref[0] = (unsigned long long)cpu_sum(a, ref, 0, n, 0, leaf);

    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 16));
    // --heap: the device heap, where each block's continuation records go (a
    // small heap makes the blocks fall back to one continuation per thread)
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)heap_mib << 20));
    int* d_a;
    unsigned long long* d_sums;
    CUDA_CHECK(cudaMalloc(&d_a, (size_t)n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, (size_t)nodes * sizeof(unsigned long long)));
    CUDA_CHECK(cudaMemcpy(d_a, a.data(), (size_t)n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_sums, 0, (size_t)nodes * sizeof(unsigned long long)));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0));
    sum_root<<<1, 1>>>(d_a, d_sums, n, leaf);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaDeviceSynchronize());
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    CUDA_CHECK(cudaMemcpy(got.data(), d_sums, (size_t)nodes * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    unsigned failures = 0;
    CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));
    int bad = 0;
    for (int v = 0; v < nodes; ++v)
        if (got[v] != ref[v]) {
            if (bad < 5) fprintf(stderr, "node %d: %llu, expected %llu\n", v, got[v], ref[v]);
            ++bad;
        }
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    const uint64_t checksum = fnv1a(14695981039346656037ull, got.data(), got.size() * sizeof(unsigned long long));
    printf("result example=recursive_sum input=n%d-l%d impl=cdp1_migrated time_ms=%.4f verified=%s checksum=%016llx "
           "launch_failures=%u total=%llu\n",
           n, leaf, ms, bad ? "no" : "yes", (unsigned long long)checksum, failures, got[0]);
    return bad || failures ? 1 : 0;
}
