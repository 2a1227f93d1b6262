/* cluster_radius.cu - corpus program for dpopt: the radius and the spread of
 * every cluster of a k-means assignment, written in the C style of
 * hand-written CUDA course code. One parent thread per cluster launches a
 * grid over the cluster's members (a CSR-like member list); each child block
 * reduces its members' squared distances to the centroid in shared memory:
 * a maximum in a __device__ helper that declares its loop variable with the
 * thread's index (`int idx = ..., s;`), a quantized sum in the kernel itself
 * with `unsigned int stride;` declared apart, both assigned only in the reduction
 * loops' heads. The block's results go to the cluster with atomics (a
 * compare-and-swap loop for the double maximum).
 * Build: nvcc -O3 -rdc=true -arch=sm_90 -o cluster_radius cluster_radius.cu -lcudadevrt
 */
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>

#define NTH 128
#define DIM 3
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#define QUANT 1024.0

#define checkCuda(call)                                                      \
  {                                                                          \
    cudaError_t err = call;                                                  \
    if (err != cudaSuccess) {                                                \
      printf("CUDA error %s at %s:%d\n", cudaGetErrorString(err), __FILE__, \
             __LINE__);                                                      \
      exit(EXIT_FAILURE);                                                    \
    }                                                                        \
  }

__device__ unsigned int nbLostLaunches;

/* atomic maximum of a non-negative double through its bits */
__device__ void atomMax(double *addr, double val) {
  unsigned long long *p = (unsigned long long *)addr;
  unsigned long long old = *p, assumed;
  do {
    assumed = old;
    if (__longlong_as_double(assumed) >= val) break;
    old = atomicCAS(p, assumed, __double_as_longlong(val));
  } while (assumed != old);
}

/* block maximum of a[0..N) into *maxi */
__device__ void redMaxDev(int N, const double *a, double *maxi) {
  __shared__ double tmp[NTH];
  int idx = blockIdx.x * blockDim.x + threadIdx.x, s;

  if (idx < N) {
    tmp[threadIdx.x] = a[idx];
  } else {
    tmp[threadIdx.x] = 0.;
  }
  __syncthreads();

  for (s = blockDim.x / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) {
      tmp[threadIdx.x] = MAX(tmp[threadIdx.x], tmp[threadIdx.x + s]);
    }
    __syncthreads();
  }

  if (threadIdx.x == 0) {
    atomMax(maxi, tmp[0]);
  }
}

__global__ void clusterStats(int nbMembers, const int *members, const double *points,
                             const double *centroid, double *dist, double *radius,
                             unsigned long long *spread) {
  __shared__ unsigned long long part[NTH];
  unsigned int tid = threadIdx.x;
  unsigned int i = blockIdx.x * blockDim.x + tid;
  unsigned int stride;
  double d = 0.;
  int k;

  if (i < nbMembers) {
    for (k = 0; k < DIM; k++) {
      double diff = points[members[i] * DIM + k] - centroid[k];
      d += diff * diff;
    }
    dist[i] = d;
  }
  part[tid] = (unsigned long long)(d * QUANT);
  __syncthreads();
  for (stride = blockDim.x / 2; stride > 0; stride >>= 1) {
    if (tid < stride) part[tid] += part[tid + stride];
    __syncthreads();
  }
  if (tid == 0) atomicAdd(spread, part[0]);

  redMaxDev(nbMembers, dist, radius);
}

__global__ void allClusters(int nbClusters, const int *offsets, const int *members,
                            const double *points, const double *centroids, double *dist,
                            double *radius, unsigned long long *spread) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c < nbClusters) {
    int first = offsets[c];
    int nb = offsets[c + 1] - first;
    if (nb > 0) {
#pragma dp threshold(128) coarsen(8)
      clusterStats<<<(nb + NTH - 1) / NTH, NTH>>>(nb, members + first, points, centroids + c * DIM,
                                                  dist + first, radius + c, spread + c);
      if (cudaGetLastError() != cudaSuccess) atomicAdd(&nbLostLaunches, 1u);
    }
  }
}

static unsigned int seed = 12345u;
static unsigned int nextRand(void) {
  seed = seed * 1664525u + 1013904223u;
  return seed >> 8;
}

int main(int argc, char **argv) {
  int nbClusters = 2000, nbPoints = 0, c, i, k;
  int *offsets = (int *)malloc((nbClusters + 1) * sizeof(int));
  offsets[0] = 0;
  for (c = 0; c < nbClusters; c++) {
    /* most clusters small, one in sixteen large */
    int nb = (nextRand() % 16 == 0) ? 300 + nextRand() % 1500 : nextRand() % 60;
    offsets[c + 1] = offsets[c] + nb;
  }
  nbPoints = offsets[nbClusters];
  double *points = (double *)malloc(nbPoints * DIM * sizeof(double));
  double *centroids = (double *)malloc(nbClusters * DIM * sizeof(double));
  int *members = (int *)malloc(nbPoints * sizeof(int));
  for (c = 0; c < nbClusters; c++)
    for (k = 0; k < DIM; k++) centroids[c * DIM + k] = (double)(nextRand() % 1000);
  /* members listed in a shuffled order of the points */
  for (i = 0; i < nbPoints; i++) members[i] = (int)(((long long)i * 7919) % nbPoints);
  for (c = 0; c < nbClusters; c++)
    for (i = offsets[c]; i < offsets[c + 1]; i++)
      for (k = 0; k < DIM; k++)
        points[members[i] * DIM + k] = centroids[c * DIM + k] + (double)(nextRand() % 201) / 8.0 - 12.5;

  int *d_offsets, *d_members;
  double *d_points, *d_centroids, *d_dist, *d_radius;
  unsigned long long *d_spread;
  checkCuda(cudaMalloc((void **)&d_offsets, (nbClusters + 1) * sizeof(int)));
  checkCuda(cudaMalloc((void **)&d_members, nbPoints * sizeof(int)));
  checkCuda(cudaMalloc((void **)&d_points, nbPoints * DIM * sizeof(double)));
  checkCuda(cudaMalloc((void **)&d_centroids, nbClusters * DIM * sizeof(double)));
  checkCuda(cudaMalloc((void **)&d_dist, nbPoints * sizeof(double)));
  checkCuda(cudaMalloc((void **)&d_radius, nbClusters * sizeof(double)));
  checkCuda(cudaMalloc((void **)&d_spread, nbClusters * sizeof(unsigned long long)));
  checkCuda(cudaMemcpy(d_offsets, offsets, (nbClusters + 1) * sizeof(int), cudaMemcpyHostToDevice));
  checkCuda(cudaMemcpy(d_members, members, nbPoints * sizeof(int), cudaMemcpyHostToDevice));
  checkCuda(cudaMemcpy(d_points, points, nbPoints * DIM * sizeof(double), cudaMemcpyHostToDevice));
  checkCuda(cudaMemcpy(d_centroids, centroids, nbClusters * DIM * sizeof(double), cudaMemcpyHostToDevice));
  checkCuda(cudaMemset(d_radius, 0, nbClusters * sizeof(double)));
  checkCuda(cudaMemset(d_spread, 0, nbClusters * sizeof(unsigned long long)));
  checkCuda(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 4096));

  cudaEvent_t start, stop;
  float ms = 0.f;
  checkCuda(cudaEventCreate(&start));
  checkCuda(cudaEventCreate(&stop));
  checkCuda(cudaEventRecord(start, 0));
  allClusters<<<(nbClusters + 255) / 256, 256>>>(nbClusters, d_offsets, d_members, d_points,
                                                 d_centroids, d_dist, d_radius, d_spread);
  checkCuda(cudaGetLastError());
  checkCuda(cudaEventRecord(stop, 0));
  checkCuda(cudaDeviceSynchronize());
  checkCuda(cudaEventElapsedTime(&ms, start, stop));

  double *radius = (double *)malloc(nbClusters * sizeof(double));
  unsigned long long *spread = (unsigned long long *)malloc(nbClusters * sizeof(unsigned long long));
  unsigned int lost = 0;
  checkCuda(cudaMemcpy(radius, d_radius, nbClusters * sizeof(double), cudaMemcpyDeviceToHost));
  checkCuda(cudaMemcpy(spread, d_spread, nbClusters * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
  checkCuda(cudaMemcpyFromSymbol(&lost, nbLostLaunches, sizeof(lost)));

  int ok = 1;
  uint64_t h = 0xcbf29ce484222325ull;
  for (c = 0; c < nbClusters; c++) {
    double r = 0.;
    unsigned long long q = 0;
    for (i = offsets[c]; i < offsets[c + 1]; i++) {
      double d = 0.;
      for (k = 0; k < DIM; k++) {
        double diff = points[members[i] * DIM + k] - centroids[c * DIM + k];
        d += diff * diff;
      }
      r = MAX(r, d);
      q += (unsigned long long)(d * QUANT);
    }
    if (r != radius[c] || q != spread[c]) ok = 0;
    h = (h ^ (uint64_t)(radius[c] * 64.0)) * 0x100000001b3ull;
    h = (h ^ spread[c]) * 0x100000001b3ull;
  }
  printf("result example=cluster_radius input=default impl=cdp time_ms=%.4f verified=%s checksum=%016llx launch_failures=%u points=%d\n",
         ms, ok ? "yes" : "no", (unsigned long long)h, lost, nbPoints);
  cudaFree(d_offsets);
  cudaFree(d_members);
  cudaFree(d_points);
  cudaFree(d_centroids);
  cudaFree(d_dist);
  cudaFree(d_radius);
  cudaFree(d_spread);
  free(offsets);
  free(points);
  free(centroids);
  free(members);
  free(radius);
  free(spread);
  return (ok && lost == 0) ? 0 : 1;
}
