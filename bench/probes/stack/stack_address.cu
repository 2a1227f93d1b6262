// Where a thread's stack is: the local-space address of a variable at each level of a recursion, under
// cudaLimitStackSize 1024 and 4096, in a host-launched grid and in a device-launched child, two threads each.
#include <cstdio>
#include <cuda_runtime.h>
__device__ __noinline__ int rec(int d, int maxd, unsigned long long *out)
{
    volatile char buf[64];
    buf[0] = (char)d;
    out[d] = (unsigned long long)__cvta_generic_to_local((void *)buf);
    if (d < maxd) return rec(d + 1, maxd, out) + buf[0];
    return buf[0];
}
__global__ void k(unsigned long long *out, int maxd, int *sink)
{
    unsigned long long *o = out + 64 * threadIdx.x;
    size_t lim = 0;
    cudaDeviceGetLimit(&lim, cudaLimitStackSize);
    o[40] = lim;
    sink[threadIdx.x] = rec(0, maxd, o);
}
__global__ void parent(unsigned long long *out, int maxd, int *sink)
{
    if (threadIdx.x == 0) k<<<1, 2>>>(out, maxd, sink);
}
int main()
{
    unsigned long long *out; int *sink;
    cudaMallocManaged(&out, 2 * 64 * sizeof *out);
    cudaMalloc(&sink, 64 * sizeof(int));
    for (size_t stack : {1024, 4096}) {
        cudaDeviceSetLimit(cudaLimitStackSize, stack);
        for (int dev = 0; dev < 2; ++dev) {
            cudaMemset(out, 0, 2 * 64 * sizeof *out);
            if (dev) parent<<<1, 32>>>(out, 6, sink); else k<<<1, 2>>>(out, 6, sink);
            cudaError_t e = cudaDeviceSynchronize();
            printf("stack %zu %s: %s limit seen %llu\n", stack, dev ? "child" : "host", cudaGetErrorString(e), out[40]);
            for (int t = 0; t < 2; ++t) {
                printf("  thread %d:", t);
                for (int d = 0; d <= 6; ++d) printf(" %llu", out[64 * t + d]);
                printf("\n");
            }
        }
    }
    return 0;
}
