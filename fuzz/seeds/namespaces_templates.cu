// Seed: kernels in nested namespaces, a template child launched with a
// qualified name and explicit template arguments from a template parent.
#include <cuda_runtime.h>

namespace graph {
namespace detail {
template <typename T, int Scale = 2>
__global__ void scale_child(T *out, const T *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] * static_cast<T>(Scale);
}
}  // namespace detail

template <typename T, int B>
__global__ void __launch_bounds__(256) scale_parent(T *out, const T *in, const int *offs, int np) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np) return;
  const int begin = offs[p], n = offs[p + 1] - begin;
  if (n <= 0) return;
#pragma dp threshold(64) coarsen(2)
  detail::scale_child<T, 3><<<(n + B - 1) / B, B>>>(out + begin, in + begin, n);
}

template __global__ void scale_parent<float, 128>(float *, const float *, const int *, int);
}  // namespace graph

int main() {
  float *out = nullptr, *in = nullptr;
  int *offs = nullptr;
  graph::scale_parent<float, 128><<<1, 256>>>(out, in, offs, 0);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
