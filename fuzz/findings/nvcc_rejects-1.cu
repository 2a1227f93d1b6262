// Seed: a child that takes a class by value, grid-level aggregation with a
// record pool, a member function that is not a kernel.
#include <cuda_runtime.h>

struct Span {
  float *data;
  int n;
  __device__ float &operator[](int i) const { return data[i]; }
};

class Scale {
 public:
  __host__ __device__ explicit Scale(float f) : f_(f) {}
  __device__ float apply(float x) const { return f_ * x; }

 private:
  float f_;
};

__global__ void scale_child(Span s, Scale k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < s.n) s[i] = k.apply(s[i]);
}

__global__ void scale_parent(float *data, const int *sizes, int np) {
  int p = blockIdx.x * blockDim.x + threadIdx.x;
  if (p >= np || sizes[p] == 0) return;
  Span s{data + p * 512, sizes[p]};
#pragma dp consldt(grid) buffer(default, 4096)
  scale_child<<<(s.n + 127) / 128, 128>>>(s, Scale(2.0f));
}

int main() {
  scale_parent<<<1, 64>>>(nullptr, nullptr, 0);
  return cudaDeviceSynchronize() == cudaSuccess ? 0 : 1;
}
