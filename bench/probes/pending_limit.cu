// pending_limit.cu - what CDP2 does when a grid launches more children than
// the pending-launch limit (cudaLimitDevRuntimePendingLaunchCount) allows.
// Each of N parent threads launches one child grid of one 32-thread block
// that marks its slot; the host counts failed launches (the parent records
// cudaGetLastError), children that ran, and the time. The launches go to the
// block's NULL stream or to cudaStreamFireAndForget.
//   pending_limit N LIMIT null|ff [SPIN]
// SPIN > 0 makes each child spin that many clock cycles (children that stay
// pending longer). Build: nvcc -O3 -rdc=true -arch=sm_90 pending_limit.cu -lcudadevrt
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

__device__ unsigned g_failures = 0;
__device__ int g_first_error = 0;

__global__ void child(int *mark, int i, long long spin)
{
    if (spin > 0) {
        long long t0 = clock64();
        while (clock64() - t0 < spin) {}
    }
    if (threadIdx.x == 0) mark[i] = 1;
}

__global__ void parent(int *mark, int n, int ff, long long spin)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (ff) child<<<1, 32, 0, cudaStreamFireAndForget>>>(mark, i, spin);
    else child<<<1, 32>>>(mark, i, spin);
    cudaError_t e = cudaGetLastError();
    if (e != cudaSuccess) {
        atomicAdd(&g_failures, 1u);
        atomicCAS(&g_first_error, 0, (int)e);
    }
}

int main(int argc, char **argv)
{
    if (argc < 4) { fprintf(stderr, "usage: %s N LIMIT null|ff [SPIN]\n", argv[0]); return 2; }
    int n = atoi(argv[1]);
    size_t limit = strtoull(argv[2], nullptr, 10);
    int ff = strcmp(argv[3], "ff") == 0;
    long long spin = argc > 4 ? atoll(argv[4]) : 0;
    if (cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, limit) != cudaSuccess) { puts("setlimit failed"); return 1; }
    size_t got = 0;
    cudaDeviceGetLimit(&got, cudaLimitDevRuntimePendingLaunchCount);
    int *mark;
    cudaMalloc(&mark, sizeof(int) * n);
    cudaMemset(mark, 0, sizeof(int) * n);
    cudaEvent_t a, b;
    cudaEventCreate(&a); cudaEventCreate(&b);
    cudaEventRecord(a);
    parent<<<(n + 127) / 128, 128>>>(mark, n, ff, spin);
    cudaEventRecord(b);
    cudaError_t e = cudaEventSynchronize(b);
    float ms = 0; cudaEventElapsedTime(&ms, a, b);
    std::vector<int> h(n);
    cudaMemcpy(h.data(), mark, sizeof(int) * n, cudaMemcpyDeviceToHost);
    long ran = 0; for (int x : h) ran += x;
    unsigned fails = 0; int first = 0;
    cudaMemcpyFromSymbol(&fails, g_failures, sizeof fails);
    cudaMemcpyFromSymbol(&first, g_first_error, sizeof first);
    printf("pending_limit n=%d limit=%zu (got %zu) stream=%s spin=%lld: %s, %.3f ms, ran %ld, failed launches %u (first error %d %s)\n",
           n, limit, got, ff ? "ff" : "null", spin, cudaGetErrorString(e), ms, ran, fails, first,
           first ? cudaGetErrorName((cudaError_t)first) : "-");
    return 0;
}
