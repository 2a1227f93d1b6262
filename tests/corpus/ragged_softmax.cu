// ragged_softmax.cu - corpus program for dpopt: row softmax over a ragged
// batch of attention scores (decode-style: a few query rows per sequence,
// each as long as the sequence's key count), each sequence's rows done by a
// child grid whose kernel is written the way llm.c's
// softmax_forward_kernel4 is (dev/cuda/softmax_forward.cu): the warps'
// maxima and sums by shuffle-down loops in small device helpers, the
// warps' results combined through dynamic shared memory by thread 0, and
// `blockDim.x / 32` warps per block. The sum helper is the unbraced,
// `#pragma unroll`ed `warpSize / 2` loop common in other code bases.
// One parent thread per sequence launches one block of 64 threads per row.
// The CPU reference checks every value (relative 1e-4); the checksum is the
// rows' argmax and their sums to three digits, which do not depend on the
// order of float additions.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o ragged_softmax ragged_softmax.cu -lcudadevrt
#include <cuda_runtime.h>

#include <cmath>
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

#define BLOCK 64

__device__ unsigned int failed_launches;

__device__ float warpReduceMax(float val) {
    for (int offset = 16; offset > 0; offset /= 2) {
        val = fmaxf(val, __shfl_down_sync(0xFFFFFFFF, val, offset));
    }
    return val;
}

__device__ float warpReduceSum(float val) {
#pragma unroll
    for (int offset = warpSize / 2; offset > 0; offset /= 2)
        val += __shfl_down_sync(0xFFFFFFFF, val, offset);
    return val;
}

__global__ void softmax_forward_kernel4(float* out, const float* inp, int N, int C) {
    // out is (N, C) just like inp. Each row of inp will get softmaxed.
    // same as kernel3, but can handle any block size (multiple of 32)
    // each row of C elements is handled by block_size threads
    // furthermore, each block_size threads get executed in warps of 32 threads

    // special reduction operations warpReduceMax/warpReduceSum are used for intra-warp reductions
    // shared memory is used for inter-warp reduction
    extern __shared__ float shared[];
    int idx = blockIdx.x;
    int tid = threadIdx.x;
    int warpId = threadIdx.x / 32; // warp index within a block
    int laneId = threadIdx.x % 32; // thread index within a warp

    // the number of warps per block. recall that blockDim.x is block_size
    int warpsPerBlock = blockDim.x / 32;

    // shared[] must be allocated to have 2 * warpsPerBlock elements
    // first half for max values, the second half for sum values
    float* maxvals = shared;
    float* sumvals = &shared[warpsPerBlock];

    // one row of inp, i.e. inp[idx, :] of shape (C,)
    const float* x = inp + idx * C;

    // first, thread coarsening by directly accessing global memory in series
    float maxval = -INFINITY;
    for (int i = tid; i < C; i += blockDim.x) {
        maxval = fmaxf(maxval, x[i]);
    }
    // now within-warp reductions for maxval
    maxval = warpReduceMax(maxval);

    // the 0th thread of each warp writes the maxval of that warp to shared memory
    if (laneId == 0) maxvals[warpId] = maxval;
    __syncthreads();

    // now the 0th thread reduces the maxvals in shared memory, i.e. across warps
    if (tid == 0) {
        float val = maxvals[tid];
        for (int i = 1; i < warpsPerBlock; i++) {
            val = fmaxf(val, maxvals[i]);
        }
        // store the final max in the first position
        maxvals[0] = val;
    }
    __syncthreads();
    // broadcast the max to all threads
    float offset = maxvals[0];

    // compute expf and write the result to global memory
    for (int i = tid; i < C; i += blockDim.x) {
        // subtract max for numerical stability
        out[idx * C + i] = expf(x[i] - offset);
    }

    // okay now we calculated exp(x - max(x))
    // step 2: sum all the values and divide by the sum

    // thread coarsening for sum
    x = out + idx * C;
    float sumval = 0.0f;
    for (int i = tid; i < C; i += blockDim.x) {
        sumval += x[i];
    }
    // within-warp reduction for sumval
    sumval = warpReduceSum(sumval);

    // write sumval to shared memory
    if (laneId == 0) sumvals[warpId] = sumval;
    __syncthreads();

    // inter-thread reduction of sum
    if (tid == 0) {
        float val = sumvals[tid];
        for (int i = 1; i < warpsPerBlock; ++i) {
            val += sumvals[i];
        }
        sumvals[0] = val;
    }
    __syncthreads();
    // broadcast the sum to all threads
    float sum = sumvals[0];

    // divide the whole row by the sum
    for (int i = tid; i < C; i += blockDim.x) {
        out[idx * C + i] = x[i] / sum;
    }
}

__global__ void batch_softmax(float *out, const float *scores, const int *rows, const int *cols,
                              const long long *offsets, int sequences) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= sequences) return;
  const int n = rows[s], c = cols[s];
  if (n == 0 || c == 0) return;
#pragma dp threshold(128)
  softmax_forward_kernel4<<<n, BLOCK, 2 * (BLOCK / 32) * sizeof(float)>>>(out + offsets[s], scores + offsets[s], n, c);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int sequences = 3000;
  uint32_t x = 20261202u;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  std::vector<int> rows(sequences), cols(sequences);
  std::vector<long long> offsets(sequences + 1, 0);
  for (int s = 0; s < sequences; ++s) {
    const uint32_t u = next();
    rows[s] = (u % 3 == 0) ? 1 + (int)(u % 4) : 1;          // mostly one query row
    cols[s] = (u % 37 == 0) ? 0 : (u % 13 == 0) ? 512 + (int)(u % 3000) : 1 + (int)(u % 200);
    offsets[s + 1] = offsets[s] + (long long)rows[s] * cols[s];
  }
  const long long total = offsets[sequences];
  std::vector<float> scores(total);
  for (long long i = 0; i < total; ++i) scores[i] = (float)((int)(next() % 20001) - 10000) / 1000.0f;

  float *d_scores, *d_out;
  int *d_rows, *d_cols;
  long long *d_offsets;
  CUDA_CHECK(cudaMalloc(&d_scores, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_out, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_rows, sequences * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_cols, sequences * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (sequences + 1) * sizeof(long long)));
  CUDA_CHECK(cudaMemcpy(d_scores, scores.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_rows, rows.data(), sequences * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_cols, cols.data(), sequences * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, offsets.data(), (sequences + 1) * sizeof(long long), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_out, 0, total * sizeof(float)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  batch_softmax<<<(sequences + 127) / 128, 128>>>(d_out, d_scores, d_rows, d_cols, d_offsets, sequences);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<float> out(total);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(out.data(), d_out, total * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  long long bad = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int s = 0; s < sequences; ++s) {
    for (int r = 0; r < rows[s]; ++r) {
      const long long base = offsets[s] + (long long)r * cols[s];
      const int c = cols[s];
      if (c == 0) continue;
      double m = -INFINITY, z = 0.0, got = 0.0;
      int arg = 0;
      for (int i = 0; i < c; ++i) m = std::max(m, (double)scores[base + i]);
      for (int i = 0; i < c; ++i) z += std::exp((double)scores[base + i] - m);
      for (int i = 0; i < c; ++i) {
        const double ref = std::exp((double)scores[base + i] - m) / z;
        bad += !(std::fabs(out[base + i] - ref) <= 1e-6 + 1e-4 * ref);
        got += out[base + i];
        if (out[base + i] > out[base + arg]) arg = i;
      }
      h = (h ^ (uint64_t)arg) * 0x100000001b3ull;
      h = (h ^ (uint64_t)std::llround(got * 1000.0)) * 0x100000001b3ull;
    }
  }
  const bool ok = bad == 0;
  printf("result example=ragged_softmax input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u sequences=%d bad_values=%lld values=%lld\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, sequences, bad, total);
  CUDA_CHECK(cudaFree(d_scores));
  CUDA_CHECK(cudaFree(d_out));
  CUDA_CHECK(cudaFree(d_rows));
  CUDA_CHECK(cudaFree(d_cols));
  CUDA_CHECK(cudaFree(d_offsets));
  return (ok && lost == 0) ? 0 : 1;
}
