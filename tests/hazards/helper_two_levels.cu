// The barrier is two calls away from the child.
__device__ void exchange(float *buf, int i, int n) {
  float mine = buf[i];
  __syncthreads();
  if (i + 1 < n) buf[i] = mine + buf[i + 1];
}

__device__ void relax(float *buf, int i, int n) {
  buf[i] *= 0.5f;
  exchange(buf, i, n);
}

__global__ void smooth(float *buf, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  relax(buf, i, n);
}

__global__ void parent(float *buf, const int *len, int m) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  if (k >= m) return;
#pragma dp coarsen(2)
  smooth<<<(len[k] + 127) / 128, 128>>>(buf + k * 1024, len[k]);
}
