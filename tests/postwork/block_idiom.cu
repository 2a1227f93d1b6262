// block_idiom.cu - the CDP1 block-level idiom of CUDA 11-era guides: one
// thread per block launches the child work of the whole block, waits for it
// (`if (threadIdx.x == 0) { launch; cudaDeviceSynchronize(); }`), a block
// barrier follows, and then every thread reads what the children wrote.
// Here each block squares its segment of the input through a child grid,
// then every thread adds its square and its left neighbour's (postwork that
// reads values other threads' children wrote).
//
// `dpopt transform --migrate-sync` moves the wait after the `if` (every
// thread of the block continues in the continuation, after the children);
// the leading `__syncthreads()` of the postwork stays (it holds there).
//
// Output: `result example=block_idiom ... verified=yes checksum=...`
// Flags: --n N (1048576)  --pending P (2 * blocks + 2048)

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define BLOCK 256

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,   \
                    __LINE__, cudaGetErrorString(err_));                       \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

#ifdef DPOPT_STATS
extern "C" void dpopt_postwork_report(FILE*) __attribute__((weak));
#endif

__global__ void square(const int* in, long long* sq, int first, int count)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) sq[first + i] = (long long)in[first + i] * in[first + i];
}

__global__ void block_parent(const int* in, long long* sq, long long* out, int n)
{
    const int first = blockIdx.x * blockDim.x;
    const int i = first + threadIdx.x;
    const int count = min((int)blockDim.x, n - first);
    if (threadIdx.x == 0) {
        square<<<(count + 63) / 64, 64>>>(in, sq, first, count);
        cudaDeviceSynchronize();
    }
    __syncthreads();
    if (i >= n) return;
    out[i] = sq[i] + (i > 0 ? sq[i - 1] : 0);
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

int main(int argc, char** argv)
{
    int n = 1 << 20, pending = 0;
    for (int a = 1; a + 1 < argc; a += 2) {
        std::string arg = argv[a];
        if (arg == "--n") n = atoi(argv[a + 1]);
        else if (arg == "--pending") pending = atoi(argv[a + 1]);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); return 1; }
    }
    if (n < 1) { fprintf(stderr, "invalid arguments\n"); return 1; }
    std::vector<int> in(n);
    for (int i = 0; i < n; ++i) in[i] = (int)((i * 2654435761u) % 20011u) - 10000;
    std::vector<long long> ref(n), got(n);
    for (int i = 0; i < n; ++i)
        ref[i] = (long long)in[i] * in[i] + (i > 0 ? (long long)in[i - 1] * in[i - 1] : 0);
    const int blocks = (n + BLOCK - 1) / BLOCK;
    // one child launch and one continuation per block (one per thread with
    // -DDPOPT_POSTWORK_PER_THREAD: give --pending then)
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending > 0 ? pending : 2 * blocks + 2048));
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)64 << 20));
    int* d_in;
    long long *d_sq, *d_out;
    CUDA_CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sq, n * sizeof(long long)));
    CUDA_CHECK(cudaMalloc(&d_out, n * sizeof(long long)));
    CUDA_CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_out, 0, n * sizeof(long long)));
    block_parent<<<blocks, BLOCK>>>(d_in, d_sq, d_out, n);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(long long), cudaMemcpyDeviceToHost));
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    int bad = 0;
    for (int i = 0; i < n; ++i)
        if (got[i] != ref[i]) {
            if (bad < 5) fprintf(stderr, "index %d: %lld, expected %lld\n", i, got[i], ref[i]);
            ++bad;
        }
    const uint64_t checksum = fnv1a(14695981039346656037ull, got.data(), got.size() * sizeof(long long));
    printf("result example=block_idiom input=n%d impl=cdp1_migrated time_ms=0 verified=%s checksum=%016llx "
           "launch_failures=0\n", n, bad ? "no" : "yes", (unsigned long long)checksum);
    return bad ? 1 : 0;
}
