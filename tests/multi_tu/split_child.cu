// split_child.cu - the child of split_parent.cu, in its own translation
// unit: dpopt reads it (`--child-source split_child.cu`) to generate the
// serial and coarsened versions in split_parent.cu; this file is compiled
// as it is.
// Build: see split_parent.cu
#include <cuda_runtime.h>

__global__ void scale_row(const int *in, int *out, int start, int n, int factor) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[start + i] = in[start + i] * factor;
}
