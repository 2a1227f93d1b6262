// The parent votes with __syncthreads_or after launching: block-level
// aggregation would make the launching threads wait at a second barrier.
__global__ void mark(int *flags, int base, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[base + i] = 1;
}

__global__ void frontier(int *flags, const int *offsets, int *done, int nodes) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  int deg = v < nodes ? offsets[v + 1] - offsets[v] : 0;
  if (deg > 0) {
#pragma dp consldt(block)
    mark<<<(deg + 31) / 32, 32>>>(flags, offsets[v], deg);
  }
  if (__syncthreads_or(deg > 0) == 0 && threadIdx.x == 0) *done = 1;
}
