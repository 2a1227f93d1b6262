// Seed without any #pragma dp: it must come out byte for byte. The text
// "#pragma dp threshold(8)" appears only in comments and strings.
#include <cstdio>
#include <cuda_runtime.h>

/* #pragma dp threshold(8)
   child<<<1, 1>>>(); */
__global__ void child(int *a) { a[threadIdx.x] = 1; }

__global__ void parent(int *a) {
  // #pragma dp threshold(8)
  child<<<1, 32>>>(a);
}

int main() {
  std::printf("%s\n", "#pragma dp threshold(8)");
  parent<<<1, 1>>>(nullptr);
  return 0;
}
