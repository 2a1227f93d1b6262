// row_layernorm.cu - corpus program for dpopt: LayerNorm over the token
// rows of a ragged batch of sequences (variable-length inputs without
// padding), each sequence's rows normalized by a child grid whose kernel is
// written the way FasterTransformer's generalLayerNorm is: one block per
// row, the row's mean and then its variance each reduced by
// `blockReduceSum`, the "Faster Parallel Reductions on Kepler" block
// reduction (non-template `__inline__ __device__` helpers: `blockReduceSum`
// calls `warpReduceSum`, a shuffle-down loop, for each warp and then for
// the first warp over the warps' partials in `static __shared__` memory),
// thread 0 storing the results in `__shared__ float s_mean, s_variance`
// between barriers, then gamma and beta applied to each element.
// The hidden size (384) is not a multiple of the block (256 threads), so
// the first threads of a block do two elements and the others one.
// One parent thread per sequence launches one block per token row.
// The inputs are multiples of 1/16 and each row's sum a multiple of the
// hidden size, so the mean is exact and every partial sum of both
// reductions is exact in float whatever the order of the additions; the
// CPU reference (double) checks every value (relative 1e-3) and the
// checksum hashes the outputs rounded to 1e-2.
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o row_layernorm row_layernorm.cu -lcudadevrt
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

#define FULL_MASK 0xffffffff
#define THREADS 256
#define HIDDEN 384

__device__ unsigned int failed_launches;

__inline__ __device__
float warpReduceSum(float val) {
  for (int offset = warpSize / 2; offset > 0; offset /= 2)
    val += __shfl_down_sync(FULL_MASK, val, offset);
  return val;
}

__inline__ __device__
float blockReduceSum(float val) {
  static __shared__ float shared[32];  // Shared mem for 32 partial sums
  int lane = threadIdx.x % warpSize;
  int wid = threadIdx.x / warpSize;

  val = warpReduceSum(val);  // Each warp performs partial reduction

  if (lane == 0) shared[wid] = val;  // Write reduced value to shared memory

  __syncthreads();  // Wait for all partial reductions

  // read from shared memory only if that warp existed
  val = (threadIdx.x < blockDim.x / warpSize) ? shared[lane] : 0;

  if (wid == 0) val = warpReduceSum(val);  // Final reduce within first warp

  return val;
}

__global__ void __launch_bounds__(THREADS)
generalLayerNorm(const float* __restrict__ input, const float* __restrict__ gamma,
                 const float* __restrict__ beta, float* output, const float layernorm_eps,
                 int m, int n) {
    const int tid = threadIdx.x;

    __shared__ float s_mean;
    __shared__ float s_variance;
    float mean = 0.0f;
    float variance = 0.0f;

    float local_sum = 0.0f;
    for (int i = tid; i < n; i += blockDim.x) {
        local_sum += __ldg(&input[blockIdx.x * n + i]);
    }

    mean = blockReduceSum(local_sum);

    if (threadIdx.x == 0) {
        s_mean = mean / n;
    }
    __syncthreads();

    float local_var_sum = 0.0f;
    for (int i = tid; i < n; i += blockDim.x) {
        float diff = __ldg(&input[blockIdx.x * n + i]) - s_mean;
        local_var_sum += diff * diff;
    }
    variance = blockReduceSum(local_var_sum);

    if (threadIdx.x == 0) {
        s_variance = rsqrtf(variance / n + layernorm_eps);
    }
    __syncthreads();

    for (int i = tid; i < n; i += blockDim.x) {
        float beta_val = (beta == nullptr) ? 0.0f : __ldg(&beta[i]);
        output[blockIdx.x * n + i] =
            ((input[blockIdx.x * n + i] - s_mean) * s_variance) * __ldg(&gamma[i]) + beta_val;
    }
}

// One thread per sequence: the sequence's rows start at row seq_offsets[s].
__global__ void ragged_layernorm(const float *input, const float *gamma, const float *beta,
                                 float *output, const int *seq_offsets, int batch, int hidden,
                                 float eps) {
  const int s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= batch) return;
  const int first = seq_offsets[s], tokens = seq_offsets[s + 1] - first;
  if (tokens == 0) return;
  const size_t base = (size_t)first * hidden;
#pragma dp threshold(128) coarsen(4) consldt(block)
  generalLayerNorm<<<tokens, THREADS>>>(input + base, gamma, beta, output + base, eps, tokens, hidden);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&failed_launches, 1u);
}

int main() {
  const int batch = 2000, hidden = HIDDEN;
  const float eps = 1e-6f;
  uint32_t x = 20261207u;
  auto next = [&x]() {
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
  };
  // Ragged lengths: some empty sequences, most of 1 to 3 tokens (decode
  // steps), a few prompts of 50 to 300 tokens.
  std::vector<int> seq_offsets(batch + 1, 0);
  for (int s = 0; s < batch; ++s) {
    const uint32_t u = next();
    const int t = (u % 19 == 0) ? 0 : (u % 14 == 0) ? 50 + (int)(u % 251) : 1 + (int)(u % 3);
    seq_offsets[s + 1] = seq_offsets[s] + t;
  }
  const int rows = seq_offsets[batch];
  const size_t total = (size_t)rows * hidden;
  // Each row: a per-row offset plus noise, in sixteenths, with the last
  // element chosen so that the row's sum is a multiple of the hidden size.
  std::vector<float> input(total), gamma(hidden), beta(hidden);
  for (int r = 0; r < rows; ++r) {
    const int c = (int)(next() % 41) - 20;
    long long sum = 0;
    for (int i = 0; i < hidden - 1; ++i) {
      const int k = c + (int)(next() % 201) - 100;
      input[(size_t)r * hidden + i] = (float)k / 16.0f;
      sum += k;
    }
    const int rem = (int)(((sum + c) % hidden + hidden) % hidden);
    const int last = (rem <= hidden / 2) ? c - rem : c + (hidden - rem);
    input[(size_t)r * hidden + hidden - 1] = (float)last / 16.0f;
  }
  for (int i = 0; i < hidden; ++i) {
    gamma[i] = 0.5f + (float)(next() % 257) / 256.0f;
    beta[i] = (float)((int)(next() % 257) - 128) / 256.0f;
  }

  float *d_input, *d_gamma, *d_beta, *d_output;
  int *d_offsets;
  CUDA_CHECK(cudaMalloc(&d_input, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_output, total * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_gamma, hidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_beta, hidden * sizeof(float)));
  CUDA_CHECK(cudaMalloc(&d_offsets, (batch + 1) * sizeof(int)));
  CUDA_CHECK(cudaMemcpy(d_input, input.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_gamma, gamma.data(), hidden * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_beta, beta.data(), hidden * sizeof(float), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(d_offsets, seq_offsets.data(), (batch + 1) * sizeof(int), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(d_output, 0, total * sizeof(float)));
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 8192));

  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  CUDA_CHECK(cudaEventRecord(start));
  ragged_layernorm<<<(batch + 255) / 256, 256>>>(d_input, d_gamma, d_beta, d_output, d_offsets, batch, hidden, eps);
  CUDA_CHECK(cudaGetLastError());
  CUDA_CHECK(cudaEventRecord(stop));
  CUDA_CHECK(cudaDeviceSynchronize());
  float ms = 0.f;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));

  std::vector<float> output(total);
  unsigned int lost = 0;
  CUDA_CHECK(cudaMemcpy(output.data(), d_output, total * sizeof(float), cudaMemcpyDeviceToHost));
  CUDA_CHECK(cudaMemcpyFromSymbol(&lost, failed_launches, sizeof(lost)));
  long long bad = 0;
  int bad_rows = 0;
  uint64_t h = 0xcbf29ce484222325ull;
  for (int r = 0; r < rows; ++r) {
    const float *in = &input[(size_t)r * hidden];
    const float *out = &output[(size_t)r * hidden];
    double mean = 0.0, var = 0.0;
    for (int i = 0; i < hidden; ++i) mean += in[i];
    mean /= hidden;
    for (int i = 0; i < hidden; ++i) var += (in[i] - mean) * (in[i] - mean);
    const double rstd = 1.0 / std::sqrt(var / hidden + (double)eps);
    long long row_bad = 0;
    for (int i = 0; i < hidden; ++i) {
      const double ref = (in[i] - mean) * rstd * gamma[i] + beta[i];
      row_bad += !(std::fabs(out[i] - ref) <= 1e-3 * (1.0 + std::fabs(ref)));
      h = (h ^ (uint64_t)std::llrint((double)out[i] * 100.0)) * 0x100000001b3ull;
    }
    bad += row_bad;
    bad_rows += row_bad != 0;
  }
  const bool ok = bad == 0;
  printf("result example=row_layernorm input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u sequences=%d rows=%d bad_rows=%d bad_values=%lld\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, batch, rows, bad_rows, bad);
  CUDA_CHECK(cudaFree(d_input));
  CUDA_CHECK(cudaFree(d_output));
  CUDA_CHECK(cudaFree(d_gamma));
  CUDA_CHECK(cudaFree(d_beta));
  CUDA_CHECK(cudaFree(d_offsets));
  return (ok && lost == 0) ? 0 : 1;
}
