// grouped_gemm_s8.cu - corpus program for dpopt: a grouped int8 GEMM (many
// small problems of different shapes, as quantized inference runs the
// experts of a mixture-of-experts layer or the blocks of a block-sparse
// matrix), int32 accumulation. One parent thread per problem launches the
// tiled kernel over its output, written the way NVIDIA's matrixMul sample
// writes it: a template on the tile size, the tile loop's bounds computed
// into locals from the block's indices before the loop (`int aBegin = wA *
// BLOCK_SIZE * by;`), two shared tiles declared inside the loop, a 2-D
// block given as a `dim3`. Every dimension is a multiple of the tile.
// Integer arithmetic throughout: the CPU reference checks every element.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o grouped_gemm_s8 grouped_gemm_s8.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define checkCudaErrors(val) check_cuda((val), #val, __FILE__, __LINE__)
static void check_cuda(cudaError_t result, const char *what, const char *file, int line) {
  if (result != cudaSuccess) {
    fprintf(stderr, "CUDA error at %s:%d code=%d (%s) \"%s\"\n", file, line, (int)result,
            cudaGetErrorString(result), what);
    exit(EXIT_FAILURE);
  }
}

#define TILE 8

struct GemmProblem {
  int m, n, k;
  long long a_offset, b_offset, c_offset;
};

__device__ unsigned int failed_launches;

// C (hA x wB) = A (hA x wA) * B (wA x wB), row-major, one BLOCK_SIZE x
// BLOCK_SIZE tile of C per block.
template <int BLOCK_SIZE>
__global__ void gemm_s8_tile(int *C, const signed char *A, const signed char *B, int wA, int wB) {
  // Block index
  int bx = blockIdx.x;
  int by = blockIdx.y;

  // Thread index
  int tx = threadIdx.x;
  int ty = threadIdx.y;

  // First, last and step of the sub-matrices of A processed by the block
  int aBegin = wA * BLOCK_SIZE * by;
  int aEnd = aBegin + wA - 1;
  int aStep = BLOCK_SIZE;

  // First and step of the sub-matrices of B
  int bBegin = BLOCK_SIZE * bx;
  int bStep = BLOCK_SIZE * wB;

  int Csub = 0;
  for (int a = aBegin, b = bBegin; a <= aEnd; a += aStep, b += bStep) {
    __shared__ int As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ int Bs[BLOCK_SIZE][BLOCK_SIZE];

    As[ty][tx] = A[a + wA * ty + tx];
    Bs[ty][tx] = B[b + wB * ty + tx];
    __syncthreads();

#pragma unroll
    for (int k = 0; k < BLOCK_SIZE; ++k) {
      Csub += As[ty][k] * Bs[k][tx];
    }
    __syncthreads();
  }

  int c = wB * BLOCK_SIZE * by + BLOCK_SIZE * bx;
  C[c + wB * ty + tx] = Csub;
}

__global__ void grouped_gemm(const GemmProblem *problems, int count, const signed char *A,
                             const signed char *B, int *C) {
  const int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= count) return;
  const GemmProblem g = problems[p];
  dim3 threads(TILE, TILE);
  dim3 grid(g.n / TILE, g.m / TILE);
#pragma dp threshold(128)
  gemm_s8_tile<TILE><<<grid, threads>>>(C + g.c_offset, A + g.a_offset, B + g.b_offset, g.k, g.n);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int count = 3000;
  std::vector<GemmProblem> problems(count);
  uint32_t s = 7u;
  auto next = [&s]() {
    s = s * 1664525u + 1013904223u;
    return s >> 8;
  };
  long long a_total = 0, b_total = 0, c_total = 0;
  for (int p = 0; p < count; ++p) {
    GemmProblem &g = problems[p];
    // mostly one or two tiles, some up to 12 x 12 tiles
    const uint32_t u = next();
    const int big = (u % 8 == 0) ? 12 : 2;
    g.m = TILE * (1 + (int)(next() % big));
    g.n = TILE * (1 + (int)(next() % big));
    g.k = TILE * (1 + (int)(next() % 6));
    g.a_offset = a_total;
    g.b_offset = b_total;
    g.c_offset = c_total;
    a_total += (long long)g.m * g.k;
    b_total += (long long)g.k * g.n;
    c_total += (long long)g.m * g.n;
  }
  std::vector<signed char> A(a_total), B(b_total);
  for (auto &x : A) x = (signed char)((int)(next() % 255) - 127);
  for (auto &x : B) x = (signed char)((int)(next() % 255) - 127);

  GemmProblem *d_problems;
  signed char *d_A, *d_B;
  int *d_C;
  checkCudaErrors(cudaMalloc(&d_problems, count * sizeof(GemmProblem)));
  checkCudaErrors(cudaMalloc(&d_A, a_total));
  checkCudaErrors(cudaMalloc(&d_B, b_total));
  checkCudaErrors(cudaMalloc(&d_C, c_total * sizeof(int)));
  checkCudaErrors(cudaMemcpy(d_problems, problems.data(), count * sizeof(GemmProblem), cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(d_A, A.data(), a_total, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemcpy(d_B, B.data(), b_total, cudaMemcpyHostToDevice));
  checkCudaErrors(cudaMemset(d_C, 0xff, c_total * sizeof(int)));
  checkCudaErrors(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  checkCudaErrors(cudaEventCreate(&start));
  checkCudaErrors(cudaEventCreate(&stop));
  checkCudaErrors(cudaEventRecord(start));
  grouped_gemm<<<(count + 127) / 128, 128>>>(d_problems, count, d_A, d_B, d_C);
  checkCudaErrors(cudaGetLastError());
  checkCudaErrors(cudaEventRecord(stop));
  checkCudaErrors(cudaDeviceSynchronize());
  float ms = 0.f;
  checkCudaErrors(cudaEventElapsedTime(&ms, start, stop));

  std::vector<int> C(c_total);
  unsigned int lost = 0;
  checkCudaErrors(cudaMemcpy(C.data(), d_C, c_total * sizeof(int), cudaMemcpyDeviceToHost));
  checkCudaErrors(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  long long wrong = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (const GemmProblem &g : problems) {
    for (int i = 0; i < g.m; ++i)
      for (int j = 0; j < g.n; ++j) {
        int want = 0;
        for (int q = 0; q < g.k; ++q)
          want += (int)A[g.a_offset + (long long)i * g.k + q] * (int)B[g.b_offset + (long long)q * g.n + j];
        const int got = C[g.c_offset + (long long)i * g.n + j];
        wrong += got != want;
        h = (h ^ (uint64_t)(uint32_t)got) * 0x100000001b3ull;
      }
  }
  const bool ok = wrong == 0;
  printf("result example=grouped_gemm_s8 input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u problems=%d wrong=%lld\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, count, wrong);
  checkCudaErrors(cudaFree(d_problems));
  checkCudaErrors(cudaFree(d_A));
  checkCudaErrors(cudaFree(d_B));
  checkCudaErrors(cudaFree(d_C));
  return (ok && lost == 0) ? 0 : 1;
}
