__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}
__global__ void parent(int *a, const int *sizes) {
  int n = sizes[threadIdx.x];
#pragma dp threshold(64)
  child<<<(n + 31) / 32, 32>>>(a, n);
  /* the bookkeeping below is
  if (n > 0) a[0] = n;
}
