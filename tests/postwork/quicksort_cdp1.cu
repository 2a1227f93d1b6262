// quicksort_cdp1.cu - a recursive quicksort written the CDP1 way: one thread
// partitions its range, launches itself on the smaller part, waits for it
// with a device-side cudaDeviceSynchronize(), and only then launches itself
// on the larger part (so that at most one part per level is pending, as
// CUDA 11-era samples bounded their pending launches). Ranges of at most
// INSERTION elements, or at the depth limit, are sorted by insertion sort.
//
// CUDA 12 removed the device-side wait and sm_90 has only CDP2, so this file
// compiles for sm_90 only after `dpopt transform --migrate-sync`: the launch
// of the second part moves into a continuation tail-launched after the first
// part has been sorted completely (its whole subtree of launches).
//
// Output: `result example=quicksort_cdp1 ... verified=yes checksum=...`
// (checksum: FNV-1a of the sorted array; the CPU sorts the same input).
// Flags: --n N (65536)  --seed X (3)
// Build: dpopt transform --migrate-sync quicksort_cdp1.cu -o q.dp.cu
//        nvcc -O3 -rdc=true -arch=sm_90 -o quicksort_cdp1 q.dp.cu -lcudadevrt

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define INSERTION 32
#define MAX_DEPTH 7  // each level adds a child and a continuation: 2 * 7 + 1 nesting levels <= 24

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

__device__ void insertion_sort(unsigned* a, int lo, int hi)
{
    for (int i = lo + 1; i < hi; ++i) {
        unsigned v = a[i];
        int j = i - 1;
        while (j >= lo && a[j] > v) { a[j + 1] = a[j]; --j; }
        a[j + 1] = v;
    }
}

// Hoare partition of [lo, hi) around its middle element (the lower middle:
// Hoare's scheme then never returns an empty part); returns p with every
// element of [lo, p) <= every element of [p, hi), lo < p < hi.
__device__ int partition(unsigned* a, int lo, int hi)
{
    const unsigned pivot = a[lo + (hi - 1 - lo) / 2];
    int i = lo - 1, j = hi;
    for (;;) {
        do { ++i; } while (a[i] < pivot);
        do { --j; } while (a[j] > pivot);
        if (i >= j) return j + 1;
        unsigned t = a[i]; a[i] = a[j]; a[j] = t;
    }
}

__global__ void quicksort_cdp1(unsigned* data, int lo, int hi, int depth)
{
    if (hi - lo <= INSERTION || depth >= MAX_DEPTH) {
        insertion_sort(data, lo, hi);
        return;
    }
    int p = partition(data, lo, hi);
    bool left_smaller = p - lo <= hi - p;
    int first_lo = left_smaller ? lo : p, first_hi = left_smaller ? p : hi;
    quicksort_cdp1<<<1, 1>>>(data, first_lo, first_hi, depth + 1);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
    cudaDeviceSynchronize();  // CDP1: the smaller part is sorted
    int second_lo = left_smaller ? p : lo, second_hi = left_smaller ? hi : p;
    quicksort_cdp1<<<1, 1>>>(data, second_lo, second_hi, depth + 1);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
}

// ---------------------------------------------------------------- host side

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

int main(int argc, char** argv)
{
    int n = 65536;
    uint64_t seed = 3;
    for (int a = 1; a + 1 < argc; a += 2) {
        std::string arg = argv[a];
        if (arg == "--n") n = atoi(argv[a + 1]);
        else if (arg == "--seed") seed = strtoull(argv[a + 1], nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); return 1; }
    }
    if (n < 1) { fprintf(stderr, "invalid arguments\n"); return 1; }
    std::vector<unsigned> a(n);
    uint64_t s = seed;
    for (int i = 0; i < n; ++i) { s = s * 6364136223846793005ull + 1442695040888963407ull; a[i] = (unsigned)(s >> 33); }
    std::vector<unsigned> ref = a;
    std::sort(ref.begin(), ref.end());

    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 15));
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)64 << 20));
    unsigned* d;
    CUDA_CHECK(cudaMalloc(&d, (size_t)n * sizeof(unsigned)));
    CUDA_CHECK(cudaMemcpy(d, a.data(), (size_t)n * sizeof(unsigned), cudaMemcpyHostToDevice));
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    CUDA_CHECK(cudaEventRecord(e0));
    quicksort_cdp1<<<1, 1>>>(d, 0, n, 0);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(e1));
    CUDA_CHECK(cudaDeviceSynchronize());
    float ms = 0.f;
    CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
    std::vector<unsigned> got(n);
    CUDA_CHECK(cudaMemcpy(got.data(), d, (size_t)n * sizeof(unsigned), cudaMemcpyDeviceToHost));
    unsigned failures = 0;
    CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    const bool ok = got == ref;
    if (!ok) {
        int bad = 0;
        for (int i = 0; i < n && bad < 5; ++i)
            if (got[i] != ref[i]) { fprintf(stderr, "index %d: %u, expected %u\n", i, got[i], ref[i]); ++bad; }
    }
    const uint64_t checksum = fnv1a(14695981039346656037ull, got.data(), got.size() * sizeof(unsigned));
    printf("result example=quicksort_cdp1 input=n%d-s%llu impl=cdp1_migrated time_ms=%.4f verified=%s "
           "checksum=%016llx launch_failures=%u\n",
           n, (unsigned long long)seed, ms, ok ? "yes" : "no", (unsigned long long)checksum, failures);
    return ok && failures == 0 ? 0 : 1;
}
