// pragma_then_sync.cu - a CDP1 parent whose launch is also annotated with
// `#pragma dp` (thresholded and coarsened), followed by a device-side wait
// and postwork that reads what the children wrote: a row-wise scale then a
// per-row sum, the sum taken after the children (paper 002's postwork).
// `dpopt transform --migrate-sync` applies both: the launch is rewritten as
// any `#pragma dp` site, and the code after the sync becomes a continuation.
//
// Output: `result example=pragma_then_sync ... verified=yes checksum=...`
// Flags: --rows R (4096)  --seed X (11)

#include <cuda_runtime.h>

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

#ifdef DPOPT_STATS
extern "C" void dpopt_postwork_report(FILE*) __attribute__((weak));
#endif

__global__ void scale_row(const int* values, int* scaled, int start, int len, int factor)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= len) return;
    scaled[start + i] = values[start + i] * factor;
}

__global__ void rows_parent(const int* row_start, const int* values, int* scaled, long long* row_sum, int rows)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= rows) return;
    const int start = row_start[r];
    const int len = row_start[r + 1] - start;
    const int factor = (r % 5) + 1;
#pragma dp threshold(64) coarsen(2)
    scale_row<<<(len + 31) / 32, 32>>>(values, scaled, start, len, factor);
    cudaDeviceSynchronize();
    long long s = 0;
    for (int k = 0; k < len; ++k) s += scaled[start + k];
    row_sum[r] = s + threadIdx.x - threadIdx.x + blockIdx.x * 0;
}

static uint64_t fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

int main(int argc, char** argv)
{
    int rows = 4096;
    uint64_t seed = 11;
    for (int a = 1; a + 1 < argc; a += 2) {
        std::string arg = argv[a];
        if (arg == "--rows") rows = atoi(argv[a + 1]);
        else if (arg == "--seed") seed = strtoull(argv[a + 1], nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); return 1; }
    }
    if (rows < 1) { fprintf(stderr, "invalid arguments\n"); return 1; }
    std::vector<int> row_start(rows + 1, 0);
    uint64_t s = seed;
    for (int r = 0; r < rows; ++r) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        row_start[r + 1] = row_start[r] + (int)((s >> 40) % 300);
    }
    const int nnz = row_start[rows];
    std::vector<int> values(nnz);
    for (int i = 0; i < nnz; ++i) { s = s * 6364136223846793005ull + 1442695040888963407ull; values[i] = (int)((s >> 41) % 1000); }
    std::vector<long long> ref(rows, 0), got(rows, 0);
    for (int r = 0; r < rows; ++r)
        for (int k = row_start[r]; k < row_start[r + 1]; ++k) ref[r] += (long long)values[k] * ((r % 5) + 1);

    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, (size_t)64 << 20));
    int *d_rs, *d_v, *d_sc;
    long long* d_sum;
    CUDA_CHECK(cudaMalloc(&d_rs, (rows + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_v, (nnz + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sc, (nnz + 1) * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_sum, rows * sizeof(long long)));
    CUDA_CHECK(cudaMemcpy(d_rs, row_start.data(), (rows + 1) * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(d_v, values.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(d_sum, 0xff, rows * sizeof(long long)));
    rows_parent<<<(rows + 127) / 128, 128>>>(d_rs, d_v, d_sc, d_sum, rows);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    CUDA_CHECK(cudaMemcpy(got.data(), d_sum, rows * sizeof(long long), cudaMemcpyDeviceToHost));
#ifdef DPOPT_STATS
    if (dpopt_postwork_report) dpopt_postwork_report(stdout);
#endif
    int bad = 0;
    for (int r = 0; r < rows; ++r)
        if (got[r] != ref[r]) {
            if (bad < 5) fprintf(stderr, "row %d: %lld, expected %lld\n", r, got[r], ref[r]);
            ++bad;
        }
    const uint64_t checksum = fnv1a(14695981039346656037ull, got.data(), got.size() * sizeof(long long));
    printf("result example=pragma_then_sync input=r%d impl=cdp1_migrated time_ms=0 verified=%s checksum=%016llx "
           "launch_failures=0\n", rows, bad ? "no" : "yes", (unsigned long long)checksum);
    return bad ? 1 : 0;
}
