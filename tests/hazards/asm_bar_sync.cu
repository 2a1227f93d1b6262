// A block barrier written in PTX.
__global__ void stage(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] += 1.0f;
  asm volatile("bar.sync 0;" ::: "memory");
  a[i] *= 0.5f;
}

__global__ void driver(float *a, const int *sizes, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp threshold(64)
  stage<<<(sizes[k] + 127) / 128, 128>>>(a + k * 4096, sizes[k]);
}
