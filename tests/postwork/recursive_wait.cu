// recursive_wait.cu - a CDP1 recursion that waits for its children as the
// last thing each thread does (as CDP1 trees and BFS codes end their
// kernels), with `#pragma dp` on the recursive launch, migrated with
// `--migrate-sync`: the wait is dropped in the kernel and in the copies of
// its body that the pragma makes (serial, coarsened, aggregated).
// Each node of a complete tree (fan-out --fanout, depth --depth) writes its
// depth and counts itself; the CPU checks both.
//
// Output: `result example=recursive_wait ... verified=yes checksum=...`

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

// Node `node` at depth `depth`: thread t visits child node * fanout + 1 + t.
__global__ void visit(int *depth_of, int *visits, int node, int depth, int fanout, int max_depth)
{
    const int child = node * fanout + 1 + threadIdx.x;
    if (threadIdx.x < fanout && depth < max_depth) {
        depth_of[child] = depth + 1;
        atomicAdd(visits, 1);
#pragma dp threshold(8) coarsen(2) consldt(grid)
        visit<<<1, fanout>>>(depth_of, visits, child, depth + 1, fanout, max_depth);
    }
    cudaDeviceSynchronize();
}

int main(int argc, char **argv)
{
    int fanout = 4, max_depth = 6;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (std::string(argv[i]) == "--fanout") fanout = atoi(argv[i + 1]);
        if (std::string(argv[i]) == "--depth") max_depth = atoi(argv[i + 1]);
    }
    long long nodes = 1, level = 1;
    for (int d = 1; d <= max_depth; ++d) { level *= fanout; nodes += level; }
    std::vector<int> ref(nodes), got(nodes);
    ref[0] = 0;
    for (long long v = 1; v < nodes; ++v) ref[v] = ref[(v - 1) / fanout] + 1;
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 65536));
    int *d_depth, *d_visits;
    CUDA_CHECK(cudaMalloc(&d_depth, nodes * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&d_visits, sizeof(int)));
    CUDA_CHECK(cudaMemset(d_depth, 0, nodes * sizeof(int)));
    CUDA_CHECK(cudaMemset(d_visits, 0, sizeof(int)));
    visit<<<1, fanout>>>(d_depth, d_visits, 0, 0, fanout, max_depth);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    int visits = 0;
    CUDA_CHECK(cudaMemcpy(got.data(), d_depth, nodes * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&visits, d_visits, sizeof(int), cudaMemcpyDeviceToHost));
    int bad = visits == nodes - 1 ? 0 : 1;
    if (bad) fprintf(stderr, "%d visits, expected %lld\n", visits, nodes - 1);
    for (long long v = 0; v < nodes; ++v)
        if (got[v] != ref[v]) {
            if (bad < 5) fprintf(stderr, "node %lld: depth %d, expected %d\n", v, got[v], ref[v]);
            ++bad;
        }
    uint64_t h = 14695981039346656037ull;
    for (int x : got) { h ^= (uint64_t)(unsigned)x; h *= 1099511628211ull; }
    printf("result example=recursive_wait input=f%d-d%d impl=cdp1_migrated time_ms=0 verified=%s checksum=%016llx "
           "launch_failures=0\n", fanout, max_depth, bad ? "no" : "yes", (unsigned long long)h);
    return bad ? 1 : 0;
}
