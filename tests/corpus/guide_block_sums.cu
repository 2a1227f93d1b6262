// guide_block_sums.cu - corpus program for dpopt: per-segment sums of a
// ragged batch of int vectors, each segment summed by a child grid that is
// the CUDA C++ Programming Guide's cooperative-groups example as printed
// ("Cooperative Groups", reduce_sum / thread_sum / sum_kernel_block): a
// grid-stride loop over int4 loads in `thread_sum`, the block's group passed
// to `reduce_sum(thread_group g, int *temp, int val)`, which assigns its
// parameter `val` between the group's syncs, and `g.thread_rank() == 0`
// adding the block's sum. One parent thread per segment sizes the child
// grid to the segment (64 threads per block, 1 to 48 blocks).
// Integer sums: the CPU reference checks every segment exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o guide_block_sums guide_block_sums.cu -lcudadevrt
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

using namespace cooperative_groups;

#define CUDA_CHECK(call)                                                     \
  do {                                                                       \
    const cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(EXIT_FAILURE);                                                    \
    }                                                                        \
  } while (0)

#define BLOCK 64

__device__ unsigned int failed_launches;

__device__ int reduce_sum(thread_group g, int *temp, int val)
{
    int lane = g.thread_rank();

    // Each iteration halves the number of active threads
    // Each thread adds its partial sum[i] to sum[lane+i]
    for (int i = g.size() / 2; i > 0; i /= 2)
    {
        temp[lane] = val;
        g.sync(); // wait for all threads to store
        if(lane<i) val += temp[lane + i];
        g.sync(); // wait for all threads to load
    }
    return val; // note: only thread 0 will return full sum
}

__device__ int thread_sum(int *input, int n)
{
    int sum = 0;

    for(int i = blockIdx.x * blockDim.x + threadIdx.x;
        i < n / 4;
        i += blockDim.x * gridDim.x)
    {
        int4 in = ((int4*)input)[i];
        sum += in.x + in.y + in.z + in.w;
    }
    return sum;
}

__global__ void sum_kernel_block(int *sum, int *input, int n)
{
    int my_sum = thread_sum(input, n);

    extern __shared__ int temp[];
    auto g = this_thread_block();
    int block_sum = reduce_sum(g, temp, my_sum);

    if (g.thread_rank() == 0) atomicAdd(sum, block_sum);
}

__global__ void segment_sums(int *input, const int *offsets, int segments, int *sums) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= segments) return;
  const int begin = offsets[s], n = offsets[s + 1] - begin;
  if (n == 0) return;
  const int blocks = min((n / 4 + BLOCK - 1) / BLOCK, 48);
#pragma dp threshold(128)
  sum_kernel_block<<<blocks, BLOCK, BLOCK * sizeof(int)>>>(sums + s, input + begin, n);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int segments = 5000;
  uint32_t x = 20261202u;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  std::vector<int> offsets(segments + 1, 0);
  for (int s = 0; s < segments; ++s) {
    const uint32_t u = next();
    // multiples of 4 ints (int4 loads): mostly short, a few long, some empty
    const int quads = (u % 53 == 0) ? 0 : (u % 11 == 0) ? 500 + (int)(u % 20000) : 1 + (int)(u % 40);
    offsets[s + 1] = offsets[s] + 4 * quads;
  }
  const int total = offsets[segments];
  std::vector<int> input(total);
  for (int i = 0; i < total; ++i) input[i] = (int)(next() % 2001) - 1000;

  int *d_input, *d_offsets, *d_sums;
  CUDA_CHECK(cudaMalloc(&d_input, total * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (segments + 1) * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_sums, segments * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_input, input.data(), total * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), (segments + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_sums, 0, segments * sizeof(int)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  segment_sums<<<(segments + 127) / 128, 128>>>(d_input, d_offsets, segments, d_sums);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> sums(segments);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(sums.data(), d_sums, segments * sizeof(int), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  int bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int s = 0; s < segments; ++s) {
    int ref = 0;
    for (int i = offsets[s]; i < offsets[s + 1]; ++i) ref += input[i];
    bad += sums[s] != ref;
    h = (h ^ (uint64_t)(uint32_t)sums[s]) * 0x100000001b3ull;
  }
  const bool ok = bad == 0;
  printf("result example=guide_block_sums input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u segments=%d bad_segments=%d elements=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, segments, bad, total);
  CUDA_CHECK(cudaFree(d_input));
  CUDA_CHECK(cudaFree(d_offsets));
  CUDA_CHECK(cudaFree(d_sums));
  return (ok && lost == 0) ? 0 : 1;
}
