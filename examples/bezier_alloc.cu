// bezier_alloc.cu - Bezier line tessellation with a vertex buffer per line on
// the device heap: the BT benchmark of paper 003 (KLAP), after the CUDA sample
// cdpBezierTessellation, whose parent cudaMallocs each line's vertex buffer
// before launching the line's child.
//
// One parent thread per line computes nTess as examples/bezier.cu does,
// allocates the line's nTess vertices with a device-side cudaMalloc and
// launches bezier_child over them. Each child thread writes its vertex into
// the buffer; the line's last child thread to finish (a counter per line)
// sums the polyline's segment lengths from the buffer and frees it (under
// CDP2 the parent cannot wait for its child, so the child frees).
//
//   flat: bezier_flat   - the parent thread allocates the buffer, computes the
//                         vertices and the length itself, and frees it
//   cdp : bezier_parent - the child computes them, and frees the buffer
//
// dpopt aggregates the parents' cudaMalloc calls (alloc(warp|block), and by
// default under consldt(...)): one allocation per warp or block, each thread
// getting a slice; the child's cudaFree releases the slice, and the last slice
// released frees the allocation.
//
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o bezier_alloc bezier_alloc.cu -lcudadevrt
// Usage: bezier_alloc [--lines N] [--max-tess M] [--seed S] [--reps R]
//
// Every operation is rounded as written (__fmul_rn/__fadd_rn on the GPU,
// volatile floats on the CPU; sqrtf and '/' are correctly rounded on both), so
// nTess and the lengths are bit-identical on the GPU and the CPU: verified
// exactly. Checksum: FNV-1a 64 over the nTess array (int32) followed by the
// lengths' bits (uint32), little-endian.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

// Threads per block of the host launches of the parent kernel; -DPARENT_BLOCK=1024 checks that transformed parents stay launchable with 1,024 threads.
#ifndef PARENT_BLOCK
#define PARENT_BLOCK 128
#endif

#define CUDA_CHECK(call)                                                       \
  do {                                                                         \
    cudaError_t err_ = (call);                                                 \
    if (err_ != cudaSuccess) {                                                 \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,         \
              __LINE__, cudaGetErrorString(err_));                             \
      exit(1);                                                                 \
    }                                                                          \
  } while (0)

struct BezierLine {
  float2 cp[3];  // control points P0, P1, P2
};

__device__ unsigned int g_launch_failures = 0;
__device__ unsigned int g_alloc_failures = 0;
#ifdef DPOPT_STATS
// Launch statements executed: the device-side launches of the original
// program. dpopt's generated code defines the two functions (-DDPOPT_STATS).
__device__ unsigned long long g_launch_requests = 0;
extern "C" void dpopt_stats_report(FILE *) __attribute__((weak));
extern "C" void dpopt_stats_reset(void) __attribute__((weak));
#endif

__host__ __device__ inline float mul_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  volatile float r = a * b;
  return r;
#endif
}

__host__ __device__ inline float add_rn(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  volatile float r = a + b;
  return r;
#endif
}

// As in examples/bezier.cu.
__host__ __device__ inline int compute_ntess(const BezierLine &l, float scale,
                                             int max_tess) {
  float mx = mul_rn(0.5f, add_rn(l.cp[0].x, l.cp[2].x));
  float my = mul_rn(0.5f, add_rn(l.cp[0].y, l.cp[2].y));
  float ox = add_rn(l.cp[1].x, -mx), oy = add_rn(l.cp[1].y, -my);
  float dx = add_rn(l.cp[2].x, -l.cp[0].x), dy = add_rn(l.cp[2].y, -l.cp[0].y);
  float off = sqrtf(add_rn(mul_rn(ox, ox), mul_rn(oy, oy)));
  float len = sqrtf(add_rn(mul_rn(dx, dx), mul_rn(dy, dy)));
  float curvature = off / len;
  int n = (int)fminf(mul_rn(curvature, scale), (float)max_tess);
  return n < 4 ? 4 : (n > max_tess ? max_tess : n);
}

// B(u) = (1-u)^2 P0 + 2u(1-u) P1 + u^2 P2, every operation rounded as written.
__host__ __device__ inline float2 bezier_point(const BezierLine &l, float u) {
  float v = add_rn(1.0f, -u);
  float a = mul_rn(v, v), b = mul_rn(mul_rn(2.0f, u), v), c = mul_rn(u, u);
  return make_float2(
      add_rn(add_rn(mul_rn(a, l.cp[0].x), mul_rn(b, l.cp[1].x)), mul_rn(c, l.cp[2].x)),
      add_rn(add_rn(mul_rn(a, l.cp[0].y), mul_rn(b, l.cp[1].y)), mul_rn(c, l.cp[2].y)));
}

__host__ __device__ inline float segment(float2 p, float2 q) {
  float dx = add_rn(q.x, -p.x), dy = add_rn(q.y, -p.y);
  return sqrtf(add_rn(mul_rn(dx, dx), mul_rn(dy, dy)));
}

// ---------------------------------------------------------------- kernels --

__global__ void bezier_flat(const BezierLine *lines, int nLines, float scale,
                            int max_tess, int *tess, float *length) {
  int lidx = blockIdx.x * blockDim.x + threadIdx.x;
  if (lidx >= nLines) return;
  BezierLine l = lines[lidx];
  int nTess = compute_ntess(l, scale, max_tess);
  tess[lidx] = nTess;
  float2 *buf;
  if (cudaMalloc((void **)&buf, nTess * sizeof(float2)) != cudaSuccess) {
    atomicAdd(&g_alloc_failures, 1u);
    return;
  }
  for (int j = 0; j < nTess; ++j) buf[j] = bezier_point(l, j / (float)(nTess - 1));
  float len = 0.0f;
  for (int k = 1; k < nTess; ++k) len = add_rn(len, segment(buf[k - 1], buf[k]));
  length[lidx] = len;
  cudaFree(buf);
}

// Thread j writes vertex j; the line's last thread to finish sums the
// segments in order and frees the buffer.
__global__ void bezier_child(BezierLine line, int nTess, float2 *buf,
                             unsigned *done, float *length) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j >= nTess) return;
  buf[j] = bezier_point(line, j / (float)(nTess - 1));
  __threadfence();
  if (atomicAdd(done, 1u) != (unsigned)nTess - 1u) return;
  __threadfence();
  float len = 0.0f;
  float2 prev = __ldcg(&buf[0]);
  for (int k = 1; k < nTess; ++k) {
    float2 next = __ldcg(&buf[k]);
    len = add_rn(len, segment(prev, next));
    prev = next;
  }
  *length = len;
  cudaFree(buf);
}

__global__ void bezier_parent(const BezierLine *lines, int nLines, float scale,
                              int max_tess, int *tess, unsigned *done,
                              float *length) {
  int lidx = blockIdx.x * blockDim.x + threadIdx.x;
  if (lidx >= nLines) return;
  int nTess = compute_ntess(lines[lidx], scale, max_tess);
  tess[lidx] = nTess;
  float2 *buf;
  if (cudaMalloc((void **)&buf, nTess * sizeof(float2)) != cudaSuccess) {
    atomicAdd(&g_alloc_failures, 1u);
    return;
  }
#ifdef DPOPT_STATS
  atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8) alloc(warp)
  bezier_child<<<(nTess + 31) / 32, 32>>>(lines[lidx], nTess, buf, done + lidx, length + lidx);
  if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
}

// ------------------------------------------------------------------- host --

static uint64_t g_rng;
static uint64_t splitmix64() {
  uint64_t z = (g_rng += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static float frand() { return (float)(splitmix64() >> 40) / 16777216.0f; }  // [0,1)

// The lines of examples/bezier.cu (same seed, same lines).
static std::vector<BezierLine> make_lines(int n) {
  std::vector<BezierLine> v(n);
  for (auto &l : v) {
    float x0 = frand() * 16.0f - 8.0f, y0 = frand() * 16.0f - 8.0f;
    float ang = frand() * 6.2831853f, len = 0.5f + 3.5f * frand();
    float dx = len * cosf(ang), dy = len * sinf(ang);
    float r = frand(), h = 1.25f * r * r * r * r;
    if (frand() < 0.5f) h = -h;
    l.cp[0] = make_float2(x0, y0);
    l.cp[2] = make_float2(x0 + dx, y0 + dy);
    l.cp[1] = make_float2(x0 + 0.5f * dx - h * dy, y0 + 0.5f * dy + h * dx);
  }
  return v;
}

static uint64_t fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p;
  for (size_t i = 0; i < n; ++i) { h ^= b[i]; h *= 0x100000001B3ull; }
  return h;
}

static uint64_t checksum(const std::vector<int> &tess, const std::vector<float> &len) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (int t : tess) { int32_t x = t; h = fnv1a(h, &x, sizeof x); }
  for (float l : len) { uint32_t x; memcpy(&x, &l, sizeof x); h = fnv1a(h, &x, sizeof x); }
  return h;
}

#ifdef DPOPT_RUNTIME_KNOBS
extern "C" int dpopt_knobs_from_env(void) __attribute__((weak));
#endif

int main(int argc, char **argv) {
#ifdef DPOPT_RUNTIME_KNOBS
  if (dpopt_knobs_from_env) std::printf("info runtime_knobs_set=%d\n", dpopt_knobs_from_env());
#endif
  int nLines = 16384, max_tess = 1024, reps = 5;
  uint64_t seed = 12345;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) { fprintf(stderr, "missing value for %s\n", a.c_str()); return 1; }
    if (a == "--lines") nLines = atoi(argv[++i]);
    else if (a == "--max-tess") max_tess = atoi(argv[++i]);
    else if (a == "--seed") seed = strtoull(argv[++i], nullptr, 10);
    else if (a == "--reps") reps = atoi(argv[++i]);
    else { fprintf(stderr, "unknown argument %s\n", a.c_str()); return 1; }
  }
  if (nLines < 1 || max_tess < 4 || reps < 1) {
    fprintf(stderr, "need --lines >= 1, --max-tess >= 4, --reps >= 1\n");
    return 1;
  }
  const float scale = (float)max_tess;
  g_rng = seed;
  std::vector<BezierLine> lines = make_lines(nLines);

  // CPU reference, and the device heap all buffers of one run need at once.
  std::vector<int> refTess(nLines);
  std::vector<float> refLen(nLines);
  long long totalPoints = 0;
  size_t heapBytes = 0;
  std::vector<float2> pts;
  for (int i = 0; i < nLines; ++i) {
    int n = compute_ntess(lines[i], scale, max_tess);
    refTess[i] = n;
    totalPoints += n;
    pts.resize(n);
    for (int j = 0; j < n; ++j) pts[j] = bezier_point(lines[i], j / (float)(n - 1));
    float len = 0.0f;
    for (int k = 1; k < n; ++k) len = add_rn(len, segment(pts[k - 1], pts[k]));
    refLen[i] = len;
    heapBytes += ((size_t)n * sizeof(float2) + 15) / 16 * 16 + 64;  // a slice, its header, the allocator's
  }

  // Device-side cudaMalloc allocates from the device heap (8 MiB unless set
  // before the first kernel launch): room for every buffer of a run twice.
  const size_t heap = std::max<size_t>(2 * heapBytes + (64u << 20), 8u << 20);
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitMallocHeapSize, heap));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  size_t pending = std::min<size_t>(std::max(2048, nLines), (size_t)1 << 20);
  CUDA_CHECK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

  BezierLine *dLines;
  int *dTess;
  unsigned *dDone;
  float *dLen;
  CUDA_CHECK(cudaMalloc(&dLines, nLines * sizeof(BezierLine)));
  CUDA_CHECK(cudaMalloc(&dTess, nLines * sizeof(int)));
  CUDA_CHECK(cudaMalloc(&dDone, nLines * sizeof(unsigned)));
  CUDA_CHECK(cudaMalloc(&dLen, nLines * sizeof(float)));
  CUDA_CHECK(cudaMemcpy(dLines, lines.data(), nLines * sizeof(BezierLine),
                        cudaMemcpyHostToDevice));
  cudaEvent_t ev0, ev1;
  CUDA_CHECK(cudaEventCreate(&ev0));
  CUDA_CHECK(cudaEventCreate(&ev1));

  printf("info example=bezier_alloc lines=%d total_points=%lld max_tess=%d heap_mib=%zu gpu=%s\n",
         nLines, totalPoints, max_tess, heap >> 20, prop.name);

  const int block = 128, grid = (nLines + block - 1) / block;
  const int parent_grid = (nLines + PARENT_BLOCK - 1) / PARENT_BLOCK;
  const char *impls[2] = {"flat", "cdp"};
  const int nImpls = getenv("DPOPT_FLAT_ONLY") && getenv("DPOPT_FLAT_ONLY")[0] == '1' ? 1 : 2;
  bool allOk = true;
  std::vector<int> hTess(nLines);
  std::vector<float> hLen(nLines);

  for (int impl = 0; impl < nImpls; ++impl) {
    unsigned int zero = 0;
    CUDA_CHECK(cudaMemcpyToSymbol(g_launch_failures, &zero, sizeof zero));
    CUDA_CHECK(cudaMemcpyToSymbol(g_alloc_failures, &zero, sizeof zero));
    std::vector<float> times;
    for (int r = 0; r <= reps; ++r) {  // r == 0: untimed warm-up
#ifdef DPOPT_STATS
      if (r == reps) {  // count the launches of the last run only
        const unsigned long long zero64 = 0;
        cudaMemcpyToSymbol(g_launch_requests, &zero64, sizeof zero64);
        if (dpopt_stats_reset) dpopt_stats_reset();
      }
#endif
      CUDA_CHECK(cudaMemset(dTess, 0xFF, nLines * sizeof(int)));   // -1
      CUDA_CHECK(cudaMemset(dLen, 0xFF, nLines * sizeof(float)));  // NaN
      CUDA_CHECK(cudaMemset(dDone, 0, nLines * sizeof(unsigned)));
      CUDA_CHECK(cudaDeviceSynchronize());
      CUDA_CHECK(cudaEventRecord(ev0));
      if (impl == 0)
        bezier_flat<<<grid, block>>>(dLines, nLines, scale, max_tess, dTess, dLen);
      else
        bezier_parent<<<parent_grid, PARENT_BLOCK>>>(dLines, nLines, scale, max_tess, dTess, dDone, dLen);
      CUDA_CHECK(cudaGetLastError());
      CUDA_CHECK(cudaEventRecord(ev1));
      CUDA_CHECK(cudaDeviceSynchronize());
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, ev0, ev1));
      if (r > 0) times.push_back(ms);
    }
#ifdef DPOPT_STATS
    {
      unsigned long long requests = 0;
      cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
      printf("stats example=bezier_alloc launch_requests=%llu\n", requests);
      if (dpopt_stats_report) dpopt_stats_report(stdout);
    }
#endif
    std::sort(times.begin(), times.end());
    float median = times.size() % 2 ? times[times.size() / 2]
                                    : 0.5f * (times[times.size() / 2 - 1] + times[times.size() / 2]);

    unsigned int launchFailures = 0, allocFailures = 0;
    CUDA_CHECK(cudaMemcpyFromSymbol(&launchFailures, g_launch_failures, sizeof launchFailures));
    CUDA_CHECK(cudaMemcpyFromSymbol(&allocFailures, g_alloc_failures, sizeof allocFailures));
    CUDA_CHECK(cudaMemcpy(hTess.data(), dTess, nLines * sizeof(int), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hLen.data(), dLen, nLines * sizeof(float), cudaMemcpyDeviceToHost));

    // Verify the last run exactly: nTess and the bits of every length.
    long long badTess = 0, badLen = 0;
    for (int i = 0; i < nLines; ++i) {
      if (hTess[i] != refTess[i]) ++badTess;
      if (memcmp(&hLen[i], &refLen[i], sizeof(float)) != 0) ++badLen;
    }
    bool ok = badTess == 0 && badLen == 0;
    if (!ok)
      fprintf(stderr, "%s: %lld lines with wrong nTess, %lld wrong lengths\n",
              impls[impl], badTess, badLen);
    if (allocFailures != 0)
      fprintf(stderr, "%s: %u device-side allocations failed\n", impls[impl], allocFailures);
    if (!ok || launchFailures != 0 || allocFailures != 0) allOk = false;

    printf("result example=bezier_alloc input=l%d-t%d impl=%s time_ms=%.4f verified=%s "
           "checksum=%016llx launch_failures=%u alloc_failures=%u\n",
           nLines, max_tess, impls[impl], median, ok && allocFailures == 0 ? "yes" : "no",
           (unsigned long long)checksum(hTess, hLen), launchFailures, allocFailures);
  }

  CUDA_CHECK(cudaEventDestroy(ev0));
  CUDA_CHECK(cudaEventDestroy(ev1));
  CUDA_CHECK(cudaFree(dLines));
  CUDA_CHECK(cudaFree(dTess));
  CUDA_CHECK(cudaFree(dDone));
  CUDA_CHECK(cudaFree(dLen));
  return allOk ? 0 : 1;
}
