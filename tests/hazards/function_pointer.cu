// The child applies an operation passed as a device function pointer.
typedef float (*unary_op)(float);

__device__ float square(float v) { return v * v; }
__device__ unary_op d_square = square;

__global__ void apply(float *a, int n, unary_op op) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = op(a[i]);
}

__global__ void parent(float *a, const int *len, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp threshold(64)
  apply<<<(len[k] + 127) / 128, 128>>>(a + k * 1024, len[k], d_square);
}
