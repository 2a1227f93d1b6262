// shapes.cu - CDP1 parents of less common shapes, migrated with
// `--migrate-sync`: a kernel in a namespace with `__launch_bounds__`, a
// struct parameter passed by value, an unnamed parameter, a class-typed
// local without default constructor, `(void)::cudaDeviceSynchronize()`,
// children launched by a device function the kernel calls, 2-D blocks
// (the postwork reads threadIdx.y and blockDim.x), and an early `return`
// in the postwork.
//
// Output: `result example=shapes ... verified=yes checksum=...`

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
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

#ifdef DPOPT_STATS
extern "C" void dpopt_postwork_report(FILE*) __attribute__((weak));
#endif

struct Grid2 {
    int* cells;
    int width;
};

struct Scale {
    int factor;
    __device__ explicit Scale(int f) : factor(f) {}
    __device__ int operator()(int x) const { return x * factor; }
};

namespace shapes {

__global__ void fill(Grid2 g, int row, int value)
{
    int x = blockIdx.x * blockDim.x + threadIdx.x;
    if (x < g.width) g.cells[row * g.width + x] = value + x;
}

__device__ void spawn_row(Grid2 g, int row)
{
    fill<<<(g.width + 31) / 32, 32>>>(g, row, row * 1000);
}

// One thread per row (2-D blocks of 8 x 4 threads): fill the row through a
// child, wait, then scale its sum.
__global__ void __launch_bounds__(256) rows(Grid2 g, int rows_total, int /* unused */, long long* sums)
{
    const int row = (blockIdx.x * blockDim.y + threadIdx.y) * blockDim.x + threadIdx.x;
    const Scale scale(3);
    if (row < rows_total) spawn_row(g, row);
    (void)::cudaDeviceSynchronize();
    if (row >= rows_total) return;
    long long s = 0;
    for (int x = 0; x < g.width; ++x) s += scale(g.cells[row * g.width + x]);
    sums[row] = s + (threadIdx.y * blockDim.x + threadIdx.x) - (row % (blockDim.x * blockDim.y));
}

}  // namespace shapes

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

int main()
{
    const int rows_total = 1000, width = 100;
    std::vector<long long> ref(rows_total), got(rows_total);
    for (int r = 0; r < rows_total; ++r) {
        long long s = 0;
        for (int x = 0; x < width; ++x) s += 3LL * (r * 1000 + x);
        ref[r] = s;
    }
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));
    Grid2 g;
    g.width = width;
    long long* d_sums;
    CUDA_CHECK(cudaMalloc(&g.cells, (size_t)rows_total * width * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sums, rows_total * sizeof(long long)));
    dim3 block(8, 4);
    const int blocks = (rows_total + 31) / 32;
    shapes::rows<<<blocks, block>>>(g, rows_total, 0, d_sums);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), d_sums, rows_total * sizeof(long long), cudaMemcpyDeviceToHost));
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    int bad = 0;
    for (int r = 0; r < rows_total; ++r)
        if (got[r] != ref[r]) {
            if (bad < 5) fprintf(stderr, "row %d: %lld, expected %lld\n", r, got[r], ref[r]);
            ++bad;
        }
    const uint64_t checksum = fnv1a(14695981039346656037ull, got.data(), got.size() * sizeof(long long));
    printf("result example=shapes input=r%d-w%d impl=cdp1_migrated time_ms=0 verified=%s checksum=%016llx "
           "launch_failures=0\n", rows_total, width, bad ? "no" : "yes", (unsigned long long)checksum);
    return bad ? 1 : 0;
}
