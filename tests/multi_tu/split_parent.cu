// split_parent.cu - kernels.cu with its child in another translation unit
// (split_child.cu): only the declaration of the child is here.
// Transform: dpopt transform split_parent.cu --child-source split_child.cu -o split_parent.dp.cu
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o two_files_split split_parent.dp.cu split_child.cu host.cu -lcudadevrt
#include <cuda_runtime.h>

__device__ unsigned g_launch_failures = 0;

__global__ void scale_row(const int *in, int *out, int start, int n, int factor);

__global__ void rows_parent(const int *row, const int *in, int *out, int rows, int factor) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  int n = row[r + 1] - row[r];
  if (n == 0) return;
#pragma dp threshold(64) coarsen(2)
  scale_row<<<(n + 31) / 32, 32>>>(in, out, row[r], n, factor);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
}
