// Probes of CDP2 behaviour that the aggregation design (issue 3) relies on.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o probe cdp2_probe.cu -lcudadevrt
#include <cstdio>
#include <cooperative_groups.h>
#include <cooperative_groups/scan.h>
#include <cooperative_groups/reduce.h>
namespace cg = cooperative_groups;

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); return 1; } } while (0)

__device__ int g_block_done[1024];
__device__ int g_child_done[1024];
__device__ int g_tail_ok, g_tail_ran, g_tail_err;

__global__ void ff_child(int b) { g_child_done[b] = 1; }

__global__ void tail_checker(int nblocks) {
  int ok = 1;
  for (int b = 0; b < nblocks; ++b) ok &= g_block_done[b] & g_child_done[b];
  g_tail_ok = ok;
  g_tail_ran += 1;
  // A fire-and-forget grandchild of the tail grid: does the host wait for it?
  ff_child<<<1, 1, 0, cudaStreamFireAndForget>>>(1023);
}

// 1. Tail launch: runs after every block of the launching grid and their
//    fire-and-forget children; the host's synchronisation waits for it.
__global__ void tail_parent(int nblocks) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    tail_checker<<<1, 1, 0, cudaStreamTailLaunch>>>(nblocks);
    if (cudaGetLastError() != cudaSuccess) g_tail_err = 1;
  }
  // Delay block 0 a little so that it is not trivially last.
  if (threadIdx.x == 0) {
    long long t0 = clock64();
    while (clock64() - t0 < 20000) {}
    ff_child<<<1, 1, 0, cudaStreamFireAndForget>>>(blockIdx.x);
    g_block_done[blockIdx.x] = 1;
  }
}

// 2. Exited threads and barriers: half the threads return early (exit), the
//    rest meet at __syncthreads and at a named barrier 15.
__device__ int g_bar_ok;
__global__ void exited_barrier() {
  if (threadIdx.x % 2 == 0) return;
  __syncthreads();
  asm volatile("barrier.sync 15;" ::: "memory");
  if (threadIdx.x == 1) atomicAdd(&g_bar_ok, 1);
}

// 3. Divergent non-exited threads skip the named barrier but finish later.
__device__ int g_skip_ok;
__global__ void skip_barrier(int* out) {
  if (threadIdx.x < 32) {
    asm volatile("barrier.sync 14;" ::: "memory");  // waits for the others to arrive or exit
    if (threadIdx.x == 0) atomicAdd(&g_skip_ok, 1);
  } else {
    out[threadIdx.x] = threadIdx.x;  // skip the barrier and exit
  }
}

// 4. Large by-value parameters in a device-side launch.
template <int N> struct Blob { int v[N]; };
__device__ int g_blob_sum[3];
template <int N> __global__ void blob_child(Blob<N> b, int slot) {
  int s = 0;
  for (int i = 0; i < N; ++i) s += b.v[i];
  g_blob_sum[slot] = s;
}
__device__ int g_blob_err[3];
__global__ void blob_parent() {
  Blob<512> a;  for (int i = 0; i < 512; ++i) a.v[i] = 1;      // 2 KB
  Blob<1000> b; for (int i = 0; i < 1000; ++i) b.v[i] = 1;     // 4000 B
  Blob<2000> c; for (int i = 0; i < 2000; ++i) c.v[i] = 1;     // 8000 B
  blob_child<512><<<1, 1, 0, cudaStreamFireAndForget>>>(a, 0);
  g_blob_err[0] = cudaGetLastError();
  blob_child<1000><<<1, 1, 0, cudaStreamFireAndForget>>>(b, 1);
  g_blob_err[1] = cudaGetLastError();
  blob_child<2000><<<1, 1, 0, cudaStreamFireAndForget>>>(c, 2);
  g_blob_err[2] = cudaGetLastError();
}

// 5. Coalesced groups in divergent code: scan and reduce over the active lanes.
__device__ int g_cg[4];
__global__ void coalesced(int* out) {
  int lane = threadIdx.x;
  if (lane % 3 == 0) {
    cg::coalesced_group g = cg::coalesced_threads();
    int v = lane + 1;
    int before = cg::exclusive_scan(g, v);
    int total = cg::reduce(g, v, cg::plus<int>());
    int mx = cg::reduce(g, v, cg::greater<int>());
    out[lane] = before;
    if (g.thread_rank() == 0) { g_cg[0] = g.size(); g_cg[1] = total; g_cg[2] = mx; }
  }
}

// 6. A large static device pool needs no host code.
__device__ unsigned char g_pool[256u << 20];
__global__ void touch_pool() { g_pool[(256u << 20) - 1] = 7; g_pool[0] = 7; }

int main() {
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));
  const int nb = 256;
  tail_parent<<<nb, 32>>>(nb);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  int ok, ran, err, grand;
  CK(cudaMemcpyFromSymbol(&ok, g_tail_ok, 4)); CK(cudaMemcpyFromSymbol(&ran, g_tail_ran, 4));
  CK(cudaMemcpyFromSymbol(&err, g_tail_err, 4)); CK(cudaMemcpyFromSymbol(&grand, g_child_done, 4, 1023 * 4));
  printf("probe tail_launch: ran=%d saw_all_blocks_and_their_ff_children=%d launch_err=%d host_waited_for_tail_grandchild=%d\n", ran, ok, err, grand);

  // Stream order: a second host launch of the parent in the same stream.
  int zero[1024] = {0};
  CK(cudaMemcpyToSymbol(g_block_done, zero, sizeof zero)); CK(cudaMemcpyToSymbol(g_child_done, zero, sizeof zero));
  cudaStream_t s; CK(cudaStreamCreate(&s));
  tail_parent<<<nb, 32, 0, s>>>(nb);
  CK(cudaStreamSynchronize(s));
  CK(cudaMemcpyFromSymbol(&ran, g_tail_ran, 4)); CK(cudaMemcpyFromSymbol(&grand, g_child_done, 4, 1023 * 4));
  printf("probe tail_stream_sync: tail_runs=%d host_stream_sync_waited_for_tail_grandchild=%d\n", ran, grand);

  exited_barrier<<<4, 256>>>();
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  CK(cudaMemcpyFromSymbol(&ok, g_bar_ok, 4));
  printf("probe exited_threads_barrier: blocks_passed=%d of 4\n", ok);

  int* d_out; CK(cudaMalloc(&d_out, 1024 * 4));
  skip_barrier<<<4, 128>>>(d_out);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  CK(cudaMemcpyFromSymbol(&ok, g_skip_ok, 4));
  printf("probe named_barrier_skipped_by_exiting_threads: blocks_passed=%d of 4\n", ok);

  blob_parent<<<1, 1>>>();
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  int sums[3], errs[3];
  CK(cudaMemcpyFromSymbol(sums, g_blob_sum, 12)); CK(cudaMemcpyFromSymbol(errs, g_blob_err, 12));
  printf("probe param_bytes: 2048B sum=%d err=%d | 4000B sum=%d err=%d | 8000B sum=%d err=%d\n", sums[0], errs[0], sums[1], errs[1], sums[2], errs[2]);

  coalesced<<<1, 32>>>(d_out);
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  int cgv[4]; int out[32];
  CK(cudaMemcpyFromSymbol(cgv, g_cg, 16)); CK(cudaMemcpy(out, d_out, 128, cudaMemcpyDeviceToHost));
  printf("probe coalesced_group: size=%d total=%d max=%d scan_of_lane9=%d (expect 11 11? see source)\n", cgv[0], cgv[1], cgv[2], out[9]);

  touch_pool<<<1, 1>>>();
  CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  printf("probe static_pool_256MiB: ok\n");
  return 0;
}
