// How much stack a thread really has: a recursion of 80-byte frames to depth D under cudaLimitStackSize L, in a
// child grid launched from the device (as dpopt's serial fallbacks run); prints the local-space address of the
// deepest frame, or the error. Also a leaf kernel's local address (where the stack starts).
//   stack_capacity L D  |  stack_capacity leaf
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
__device__ __noinline__ int rec(int d, int maxd, unsigned long long *out)
{
    volatile char buf[64];
    buf[0] = (char)d;
    if (d == maxd) *out = (unsigned long long)__cvta_generic_to_local((void *)buf);
    if (d < maxd) return rec(d + 1, maxd, out) + buf[0];
    return buf[0];
}
__global__ void k(unsigned long long *out, int maxd, int *sink) { sink[threadIdx.x] = rec(0, maxd, out + threadIdx.x); }
__global__ void parent(unsigned long long *out, int maxd, int *sink)
{
    if (threadIdx.x == 0) k<<<1, 64>>>(out, maxd, sink);
}
__global__ void leaf(unsigned long long *out)
{
    volatile char buf[16];
    buf[0] = 1;
    out[threadIdx.x] = (unsigned long long)__cvta_generic_to_local((void *)buf) + buf[0] - 1;
}
int main(int argc, char **argv)
{
    unsigned long long *out; int *sink;
    cudaMallocManaged(&out, 64 * sizeof *out);
    cudaMalloc(&sink, 64 * sizeof(int));
    if (argc > 1 && !strcmp(argv[1], "leaf")) {
        leaf<<<1, 2>>>(out);
        cudaError_t e = cudaDeviceSynchronize();
        printf("leaf %s %llu %llu\n", cudaGetErrorString(e), out[0], out[1]);
        return 0;
    }
    const size_t L = atoi(argv[1]); const int D = atoi(argv[2]);
    cudaDeviceSetLimit(cudaLimitStackSize, L);
    parent<<<1, 32>>>(out, D, sink);
    cudaError_t e = cudaDeviceSynchronize();
    printf("L=%zu D=%d %s deepest=%llu used=%lld\n", L, D, cudaGetErrorString(e), out[0], (1ll << 24) - (long long)out[0]);
    return e != cudaSuccess;
}
