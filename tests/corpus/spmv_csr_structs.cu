// spmv_csr_structs.cu - corpus program for dpopt: CSR sparse matrix-vector
// product, one child grid per row, whose child takes its parameters as
// structs by value of every layout a real kernel signature may have: an
// `alignas(16)` row descriptor, a `float4` of scales, a `double2` bias, a
// 3-byte struct and a ~200-byte struct with an array member. Values are
// integers so that the atomic sums do not depend on the order.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o spmv_csr_structs spmv_csr_structs.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define cuda_try(x)                                                      \
  do {                                                                   \
    cudaError_t s = (x);                                                 \
    if (s != cudaSuccess) {                                              \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(s)); \
      std::exit(3);                                                      \
    }                                                                    \
  } while (0)

struct alignas(16) RowDesc {
  int row;
  int begin;
  int len;
  int flags;
};

struct Rgb {
  unsigned char r, g, b;
};

struct Weights {
  int w[48];
  int count;
  short tag;
};

static_assert(sizeof(Rgb) == 3, "3-byte struct");
static_assert(sizeof(Weights) >= 196, "large struct");

__device__ unsigned spmv_failures;

__global__ void row_product(RowDesc rd, const int *col, const int *val, const int *x, float4 scale,
                            double2 bias, Rgb tag, Weights weights, unsigned long long *y) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rd.len) return;
  const int e = rd.begin + i;
  long long v = (long long)val[e] * x[col[e]] * (int)scale.x + weights.w[i % weights.count];
  if (i == 0)
    v += (long long)bias.x + (long long)(bias.y * 4.0) + tag.r + tag.g + tag.b + (int)scale.w + weights.tag +
         (rd.flags & 1);
  atomicAdd(&y[rd.row], (unsigned long long)v);
}

__global__ void spmv_rows(const int *row_ptr, const int *col, const int *val, const int *x, int nrows,
                          unsigned long long *y) {
  const int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= nrows) return;
  RowDesc rd;
  rd.row = r;
  rd.begin = row_ptr[r];
  rd.len = row_ptr[r + 1] - row_ptr[r];
  rd.flags = r % 3;
  if (rd.len == 0) return;
  const float4 scale = make_float4((float)(1 + r % 3), 0.5f, 0.25f, (float)(r % 5));
  const double2 bias = make_double2(3.0 * r, 0.25 * (r % 8));
  const Rgb tag = {(unsigned char)(r & 0xff), (unsigned char)(r % 7), 200};
  Weights weights;
  weights.count = 1 + r % 48;
  for (int k = 0; k < 48; ++k) weights.w[k] = (k < weights.count) ? (r + k) % 10 : 0;
  weights.tag = (short)(r % 100);
#pragma dp threshold(128) coarsen(2)
  row_product<<<(rd.len + 127) / 128, 128>>>(rd, col, val, x, scale, bias, tag, weights, y);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&spmv_failures, 1u);
}

int main() {
  const int nrows = 5000, ncols = 5000;
  std::vector<int> row_ptr(nrows + 1, 0), col, val, x(ncols);
  for (int r = 0; r < nrows; ++r) {
    const int len = (r % 53 == 0) ? 800 + (r * 29) % 3000 : (r * 3) % 40;
    for (int k = 0; k < len; ++k) {
      col.push_back((int)(((long long)r * 131 + (long long)k * 977) % ncols));
      val.push_back((r + 3 * k) % 19 - 9);
    }
    row_ptr[r + 1] = (int)col.size();
  }
  for (int c = 0; c < ncols; ++c) x[c] = (c * 7) % 23 - 11;
  const int nnz = (int)col.size();
  cuda_try(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 1 << 14));
  int *d_row_ptr, *d_col, *d_val, *d_x;
  unsigned long long *d_y;
  cuda_try(cudaMalloc(&d_row_ptr, (nrows + 1) * sizeof(int)));
  cuda_try(cudaMalloc(&d_col, nnz * sizeof(int)));
  cuda_try(cudaMalloc(&d_val, nnz * sizeof(int)));
  cuda_try(cudaMalloc(&d_x, ncols * sizeof(int)));
  cuda_try(cudaMalloc(&d_y, nrows * sizeof(unsigned long long)));
  cuda_try(cudaMemcpy(d_row_ptr, row_ptr.data(), (nrows + 1) * sizeof(int), cudaMemcpyHostToDevice));
  cuda_try(cudaMemcpy(d_col, col.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  cuda_try(cudaMemcpy(d_val, val.data(), nnz * sizeof(int), cudaMemcpyHostToDevice));
  cuda_try(cudaMemcpy(d_x, x.data(), ncols * sizeof(int), cudaMemcpyHostToDevice));
  cuda_try(cudaMemset(d_y, 0, nrows * sizeof(unsigned long long)));

  cudaEvent_t t0, t1;
  cuda_try(cudaEventCreate(&t0));
  cuda_try(cudaEventCreate(&t1));
  cuda_try(cudaEventRecord(t0));
  spmv_rows<<<(nrows + 127) / 128, 128>>>(d_row_ptr, d_col, d_val, d_x, nrows, d_y);
  cuda_try(cudaGetLastError());
  cuda_try(cudaEventRecord(t1));
  cuda_try(cudaDeviceSynchronize());
  float ms = 0;
  cuda_try(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<unsigned long long> y(nrows);
  cuda_try(cudaMemcpy(y.data(), d_y, nrows * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  unsigned failures = 0;
  cuda_try(cudaMemcpyFromSymbol(&failures, spmv_failures, sizeof failures));
  bool ok = true;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int r = 0; r < nrows; ++r) {
    long long ref = 0;
    const int len = row_ptr[r + 1] - row_ptr[r], count = 1 + r % 48;
    for (int i = 0; i < len; ++i) {
      const int e = row_ptr[r] + i;
      ref += (long long)val[e] * x[col[e]] * (1 + r % 3) + (r + i % count) % 10;
    }
    if (len > 0)
      ref += 3LL * r + (long long)(0.25 * (r % 8) * 4.0) + (r & 0xff) + r % 7 + 200 + r % 5 + r % 100 + (r % 3 & 1);
    if ((long long)y[r] != ref) ok = false;
    h = (h ^ y[r]) * 0x100000001b3ull;
  }
  printf("result example=spmv_csr_structs input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, failures);
  cuda_try(cudaFree(d_row_ptr));
  cuda_try(cudaFree(d_col));
  cuda_try(cudaFree(d_val));
  cuda_try(cudaFree(d_x));
  cuda_try(cudaFree(d_y));
  return (ok && failures == 0) ? 0 : 1;
}
