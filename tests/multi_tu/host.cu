// host.cu - the host half of a two-file program (see kernels.cu): launches
// the parent 200 times with different factors and checks every result.
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
  std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); std::exit(1); } } while (0)

__global__ void rows_parent(const int *row, const int *in, int *out, int rows, int factor);
extern __device__ unsigned g_launch_failures;

int main() {
  const int rows = 3000, reps = 200;
  std::vector<int> row(rows + 1, 0);
  for (int r = 0; r < rows; ++r) row[r + 1] = row[r] + (r * 37) % 300;
  const int total = row[rows];
  // every parent thread may launch: room for all of them (the default is 2,048)
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, rows));
  std::vector<int> in(total);
  for (int i = 0; i < total; ++i) in[i] = i % 1000 - 500;
  int *d_row, *d_in, *d_out;
  CK(cudaMalloc(&d_row, sizeof(int) * (rows + 1)));
  CK(cudaMalloc(&d_in, sizeof(int) * total));
  CK(cudaMalloc(&d_out, sizeof(int) * total));
  CK(cudaMemcpy(d_row, row.data(), sizeof(int) * (rows + 1), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d_in, in.data(), sizeof(int) * total, cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));
  size_t wrong = 0;
  uint64_t h = 1469598103934665603ull;
  std::vector<int> out(total);
  CK(cudaEventRecord(t0));
  for (int k = 0; k < reps; ++k) {
    const int factor = k % 7 - 3;
    CK(cudaMemset(d_out, 0, sizeof(int) * total));
    rows_parent<<<(rows + 127) / 128, 128>>>(d_row, d_in, d_out, rows, factor);
    CK(cudaGetLastError());
    CK(cudaMemcpy(out.data(), d_out, sizeof(int) * total, cudaMemcpyDeviceToHost));
    for (int i = 0; i < total; ++i) {
      wrong += out[i] != in[i] * factor;
      h ^= (uint32_t)out[i];
      h *= 0x100000001b3ull;
    }
  }
  CK(cudaEventRecord(t1));
  CK(cudaEventSynchronize(t1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  unsigned failures = 0;
  CK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));
  if (wrong) std::fprintf(stderr, "two_files: %zu wrong elements\n", wrong);
  std::printf("result example=two_files input=default impl=cdp time_ms=%.4f verified=%s "
              "checksum=%016llx launch_failures=%u\n",
              ms, wrong == 0 ? "yes" : "no", (unsigned long long)h, failures);
  return (wrong == 0 && failures == 0) ? 0 : 1;
}
