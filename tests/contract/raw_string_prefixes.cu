__global__ void child(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] = i;
}
const char *kDoc = LR"doc(
#pragma dp threshold(64)
)doc";
const char *kDoc8 = u8R"(#pragma dp coarsen(2))";
__global__ void parent(int *a, const int *sizes) {
  int n = sizes[threadIdx.x];
  child<<<(n + 31) / 32, 32>>>(a, n);
}
