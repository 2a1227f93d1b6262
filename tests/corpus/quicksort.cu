// quicksort.cu - corpus program for dpopt: recursive quicksort in the style
// of the CUDA samples. One thread partitions a range (median of three) and
// launches the left and the right part from two launch sites, each into its
// own non-blocking stream created on the device; ranges below a size, or
// past a nesting depth, are sorted by insertion sort in place.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o quicksort quicksort.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define MAX_DEPTH 16
#define INSERTION_SORT 32

#define checkCudaErrors(val) check((val), #val, __FILE__, __LINE__)
static void check(cudaError_t result, const char *func, const char *file, int line) {
  if (result) {
    fprintf(stderr, "CUDA error at %s:%d code=%d(%s) \"%s\"\n", file, line, (int)result,
            cudaGetErrorName(result), func);
    exit(EXIT_FAILURE);
  }
}

__device__ unsigned int d_launch_failures = 0;

__device__ void insertion_sort(unsigned int *data, int left, int right) {
  for (int i = left + 1; i <= right; ++i) {
    unsigned int v = data[i];
    int j = i - 1;
    while (j >= left && data[j] > v) {
      data[j + 1] = data[j];
      --j;
    }
    data[j + 1] = v;
  }
}

__global__ void cdp_quicksort(unsigned int *data, int left, int right, int depth) {
  if (depth >= MAX_DEPTH || right - left <= INSERTION_SORT) {
    insertion_sort(data, left, right);
    return;
  }
  // Median of three as the pivot value.
  const int mid = left + (right - left) / 2;
  unsigned int a = data[left], b = data[mid], c = data[right];
  unsigned int pivot = max(min(a, b), min(max(a, b), c));
  // Hoare partition.
  int i = left, j = right;
  while (i <= j) {
    while (data[i] < pivot) ++i;
    while (data[j] > pivot) --j;
    if (i <= j) {
      unsigned int t = data[i];
      data[i] = data[j];
      data[j] = t;
      ++i;
      --j;
    }
  }
  if (left < j) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
#pragma dp threshold(2)
    cdp_quicksort<<<1, 1, 0, s>>>(data, left, j, depth + 1);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_failures, 1u);
    cudaStreamDestroy(s);
  }
  if (i < right) {
    cudaStream_t s1;
    cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking);
#pragma dp threshold(2)
    cdp_quicksort<<<1, 1, 0, s1>>>(data, i, right, depth + 1);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&d_launch_failures, 1u);
    cudaStreamDestroy(s1);
  }
}

int main() {
  const int num_items = 12000;
  std::vector<unsigned int> h_data(num_items);
  unsigned int seed = 2024u;
  for (int i = 0; i < num_items; ++i) {
    seed = seed * 1103515245u + 12345u;
    h_data[i] = (seed >> 4) % 50000u;  // with duplicates
  }
  checkCudaErrors(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  unsigned int *d_data = nullptr;
  checkCudaErrors(cudaMalloc(&d_data, num_items * sizeof(unsigned int)));
  checkCudaErrors(cudaMemcpy(d_data, h_data.data(), num_items * sizeof(unsigned int), cudaMemcpyHostToDevice));

  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  checkCudaErrors(cudaEventRecord(start));
  cdp_quicksort<<<1, 1>>>(d_data, 0, num_items - 1, 0);
  checkCudaErrors(cudaGetLastError());
  checkCudaErrors(cudaEventRecord(stop));
  checkCudaErrors(cudaDeviceSynchronize());
  float ms = 0.0f;
  checkCudaErrors(cudaEventElapsedTime(&ms, start, stop));

  std::vector<unsigned int> result(num_items);
  checkCudaErrors(cudaMemcpy(result.data(), d_data, num_items * sizeof(unsigned int), cudaMemcpyDeviceToHost));
  unsigned int failures = 0;
  checkCudaErrors(cudaMemcpyFromSymbol(&failures, d_launch_failures, sizeof(failures)));
  std::vector<unsigned int> expected = h_data;
  std::sort(expected.begin(), expected.end());
  const bool ok = (result == expected);
  unsigned long long checksum = 0xcbf29ce484222325ull;
  for (unsigned int v : result) checksum = (checksum ^ v) * 0x100000001b3ull;
  printf("result example=quicksort input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", checksum, failures);
  checkCudaErrors(cudaFree(d_data));
  return (ok && failures == 0) ? 0 : 1;
}
