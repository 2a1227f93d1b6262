// block_jacobi_lu.cu - corpus program for dpopt: the setup of a block-Jacobi
// preconditioner, which factors every diagonal block of a sparse matrix in
// place (L below the diagonal, U on and above it). The blocks come in groups
// of one size (8 to 32 rows; a group holds 1 to 64 blocks); one parent
// thread per group launches one child block per matrix of its group.
// The child is Rodinia's `lud_diagonal` (lud_kernel.cu) as its authors wrote
// it, in C89 style: the counters `i` and `j` declared at the top and reused
// by the per-thread copy loops and by the barrier loop of the elimination,
// with the block size a parameter instead of BLOCK_SIZE.
// The matrices are products of integer unit-lower L and upper U with entries
// in [-2, 2] and +-1 on U's diagonal, so every operation is exact and the CPU
// checks every factor's entry exactly.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o block_jacobi_lu block_jacobi_lu.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CUDA_CHECK(call)                                                     \
  do {                                                                       \
    const cudaError_t e_ = (call);                                           \
    if (e_ != cudaSuccess) {                                                 \
      fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      exit(EXIT_FAILURE);                                                    \
    }                                                                        \
  } while (0)

#define MAX_BS 32

__device__ unsigned int failed_launches;

__global__ void __launch_bounds__(MAX_BS)
lud_diagonal(float *m, int matrix_dim, int offset, int bs)
{
  int i,j;
  __shared__ float shadow[MAX_BS][MAX_BS];

  float *block = m + (size_t)blockIdx.x * matrix_dim * matrix_dim;
  int array_offset = offset*matrix_dim+offset;
  for(i=0; i < bs; i++){
    shadow[i][threadIdx.x]=block[array_offset+threadIdx.x];
    array_offset += matrix_dim;
  }
  __syncthreads();
  for(i=0; i < bs-1; i++) {

    if (threadIdx.x>i){
      for(j=0; j < i; j++)
        shadow[threadIdx.x][i] -= shadow[threadIdx.x][j]*shadow[j][i];
      shadow[threadIdx.x][i] /= shadow[i][i];
    }

    __syncthreads();
    if (threadIdx.x>i){

      for(j=0; j < i+1; j++)
        shadow[i+1][threadIdx.x] -= shadow[i+1][j]*shadow[j][threadIdx.x];
    }
    __syncthreads();
  }

  /*
     The first row is not modified, it
     is no need to write it back to the
     global memory

   */
  array_offset = (offset+1)*matrix_dim+offset;
  for(i=1; i < bs; i++){
    block[array_offset+threadIdx.x]=shadow[i][threadIdx.x];
    array_offset += matrix_dim;
  }
}

__global__ void factor_groups(float *blocks, const int *group_start, const int *group_size,
                              const int *group_count, int groups) {
  const int g = blockIdx.x * blockDim.x + threadIdx.x;
  if (g >= groups) return;
  const int bs = group_size[g];
#pragma dp threshold(128)
  lud_diagonal<<<group_count[g], bs>>>(blocks + group_start[g], bs, 0, bs);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int groups = 2500;
  const int sizes[] = {8, 12, 16, 20, 24, 32};
  uint32_t s = 20261202u;
  auto next = [&s]() {
    s ^= s << 13;
    s ^= s >> 17;
    s ^= s << 5;
    return s;
  };
  std::vector<int> start(groups), size(groups), count(groups);
  size_t total = 0;
  for (int g = 0; g < groups; ++g) {
    const uint32_t u = next();
    size[g] = sizes[u % 6];
    count[g] = (u >> 8) % 8 == 0 ? 1 + (int)((u >> 12) % 64) : 1 + (int)((u >> 12) % 3);
    start[g] = (int)total;
    total += (size_t)count[g] * size[g] * size[g];
  }
  // Each block: A = L * U, L unit lower, U upper with +-1 on its diagonal.
  std::vector<float> a(total), lu(total);
  for (int g = 0; g < groups; ++g) {
    const int n = size[g];
    for (int b = 0; b < count[g]; ++b) {
      float *A = &a[start[g] + (size_t)b * n * n];
      float *F = &lu[start[g] + (size_t)b * n * n];
      std::vector<int> L(n * n, 0), U(n * n, 0);
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
          if (c < r) L[r * n + c] = (int)(next() % 5) - 2;
          if (c == r) { L[r * n + c] = 1; U[r * n + c] = (next() & 1) ? 1 : -1; }
          if (c > r) U[r * n + c] = (int)(next() % 5) - 2;
        }
      for (int r = 0; r < n; ++r)
        for (int c = 0; c < n; ++c) {
          int v = 0;
          for (int k = 0; k < n; ++k) v += L[r * n + k] * U[k * n + c];
          A[r * n + c] = (float)v;
          F[r * n + c] = (float)(c < r ? L[r * n + c] : U[r * n + c]);
        }
    }
  }

  float *d_blocks;
  int *d_start, *d_size, *d_count;
  CUDA_CHECK(cudaMalloc(&d_blocks, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_start, groups * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_size, groups * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_count, groups * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_blocks, a.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_start, start.data(), groups * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_size, size.data(), groups * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_count, count.data(), groups * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t t0, t1;
  CUDA_CHECK(cudaEventCreate(&t0));
  CUDA_CHECK(cudaEventCreate(&t1));
  CUDA_CHECK(cudaEventRecord(t0));
  factor_groups<<<(groups + 127) / 128, 128>>>(d_blocks, d_start, d_size, d_count, groups);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(t1));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, t0, t1));

  std::vector<float> out(total);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(out.data(), d_blocks, total * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  size_t bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t k = 0; k < total; ++k) {
    bad += out[k] != lu[k];
    h = (h ^ (uint64_t)(int64_t)out[k]) * 0x100000001b3ull;
  }
  const bool ok = bad == 0;
  printf("result example=block_jacobi_lu input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u groups=%d entries=%zu bad_entries=%zu\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, groups, total, bad);
  CUDA_CHECK(cudaFree(d_blocks));
  CUDA_CHECK(cudaFree(d_start));
  CUDA_CHECK(cudaFree(d_size));
  CUDA_CHECK(cudaFree(d_count));
  return (ok && lost == 0) ? 0 : 1;
}
