// Seed: raw strings that hold pragma-like text, macros in the launch
// configuration and in the clauses, a multi-line macro.
#include <cstdio>
#include <cuda_runtime.h>

#define TH 96
#define CF 3
#define BS 64
#define GRID(n) (((n) + BS - 1) / BS)
#define CHECK(x)                                   \
  do {                                             \
    if ((x) != cudaSuccess) std::printf("fail\n"); \
  } while (0)

static const char *kUsage = R"usage(
usage: raw_strings_macros
#pragma dp threshold(1)
  child<<<1, 1>>>(a, n);
)usage";

__global__ void fill_child(float *a, int n, float v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = v;
}

__global__ void fill_parent(float *a, const int *n, int np) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np) return;
  const char *note = "#pragma dp threshold(2) /* not a directive */";
  (void)note;
#pragma dp threshold(TH) coarsen(CF)
  fill_child<<<GRID(n[p]), BS>>>(a + p * 4096, n[p], 1.0f);
}

int main() {
  std::puts(kUsage);
  fill_parent<<<1, 32>>>(nullptr, nullptr, 0);
  CHECK(cudaDeviceSynchronize());
  return 0;
}
