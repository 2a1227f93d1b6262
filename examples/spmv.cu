// spmv.cu - sparse matrix-vector product y = A x (CSR) on a matrix with
// irregular, power-law row lengths.
//
// Two GPU implementations, one kernel launch per product:
//   flat : one thread per row walks the row's nonzeros serially and stores
//          y[row] (no atomics).
//   cdp  : one thread per row launches a child grid with one thread per
//          nonzero of the row (CUDA dynamic parallelism); every child thread
//          adds its product to y[row] with atomicAdd.
//
// Arithmetic is exact: A and x hold small integers and y is int32, so the
// atomic accumulation of the cdp version is order independent and every run
// is compared exactly with a CPU reference (int64 accumulation). The program
// refuses a matrix on which a row's sum of |a_ij * x_j| could exceed INT32_MAX,
// so no partial sum can overflow in any order.
//
// Input: a seeded generator (the default): --rows N square matrix, each row's
// length k in [1, M] drawn with probability proportional to k^-alpha
// (M = --max-row, alpha = --alpha), column indices uniform (a row may repeat a
// column; each row is sorted by column), values uniform in [-8, 8] \ {0}.
// With the defaults (seed 1, alpha 1.5): 3,275,138 nonzeros (mean row length
// 50, longest row 4094); 3,797 rows (5.8%) have 128 or more nonzeros and hold
// 84% of them.
// Alternatively a Matrix Market coordinate file (--mtx): field real, integer or
// pattern (a pattern entry has value 1); symmetric: every off-diagonal entry
// (i, j) also stands for (j, i); skew-symmetric: for (j, i) with the negated
// value. Each value v becomes the integer round(v * 1000) clamped to
// [-1000, 1000] (rounded half away from zero; a pattern entry becomes 1000;
// entries that round to 0 stay stored). Duplicate entries are kept (they add).
// In both cases x_j is uniform in [-8, 8], from --seed.
//
// Flags: --rows N (65536)  --max-row M (4096)  --alpha A (1.5)  --seed X (1)
//        --mtx PATH  --reps R (5)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o spmv spmv.cu -lcudadevrt
//
// Checksum: FNV-1a 64 over y (int32, little-endian bytes).
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

// Threads per block of the host launches of the parent kernel; -DPARENT_BLOCK=1024 checks that transformed parents stay launchable with 1,024 threads.
#ifndef PARENT_BLOCK
#define PARENT_BLOCK 256
#endif

#define CK(call)                                                              \
  do {                                                                        \
    cudaError_t err_ = (call);                                                \
    if (err_ != cudaSuccess) {                                                \
      std::fprintf(stderr, "CUDA error %s at %s:%d: %s\n",                    \
                   cudaGetErrorName(err_), __FILE__, __LINE__,                \
                   cudaGetErrorString(err_));                                 \
      std::exit(1);                                                           \
    }                                                                         \
  } while (0)

// ---------------------------------------------------------------- kernels --

// Number of failed device-side launches (checked by the host).
__device__ unsigned int g_launch_failures = 0;
#ifdef DPOPT_STATS
// Launch statements executed: the device-side launches of the original
// program. dpopt's generated code defines the two functions (-DDPOPT_STATS).
__device__ unsigned long long g_launch_requests = 0;
extern "C" void dpopt_stats_report(FILE *) __attribute__((weak));
extern "C" void dpopt_stats_reset(void) __attribute__((weak));
#endif

// Flat version: each thread computes one row's dot product.
__global__ void spmv_flat(const int* row_ptr, const int* col, const int* val,
                          const int* x, int* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  int sum = 0;
  for (int e = row_ptr[r]; e < row_ptr[r + 1]; ++e) sum += val[e] * x[col[e]];
  y[r] = sum;
}

// Child grid: one thread per nonzero of row r (entries start .. start+len-1).
__global__ void spmv_child(const int* col, const int* val, const int* x,
                           int* y, int start, int len, int r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= len) return;
  atomicAdd(&y[r], val[start + i] * x[col[start + i]]);
}

// CDP version: each row's thread launches a child grid over the row.
__global__ void spmv_parent(const int* row_ptr, const int* col, const int* val,
                            const int* x, int* y, int n) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= n) return;
  int len = row_ptr[r + 1] - row_ptr[r];
  if (len > 0) {
#ifdef DPOPT_STATS
    atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8)
    spmv_child<<<(len + 63) / 64, 64>>>(col, val, x, y, row_ptr[r], len, r);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
  }
}

// ----------------------------------------------------------------- matrix --

struct Csr {
  int rows = 0, cols = 0;
  std::vector<int> row_ptr;  // rows + 1 offsets
  std::vector<int> col;      // row_ptr[rows] column indices
  std::vector<int> val;      // row_ptr[rows] values
};

static uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform integer in [0, n), n < 2^32.
static int uniform_below(uint64_t& s, uint64_t n) {
  return int(((splitmix64(s) >> 32) * n) >> 32);
}

static Csr make_zipf(int rows, int max_row, double alpha, uint64_t seed) {
  std::vector<double> cdf(max_row);  // cdf[k - 1] = sum_{j <= k} j^-alpha
  double acc = 0.0;
  for (int k = 1; k <= max_row; ++k) {
    acc += std::pow(double(k), -alpha);
    cdf[k - 1] = acc;
  }
  Csr a;
  a.rows = rows;
  a.cols = rows;
  a.row_ptr.assign(size_t(rows) + 1, 0);
  uint64_t s = seed;
  int64_t total = 0;
  for (int r = 0; r < rows; ++r) {
    const double u = double(splitmix64(s) >> 11) * 0x1.0p-53 * acc;
    int len = int(std::upper_bound(cdf.begin(), cdf.end(), u) - cdf.begin()) + 1;
    if (len > max_row) len = max_row;  // u rounded up to acc
    total += len;
    if (total > INT32_MAX) {
      std::fprintf(stderr, "matrix too large for 32-bit offsets\n");
      std::exit(1);
    }
    a.row_ptr[r + 1] = int(total);
  }
  a.col.resize(total);
  a.val.resize(total);
  for (int r = 0; r < rows; ++r) {
    const int b = a.row_ptr[r], e = a.row_ptr[r + 1];
    for (int k = b; k < e; ++k) a.col[k] = uniform_below(s, uint64_t(a.cols));
    std::sort(a.col.begin() + b, a.col.begin() + e);
    for (int k = b; k < e; ++k) {
      const int v = uniform_below(s, 16);  // 0..15 -> -8..-1, 1..8
      a.val[k] = v < 8 ? v - 8 : v - 7;
    }
  }
  return a;
}

// One line without its end of line; false at end of file.
static bool read_line(FILE* f, std::string& line) {
  line.clear();
  int c;
  while ((c = std::fgetc(f)) != EOF && c != '\n') line.push_back(char(c));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return c != EOF || !line.empty();
}

static int mtx_value(double v) {  // round(v * 1000) clamped to [-1000, 1000]
  const double s = std::min(1000.0, std::max(-1000.0, v * 1000.0));
  return int(std::lround(s));
}

// Matrix Market coordinate file (real / integer / pattern; general, symmetric
// or skew-symmetric), values converted as described at the top of the file.
static Csr read_mtx(const char* path) {
  FILE* f = std::fopen(path, "r");
  if (!f) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
  std::string line;
  if (!read_line(f, line)) {
    std::fprintf(stderr, "%s: empty file\n", path);
    std::exit(1);
  }
  for (char& c : line) c = char(std::tolower((unsigned char)c));
  char banner[64] = "", object[64] = "", format[64] = "", field[64] = "",
       symmetry[64] = "";
  if (std::sscanf(line.c_str(), "%63s %63s %63s %63s %63s", banner, object,
                  format, field, symmetry) != 5 ||
      std::strcmp(banner, "%%matrixmarket") != 0 ||
      std::strcmp(object, "matrix") != 0) {
    std::fprintf(stderr, "%s: not a Matrix Market matrix file\n", path);
    std::exit(1);
  }
  const bool pattern = std::strcmp(field, "pattern") == 0;
  const bool sym = std::strcmp(symmetry, "symmetric") == 0;
  const bool skew = std::strcmp(symmetry, "skew-symmetric") == 0;
  if (std::strcmp(format, "coordinate") != 0 ||
      (!pattern && std::strcmp(field, "real") != 0 &&
       std::strcmp(field, "integer") != 0) ||
      (!sym && !skew && std::strcmp(symmetry, "general") != 0)) {
    std::fprintf(stderr,
                 "%s: unsupported Matrix Market type '%s %s %s' (need "
                 "coordinate, real/integer/pattern, general/symmetric/"
                 "skew-symmetric)\n", path, format, field, symmetry);
    std::exit(1);
  }
  long long nr = 0, nc = 0, ne = 0;
  for (;;) {  // comments and blank lines, then the size line
    if (!read_line(f, line)) {
      std::fprintf(stderr, "%s: no size line\n", path);
      std::exit(1);
    }
    size_t p = line.find_first_not_of(" \t");
    if (p == std::string::npos || line[p] == '%') continue;
    if (std::sscanf(line.c_str(), "%lld %lld %lld", &nr, &nc, &ne) != 3) {
      std::fprintf(stderr, "%s: bad size line\n", path);
      std::exit(1);
    }
    break;
  }
  if (nr < 1 || nc < 1 || ne < 0 || nr >= INT32_MAX || nc >= INT32_MAX ||
      ne > INT32_MAX) {
    std::fprintf(stderr, "%s: unsupported size %lld x %lld, %lld entries\n",
                 path, nr, nc, ne);
    std::exit(1);
  }
  if ((sym || skew) && nr != nc) {
    std::fprintf(stderr, "%s: %s matrix is not square\n", path, symmetry);
    std::exit(1);
  }
  struct Entry { int r, c, v; };
  std::vector<Entry> ent;
  ent.reserve(size_t(ne) * ((sym || skew) ? 2 : 1));
  for (long long k = 0; k < ne; ++k) {
    long long i = 0, j = 0;
    double v = 1.0;
    if (std::fscanf(f, "%lld %lld", &i, &j) != 2 ||
        (!pattern && std::fscanf(f, "%lf", &v) != 1)) {
      std::fprintf(stderr, "%s: truncated or bad entry %lld\n", path, k + 1);
      std::exit(1);
    }
    if (i < 1 || i > nr || j < 1 || j > nc || std::isnan(v)) {
      std::fprintf(stderr, "%s: bad entry %lld (%lld, %lld)\n", path, k + 1, i, j);
      std::exit(1);
    }
    const int iv = mtx_value(v);
    ent.push_back({int(i - 1), int(j - 1), iv});
    if ((sym || skew) && i != j)
      ent.push_back({int(j - 1), int(i - 1), skew ? -iv : iv});
  }
  std::fclose(f);
  if (ent.size() > size_t(INT32_MAX)) {
    std::fprintf(stderr, "%s: too many entries for 32-bit offsets\n", path);
    std::exit(1);
  }
  Csr a;
  a.rows = int(nr);
  a.cols = int(nc);
  a.row_ptr.assign(size_t(nr) + 1, 0);
  for (const Entry& t : ent) ++a.row_ptr[t.r + 1];
  for (int r = 0; r < a.rows; ++r) a.row_ptr[r + 1] += a.row_ptr[r];
  std::vector<std::pair<int, int>> tmp(ent.size());  // (col, val) by row
  std::vector<int> next(a.row_ptr.begin(), a.row_ptr.end() - 1);
  for (const Entry& t : ent) tmp[next[t.r]++] = {t.c, t.v};
  a.col.resize(ent.size());
  a.val.resize(ent.size());
  for (int r = 0; r < a.rows; ++r)
    std::sort(tmp.begin() + a.row_ptr[r], tmp.begin() + a.row_ptr[r + 1]);
  for (size_t k = 0; k < tmp.size(); ++k) {
    a.col[k] = tmp[k].first;
    a.val[k] = tmp[k].second;
  }
  return a;
}

static std::vector<int> make_x(int n, uint64_t seed) {
  std::vector<int> x(n);
  uint64_t s = seed ^ 0x5851F42D4C957F2Dull;  // a stream apart from A's
  for (int j = 0; j < n; ++j) x[j] = uniform_below(s, 17) - 8;
  return x;
}

// y = A x with int64 accumulation. Exits when a row's sum of |a_ij * x_j|
// exceeds INT32_MAX (an int32 partial sum could overflow on the GPU).
static std::vector<int> cpu_spmv(const Csr& a, const std::vector<int>& x) {
  std::vector<int> y(a.rows);
  for (int r = 0; r < a.rows; ++r) {
    int64_t sum = 0, mag = 0;
    for (int e = a.row_ptr[r]; e < a.row_ptr[r + 1]; ++e) {
      const int64_t p = int64_t(a.val[e]) * x[a.col[e]];
      sum += p;
      mag += p < 0 ? -p : p;
    }
    if (mag > INT32_MAX) {
      std::fprintf(stderr,
                   "row %d: sum of |a_ij * x_j| = %lld exceeds int32, "
                   "results could overflow\n", r, (long long)mag);
      std::exit(1);
    }
    y[r] = int(sum);
  }
  return y;
}

static uint64_t fnv1a64(const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 0x100000001b3ull; }
  return h;
}

// ------------------------------------------------------------------- host --

// The load-balanced flat version (impl=flat-lb): a thread, a warp or the
// whole block per row by its length, one launch.
#include "common/lb_spmv.cuh"

enum class Impl { Flat, FlatLb, Cdp };

static const char* impl_name(Impl impl) {
  return impl == Impl::Flat ? "flat" : impl == Impl::FlatLb ? "flat-lb" : "cdp";
}

struct DeviceMatrix {
  int rows;
  int *row_ptr, *col, *val, *x, *y;
};

static void reset_y(const DeviceMatrix& d, Impl impl) {
  // flat-lb stores every row: poison y so that a row it misses shows.
  CK(cudaMemset(d.y, impl == Impl::FlatLb ? 0xa5 : 0, sizeof(int) * d.rows));
  CK(cudaDeviceSynchronize());
}

// One product into an already zeroed y; returns elapsed ms.
static float run_spmv(Impl impl, const DeviceMatrix& d, cudaEvent_t t0,
                      cudaEvent_t t1) {
  const int threads = 256;
  const int blocks = int((int64_t(d.rows) + threads - 1) / threads);
  const int parent_blocks = int((int64_t(d.rows) + PARENT_BLOCK - 1) / PARENT_BLOCK);
  CK(cudaEventRecord(t0));
  if (impl == Impl::Flat)
    spmv_flat<<<blocks, threads>>>(d.row_ptr, d.col, d.val, d.x, d.y, d.rows);
  else if (impl == Impl::FlatLb)
    lb::spmv_launch(d.row_ptr, d.col, d.val, d.x, d.y, d.rows);
  else
    spmv_parent<<<parent_blocks, PARENT_BLOCK>>>(d.row_ptr, d.col, d.val, d.x, d.y, d.rows);
  CK(cudaGetLastError());
  CK(cudaEventRecord(t1));  // the parent grid completes after its children
  CK(cudaEventSynchronize(t1));
  CK(cudaDeviceSynchronize());
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

static void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--rows N] [--max-row M] [--alpha A] [--seed X] "
               "[--mtx PATH] [--reps R]\n", prog);
  std::exit(1);
}

// With -DDPOPT_RUNTIME_KNOBS dpopt's tuning values are read at run time from
// environment variables (DPOPT_THRESHOLD, ...): one build serves a sweep.
#ifdef DPOPT_RUNTIME_KNOBS
extern "C" int dpopt_knobs_from_env(void) __attribute__((weak));
#endif

int main(int argc, char** argv) {
#ifdef DPOPT_RUNTIME_KNOBS
  if (dpopt_knobs_from_env) std::printf("info runtime_knobs_set=%d\n", dpopt_knobs_from_env());
#endif
  const double default_alpha = 1.5;
  long long rows_arg = 65536, max_row = 4096;
  int reps = 5;
  double alpha = default_alpha;
  uint64_t seed = 1;
  std::string mtx;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const char* v = argv[++i];
    if (a == "--rows") rows_arg = std::atoll(v);
    else if (a == "--max-row") max_row = std::atoll(v);
    else if (a == "--alpha") alpha = std::strtod(v, nullptr);
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "--mtx") mtx = v;
    else if (a == "--reps") reps = std::atoi(v);
    else usage(argv[0]);
  }
  if (rows_arg < 1 || rows_arg > (1ll << 30) || max_row < 1 ||
      max_row > (1ll << 24) || !(alpha >= 0.0 && alpha <= 100.0) || reps < 1)
    usage(argv[0]);

  std::string input;
  Csr a;
  if (!mtx.empty()) {
    a = read_mtx(mtx.c_str());
    size_t slash = mtx.find_last_of('/');
    input = slash == std::string::npos ? mtx : mtx.substr(slash + 1);
  } else {
    a = make_zipf(int(rows_arg), int(max_row), alpha, seed);
    input = "zipf-r" + std::to_string(rows_arg) + "-m" + std::to_string(max_row);
    if (alpha != default_alpha) {
      char buf[32];
      std::snprintf(buf, sizeof buf, "-a%g", alpha);
      input += buf;
    }
  }
  const int nnz = a.row_ptr[a.rows];
  int longest = 0;
  for (int r = 0; r < a.rows; ++r)
    longest = std::max(longest, a.row_ptr[r + 1] - a.row_ptr[r]);
  const std::vector<int> x = make_x(a.cols, seed);
  const std::vector<int> ref = cpu_spmv(a, x);

  cudaDeviceProp prop;
  CK(cudaSetDevice(0));
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t pending = std::min<size_t>(std::max<size_t>(2048, a.rows), 1u << 20);
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

  DeviceMatrix d;
  d.rows = a.rows;
  CK(cudaMalloc(&d.row_ptr, sizeof(int) * (a.rows + 1)));
  CK(cudaMalloc(&d.col, sizeof(int) * std::max(nnz, 1)));
  CK(cudaMalloc(&d.val, sizeof(int) * std::max(nnz, 1)));
  CK(cudaMalloc(&d.x, sizeof(int) * a.cols));
  CK(cudaMalloc(&d.y, sizeof(int) * a.rows));
  CK(cudaMemcpy(d.row_ptr, a.row_ptr.data(), sizeof(int) * (a.rows + 1),
                cudaMemcpyHostToDevice));
  if (nnz > 0) {
    CK(cudaMemcpy(d.col, a.col.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(d.val, a.val.data(), sizeof(int) * nnz, cudaMemcpyHostToDevice));
  }
  CK(cudaMemcpy(d.x, x.data(), sizeof(int) * a.cols, cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));

  std::printf("info example=spmv rows=%d cols=%d nnz=%d max_row=%d gpu=%s\n",
              a.rows, a.cols, nnz, longest, prop.name);

  bool ok = true;
  std::vector<int> out(a.rows);
  const Impl impls[3] = {Impl::Flat, Impl::FlatLb, Impl::Cdp};
  for (int ii = 0; ii < lb::impls_to_run(3); ++ii) {  // DPOPT_FLAT_ONLY=1: no cdp
    const Impl impl = impls[ii];
    const unsigned int zero = 0;
    CK(cudaMemcpyToSymbol(g_launch_failures, &zero, sizeof(zero)));
    bool verified = true;
    std::vector<float> times;
    for (int r = 0; r <= reps; ++r) {  // r == 0 is the untimed warm-up
#ifdef DPOPT_STATS
      if (r == reps) {  // count the launches of the last run only
        const unsigned long long zero64 = 0;
        cudaMemcpyToSymbol(g_launch_requests, &zero64, sizeof zero64);
        if (dpopt_stats_reset) dpopt_stats_reset();
      }
#endif
      reset_y(d, impl);
      float ms = run_spmv(impl, d, t0, t1);
      if (r > 0) times.push_back(ms);
      CK(cudaMemcpy(out.data(), d.y, sizeof(int) * a.rows, cudaMemcpyDeviceToHost));
      if (out != ref) verified = false;
    }
#ifdef DPOPT_STATS
    {
      unsigned long long requests = 0;
      cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
      printf("stats example=spmv launch_requests=%llu\n", requests);
      if (dpopt_stats_report) dpopt_stats_report(stdout);
    }
#endif
    unsigned int failures = 0;
    CK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));
    std::sort(times.begin(), times.end());
    const size_t k = times.size();
    const double median =
        k % 2 ? times[k / 2] : 0.5 * (double(times[k / 2 - 1]) + times[k / 2]);
    const uint64_t sum = fnv1a64(out.data(), sizeof(int) * out.size());
    std::printf("result example=spmv input=%s impl=%s time_ms=%.4f verified=%s "
                "checksum=%016llx launch_failures=%u\n",
                input.c_str(), impl_name(impl), median,
                verified ? "yes" : "no", (unsigned long long)sum, failures);
    if (!verified || failures != 0) ok = false;
  }

  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  CK(cudaFree(d.row_ptr));
  CK(cudaFree(d.col));
  CK(cudaFree(d.val));
  CK(cudaFree(d.x));
  CK(cudaFree(d.y));
  return ok ? 0 : 1;
}
