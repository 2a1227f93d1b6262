// sp.cu - survey propagation (SP) on random k-SAT: a fixed number of
// survey-update iterations over the clause-variable factor graph, in the
// style of LonestarGPU's / KLAP's SP with dynamic parallelism.
//
// Factor graph: one edge per literal occurrence (clause a, variable i, sign).
// eta[e] is the survey of edge e: the probability that clause a warns
// variable i. One iteration (Braunstein, Mezard, Zecchina) is two kernels:
//   1. per variable i (the nested-parallel kernel): over i's occurrences b,
//      the products P+ and P- of (1 - eta[b]) for positive and negated
//      occurrences (zero factors counted, not multiplied, so that an edge can
//      take its own factor out again), then, for every occurrence (a, i),
//      the message u[a,i] = Pu / (Pu + Ps + P0) with S and U the products
//      over the other occurrences of the same and the opposite sign:
//      Pu = (1 - U) S, Ps = (1 - S) U, P0 = S U.
//   2. per clause a: eta'[a,i] = product of u[a,j] over a's other literals j.
// Both kernels read only the previous iteration's values (eta and u are
// separate arrays, eta is double-buffered), and every output value is
// computed by exactly one thread, in a fixed order:
//   flat : one thread per variable computes the products and then walks the
//          variable's occurrences serially.
//   cdp  : one thread per variable computes the products and launches a
//          child grid with one thread per occurrence (CUDA dynamic
//          parallelism).
// The clause kernel is the same flat kernel in both implementations.
//
// Exact verification: every float operation of the update goes through
// sp_add/sp_sub/sp_mul/sp_div, which are __fadd_rn/__fsub_rn/__fmul_rn/
// __fdiv_rn on the device (never contracted into FMAs, IEEE round to nearest
// even whatever -fmad/-prec-div say) and the plain IEEE single-precision
// operations on the host, where the product is stored through a volatile
// float so that the host compiler cannot contract it into an FMA either (GCC
// would with -ffp-contract=fast on an FMA target, e.g. -march=native).
// Comparisons and selections are exact. With the Jacobi schedule above, the
// values computed, and the order in which each is computed, do not depend on
// the thread schedule, on thresholding, coarsening or aggregation, so every
// GPU run must be bit-identical to the CPU reference (compared with memcmp).
// Do not build with -use_fast_math / --ftz=true (the host keeps denormals).
//
// Input: a seeded random k-SAT generator (each clause k distinct variables
// drawn uniformly, each negated with probability 1/2); the default is
// random 5-SAT with 10,000 variables and 210,000 clauses (ratio 21, just
// below the 5-SAT threshold of about 21.1), 1,050,000 literals, about 105
// occurrences per variable. Alternatively a DIMACS CNF file, e.g. the papers'
// RAND-3 (random-42000-10000-3.cnf: 3-SAT, 10,000 variables, 42,000
// clauses). The initial surveys are uniform in (0, 1), drawn from --seed.
//
// Flags: --cnf PATH  --vars N (10000)  --clauses M (210000)  --k K (5)
//        --seed X (1)  --iters T (20)  --reps R (5)
// Build: nvcc -O3 -rdc=true -arch=sm_90 -o sp sp.cu -lcudadevrt
#include <cuda_runtime.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
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

// ------------------------------------------------------- float arithmetic --

// IEEE single-precision operations, rounded to nearest even, never fused:
// the device and the host compute bit-identical results.
__host__ __device__ inline float sp_add(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

__host__ __device__ inline float sp_sub(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fsub_rn(a, b);
#else
  return a - b;
#endif
}

__host__ __device__ inline float sp_mul(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(a, b);
#else
  volatile float r = a * b;  // rounded to float here: no FMA contraction
  return r;
#endif
}

__host__ __device__ inline float sp_div(float a, float b) {
#ifdef __CUDA_ARCH__
  return __fdiv_rn(a, b);
#else
  return a / b;
#endif
}

// Products of (1 - eta) over a variable's positive and negated occurrences;
// factors that are exactly zero are counted instead of multiplied.
struct SpProducts {
  float pos, neg;
  int zpos, zneg;
};

__host__ __device__ inline SpProducts sp_var_products(const int* occ_edge,
                                                      const unsigned char* neg,
                                                      const float* eta,
                                                      int start, int deg) {
  SpProducts p = {1.0f, 1.0f, 0, 0};
  for (int i = 0; i < deg; ++i) {
    const int e = occ_edge[start + i];
    const float f = sp_sub(1.0f, eta[e]);
    if (neg[e]) {
      if (f == 0.0f) ++p.zneg;
      else p.neg = sp_mul(p.neg, f);
    } else {
      if (f == 0.0f) ++p.zpos;
      else p.pos = sp_mul(p.pos, f);
    }
  }
  return p;
}

// The message of one occurrence (edge with sign is_neg and survey eta_e) of
// a variable to its clause: Pu / (Pu + Ps + P0), from the variable's
// products with the edge's own factor taken out.
__host__ __device__ inline float sp_edge_message(unsigned char is_neg,
                                                 float eta_e, float ppos,
                                                 float pneg, int zpos,
                                                 int zneg) {
  const float same = is_neg ? pneg : ppos;
  const int zsame = is_neg ? zneg : zpos;
  const float opp = is_neg ? ppos : pneg;
  const int zopp = is_neg ? zpos : zneg;
  const float f = sp_sub(1.0f, eta_e);
  float s;  // product over the other occurrences of the same sign
  if (f == 0.0f) {
    s = zsame > 1 ? 0.0f : same;
  } else if (zsame > 0) {
    s = 0.0f;
  } else {
    const float q = sp_div(same, f);
    s = q < 1.0f ? q : 1.0f;  // rounding may leave it just above 1
  }
  const float u = zopp > 0 ? 0.0f : opp;  // product over the opposite sign
  const float pu = sp_mul(sp_sub(1.0f, u), s);
  const float ps = sp_mul(sp_sub(1.0f, s), u);
  const float p0 = sp_mul(s, u);
  const float sum = sp_add(sp_add(pu, ps), p0);
  return sum > 0.0f ? sp_div(pu, sum) : 0.0f;
}

// The new survey of edge e of a clause whose edges are [begin, end): the
// product of the other edges' messages, in edge order.
__host__ __device__ inline float sp_clause_survey(const float* msg, int begin,
                                                  int end, int e) {
  float prod = 1.0f;
  for (int j = begin; j < end; ++j)
    if (j != e) prod = sp_mul(prod, msg[j]);
  return prod;
}

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

// Flat version: each variable computes its products, then the messages of
// all of its occurrences.
__global__ void sp_vars_flat(const int* occ_row, const int* occ_edge,
                             const unsigned char* neg, const float* eta,
                             float* msg, int nvars) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nvars) return;
  const int start = occ_row[v];
  const int deg = occ_row[v + 1] - start;
  const SpProducts p = sp_var_products(occ_edge, neg, eta, start, deg);
  for (int i = 0; i < deg; ++i) {
    const int e = occ_edge[start + i];
    msg[e] = sp_edge_message(neg[e], eta[e], p.pos, p.neg, p.zpos, p.zneg);
  }
}

// Child grid: one thread per occurrence of one variable.
__global__ void sp_vars_child(const int* occ_edge, const unsigned char* neg,
                              const float* eta, float* msg, int start, int deg,
                              float ppos, float pneg, int zpos, int zneg) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= deg) return;
  const int e = occ_edge[start + i];
  msg[e] = sp_edge_message(neg[e], eta[e], ppos, pneg, zpos, zneg);
}

// CDP version: each variable computes its products and launches a child grid
// over its occurrences.
__global__ void sp_vars_parent(const int* occ_row, const int* occ_edge,
                               const unsigned char* neg, const float* eta,
                               float* msg, int nvars) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (v >= nvars) return;
  const int start = occ_row[v];
  const int deg = occ_row[v + 1] - start;
  if (deg > 0) {
    const SpProducts p = sp_var_products(occ_edge, neg, eta, start, deg);
#ifdef DPOPT_STATS
    atomicAdd(&g_launch_requests, 1ull);
#endif
#pragma dp threshold(128) coarsen(8)
    sp_vars_child<<<(deg + 31) / 32, 32>>>(occ_edge, neg, eta, msg, start, deg, p.pos, p.neg, p.zpos, p.zneg);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&g_launch_failures, 1u);
  }
}

// Both versions: each clause computes the new surveys of its edges.
__global__ void sp_clauses(const int* clause_row, const float* msg,
                           float* eta_next, int nclauses) {
  int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= nclauses) return;
  const int begin = clause_row[c], end = clause_row[c + 1];
  for (int e = begin; e < end; ++e)
    eta_next[e] = sp_clause_survey(msg, begin, end, e);
}

// -------------------------------------------------------------------- cnf --

struct Cnf {
  int nvars = 0, nclauses = 0;
  std::vector<int> clause_row;     // nclauses + 1 offsets into the edges
  std::vector<int> var;            // per edge (literal): its variable
  std::vector<unsigned char> neg;  // per edge: 1 if the literal is negated
  std::vector<int> occ_row;        // nvars + 1 offsets into occ_edge
  std::vector<int> occ_edge;       // per variable: its edges, ascending
};

static uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Fills occ_row/occ_edge from clause_row/var (counting sort: each variable's
// edges come out in ascending edge order).
static void build_occurrences(Cnf& f) {
  const int m = f.clause_row[f.nclauses];
  f.occ_row.assign(f.nvars + 1, 0);
  for (int e = 0; e < m; ++e) ++f.occ_row[f.var[e] + 1];
  for (int v = 0; v < f.nvars; ++v) f.occ_row[v + 1] += f.occ_row[v];
  f.occ_edge.resize(m);
  std::vector<int> fill(f.occ_row.begin(), f.occ_row.end() - 1);
  for (int e = 0; e < m; ++e) f.occ_edge[fill[f.var[e]]++] = e;
}

static Cnf make_random_ksat(int nvars, int nclauses, int k, uint64_t seed) {
  if (int64_t(nclauses) * k > INT32_MAX) {
    std::fprintf(stderr, "formula too large for 32-bit offsets\n");
    std::exit(1);
  }
  Cnf f;
  f.nvars = nvars;
  f.nclauses = nclauses;
  f.clause_row.resize(size_t(nclauses) + 1);
  f.var.reserve(size_t(nclauses) * k);
  f.neg.reserve(size_t(nclauses) * k);
  uint64_t s = seed;
  for (int c = 0; c < nclauses; ++c) {
    f.clause_row[c] = int(f.var.size());
    for (int j = 0; j < k; ++j) {
      int v;
      bool dup;
      do {  // k distinct variables per clause
        v = int(splitmix64(s) % uint64_t(nvars));
        dup = false;
        for (int t = f.clause_row[c]; t < int(f.var.size()); ++t)
          if (f.var[t] == v) dup = true;
      } while (dup);
      f.var.push_back(v);
      f.neg.push_back((unsigned char)(splitmix64(s) >> 63));
    }
  }
  f.clause_row[nclauses] = int(f.var.size());
  build_occurrences(f);
  return f;
}

// DIMACS CNF: comment lines "c ...", a header "p cnf VARS CLAUSES", then
// clauses as nonzero literals (+v / -v, v in 1..VARS) ended by 0. A line
// starting with '%' (SATLIB) ends the formula.
static Cnf read_cnf(const char* path) {
  FILE* fp = std::fopen(path, "rb");
  if (!fp) { std::fprintf(stderr, "cannot open %s\n", path); std::exit(1); }
  std::string text;
  char buf[1 << 16];
  size_t got;
  while ((got = std::fread(buf, 1, sizeof buf, fp)) > 0) text.append(buf, got);
  std::fclose(fp);
  Cnf f;
  long long header_vars = -1, header_clauses = -1;
  bool open_clause = false;
  size_t i = 0;
  const size_t len = text.size();
  auto bad = [&](const char* what) {
    std::fprintf(stderr, "%s: %s\n", path, what);
    std::exit(1);
  };
  while (i < len) {
    const char ch = text[i];
    if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n') { ++i; continue; }
    if (ch == 'c' || ch == 'p' || ch == '%') {
      const size_t eol = std::min(text.find('\n', i), len);
      if (ch == '%') break;
      if (ch == 'p') {
        if (header_vars >= 0) bad("second header line");
        const std::string line = text.substr(i, eol - i);
        if (std::sscanf(line.c_str(), "p cnf %lld %lld", &header_vars,
                        &header_clauses) != 2 ||
            header_vars < 1 || header_vars >= INT32_MAX || header_clauses < 0)
          bad("bad header line (expected \"p cnf VARS CLAUSES\")");
        f.nvars = int(header_vars);
      }
      i = eol;
      continue;
    }
    if (header_vars < 0) bad("clause before the \"p cnf\" header");
    char* endp = nullptr;
    const long long lit = std::strtoll(text.c_str() + i, &endp, 10);
    if (endp == text.c_str() + i) bad("unexpected character");
    i = size_t(endp - text.c_str());
    if (!open_clause) {
      f.clause_row.push_back(int(f.var.size()));
      open_clause = true;
    }
    if (lit == 0) { open_clause = false; continue; }
    const long long v = lit < 0 ? -lit : lit;
    if (v > header_vars) bad("literal out of range");
    if (f.var.size() >= size_t(INT32_MAX)) bad("too many literals");
    f.var.push_back(int(v - 1));
    f.neg.push_back(lit < 0 ? 1 : 0);
  }
  if (header_vars < 0) bad("no \"p cnf\" header");
  if (open_clause) bad("last clause not ended by 0");
  f.nclauses = int(f.clause_row.size());
  f.clause_row.push_back(int(f.var.size()));
  if (f.nclauses != header_clauses)
    std::fprintf(stderr, "note: %s: header says %lld clauses, read %d\n", path,
                 header_clauses, f.nclauses);
  build_occurrences(f);
  return f;
}

// The same iterations as the GPU, in the same order, on the host; returns
// the final surveys and the largest change of a survey in the last iteration.
static std::vector<float> cpu_sp(const Cnf& f, const std::vector<float>& eta0,
                                 int iters, float* last_change) {
  const int m = f.clause_row[f.nclauses];
  std::vector<float> eta = eta0, next(m), msg(m);
  float change = 0.0f;
  for (int t = 0; t < iters; ++t) {
    for (int v = 0; v < f.nvars; ++v) {
      const int start = f.occ_row[v], deg = f.occ_row[v + 1] - start;
      const SpProducts p = sp_var_products(f.occ_edge.data(), f.neg.data(),
                                           eta.data(), start, deg);
      for (int i = 0; i < deg; ++i) {
        const int e = f.occ_edge[start + i];
        msg[e] = sp_edge_message(f.neg[e], eta[e], p.pos, p.neg, p.zpos, p.zneg);
      }
    }
    for (int c = 0; c < f.nclauses; ++c) {
      const int begin = f.clause_row[c], end = f.clause_row[c + 1];
      for (int e = begin; e < end; ++e)
        next[e] = sp_clause_survey(msg.data(), begin, end, e);
    }
    change = 0.0f;
    for (int e = 0; e < m; ++e)
      change = std::max(change, std::fabs(next[e] - eta[e]));
    eta.swap(next);
  }
  *last_change = change;
  return eta;
}

static uint64_t fnv1a64(const void* data, size_t bytes) {
  const unsigned char* p = static_cast<const unsigned char*>(data);
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 0x100000001b3ull; }
  return h;
}

// ------------------------------------------------------------------- host --

// The load-balanced flat version (impl=flat-lb): the products per variable,
// then the messages a thread per edge.
#include "common/lb_sp.cuh"

enum class Impl { Flat, FlatLb, Cdp };

static const char* impl_name(Impl impl) {
  return impl == Impl::Flat ? "flat" : impl == Impl::FlatLb ? "flat-lb" : "cdp";
}

struct DeviceCnf {
  int nvars, nclauses, m;
  int *clause_row, *occ_row, *occ_edge;
  unsigned char* neg;
  float* eta[2];  // current / next surveys, swapped every iteration
  float* msg;
  int* var;          // flat-lb: the variable of each edge
  SpProducts* prod;  // flat-lb: the products of each variable
};

// One full SP run of iters iterations from eta0 (already in eta[0]); the
// result is in eta[iters % 2]. Returns elapsed ms.
static float run_sp(Impl impl, const DeviceCnf& d, int iters, cudaEvent_t t0,
                    cudaEvent_t t1) {
  const int threads = 256;
  const int vblocks = (d.nvars + threads - 1) / threads;
  const int parent_vblocks = (d.nvars + PARENT_BLOCK - 1) / PARENT_BLOCK;
  const int cblocks = (d.nclauses + threads - 1) / threads;
  CK(cudaEventRecord(t0));
  for (int t = 0; t < iters; ++t) {
    const float* cur = d.eta[t % 2];
    float* next = d.eta[(t + 1) % 2];
    if (impl == Impl::Flat)
      sp_vars_flat<<<vblocks, threads>>>(d.occ_row, d.occ_edge, d.neg, cur,
                                         d.msg, d.nvars);
    else if (impl == Impl::FlatLb)
      lb::sp_vars_launch(d.occ_row, d.occ_edge, d.var, d.neg, cur, d.prod, d.msg,
                         d.nvars, d.m);
    else
      sp_vars_parent<<<parent_vblocks, PARENT_BLOCK>>>(d.occ_row, d.occ_edge, d.neg,
                                                       cur, d.msg, d.nvars);
    CK(cudaGetLastError());
    // Stream order: starts after the parents and all their children.
    if (cblocks > 0)
      sp_clauses<<<cblocks, threads>>>(d.clause_row, d.msg, next, d.nclauses);
    CK(cudaGetLastError());
  }
  CK(cudaEventRecord(t1));
  CK(cudaEventSynchronize(t1));
  CK(cudaGetLastError());
  float ms = 0.f;
  CK(cudaEventElapsedTime(&ms, t0, t1));
  return ms;
}

static void usage(const char* prog) {
  std::fprintf(stderr,
               "usage: %s [--cnf PATH] [--vars N] [--clauses M] [--k K] "
               "[--seed X] [--iters T] [--reps R]\n", prog);
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
  long long nvars = 10000, nclauses = 210000;
  int k = 5, iters = 20, reps = 5;
  uint64_t seed = 1;
  std::string cnf;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (i + 1 >= argc) usage(argv[0]);
    const char* v = argv[++i];
    if (a == "--cnf") cnf = v;
    else if (a == "--vars") nvars = std::atoll(v);
    else if (a == "--clauses") nclauses = std::atoll(v);
    else if (a == "--k") k = std::atoi(v);
    else if (a == "--seed") seed = std::strtoull(v, nullptr, 10);
    else if (a == "--iters") iters = std::atoi(v);
    else if (a == "--reps") reps = std::atoi(v);
    else usage(argv[0]);
  }
  if (nvars < 1 || nvars >= INT32_MAX || nclauses < 1 || nclauses >= INT32_MAX ||
      k < 1 || k > nvars || iters < 1 || reps < 1)
    usage(argv[0]);

  std::string input;
  Cnf f;
  if (!cnf.empty()) {
    f = read_cnf(cnf.c_str());
    size_t slash = cnf.find_last_of('/');
    input = slash == std::string::npos ? cnf : cnf.substr(slash + 1);
  } else {
    f = make_random_ksat(int(nvars), int(nclauses), k, seed);
    input = "rand" + std::to_string(k) + "sat-v" + std::to_string(nvars) +
            "-c" + std::to_string(nclauses);
  }
  const int m = f.clause_row[f.nclauses];
  if (m == 0) { std::fprintf(stderr, "formula without literals\n"); return 1; }
  int max_occ = 0, max_len = 0;
  for (int v = 0; v < f.nvars; ++v)
    max_occ = std::max(max_occ, f.occ_row[v + 1] - f.occ_row[v]);
  for (int c = 0; c < f.nclauses; ++c)
    max_len = std::max(max_len, f.clause_row[c + 1] - f.clause_row[c]);

  // Initial surveys: odd multiples of 2^-24, uniform in (0, 1).
  std::vector<float> eta0(m);
  uint64_t es = seed ^ 0xD1B54A32D192ED03ull;
  for (int e = 0; e < m; ++e)
    eta0[e] = float((splitmix64(es) >> 40) | 1u) * 0x1.0p-24f;

  float last_change = 0.0f;
  const std::vector<float> ref = cpu_sp(f, eta0, iters, &last_change);
  double eta_sum = 0.0;
  float eta_max = 0.0f;
  for (float x : ref) { eta_sum += x; eta_max = std::max(eta_max, x); }

  cudaDeviceProp prop;
  CK(cudaSetDevice(0));
  CK(cudaGetDeviceProperties(&prop, 0));
  const size_t pending = std::min<size_t>(std::max<size_t>(2048, f.nvars), 1u << 20);
  CK(cudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, pending));

  DeviceCnf d;
  d.nvars = f.nvars;
  d.nclauses = f.nclauses;
  d.m = m;
  CK(cudaMalloc(&d.clause_row, sizeof(int) * (f.nclauses + 1)));
  CK(cudaMalloc(&d.occ_row, sizeof(int) * (f.nvars + 1)));
  CK(cudaMalloc(&d.occ_edge, sizeof(int) * m));
  CK(cudaMalloc(&d.neg, sizeof(unsigned char) * m));
  CK(cudaMalloc(&d.eta[0], sizeof(float) * m));
  CK(cudaMalloc(&d.eta[1], sizeof(float) * m));
  CK(cudaMalloc(&d.msg, sizeof(float) * m));
  CK(cudaMalloc(&d.var, sizeof(int) * m));
  CK(cudaMalloc(&d.prod, sizeof(SpProducts) * f.nvars));
  CK(cudaMemcpy(d.var, f.var.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.clause_row, f.clause_row.data(), sizeof(int) * (f.nclauses + 1),
                cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.occ_row, f.occ_row.data(), sizeof(int) * (f.nvars + 1),
                cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.occ_edge, f.occ_edge.data(), sizeof(int) * m, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(d.neg, f.neg.data(), sizeof(unsigned char) * m, cudaMemcpyHostToDevice));
  cudaEvent_t t0, t1;
  CK(cudaEventCreate(&t0));
  CK(cudaEventCreate(&t1));

  std::printf("info example=sp variables=%d clauses=%d literals=%d "
              "max_clause_len=%d max_occurrences=%d iters=%d eta_mean=%.6f "
              "eta_max=%.6f last_change=%.3g gpu=%s\n",
              f.nvars, f.nclauses, m, max_len, max_occ, iters, eta_sum / m,
              eta_max, last_change, prop.name);

  bool ok = true;
  std::vector<float> out(m);
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
      CK(cudaMemcpy(d.eta[0], eta0.data(), sizeof(float) * m, cudaMemcpyHostToDevice));
      CK(cudaMemset(d.eta[1], 0, sizeof(float) * m));
      CK(cudaMemset(d.msg, 0, sizeof(float) * m));
      CK(cudaDeviceSynchronize());
      float ms = run_sp(impl, d, iters, t0, t1);
      if (r > 0) times.push_back(ms);
      CK(cudaMemcpy(out.data(), d.eta[iters % 2], sizeof(float) * m,
                    cudaMemcpyDeviceToHost));
      if (std::memcmp(out.data(), ref.data(), sizeof(float) * m) != 0)
        verified = false;
    }
#ifdef DPOPT_STATS
    {
      unsigned long long requests = 0;
      cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
      printf("stats example=sp launch_requests=%llu\n", requests);
      if (dpopt_stats_report) dpopt_stats_report(stdout);
    }
#endif
    unsigned int failures = 0;
    CK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof(failures)));
    std::sort(times.begin(), times.end());
    const size_t nt = times.size();
    const double median =
        nt % 2 ? times[nt / 2] : 0.5 * (double(times[nt / 2 - 1]) + times[nt / 2]);
    const uint64_t sum = fnv1a64(out.data(), sizeof(float) * out.size());
    std::printf("result example=sp input=%s impl=%s time_ms=%.4f verified=%s "
                "checksum=%016llx launch_failures=%u\n",
                input.c_str(), impl_name(impl), median,
                verified ? "yes" : "no", (unsigned long long)sum, failures);
    if (!verified || failures != 0) ok = false;
  }

  CK(cudaEventDestroy(t0));
  CK(cudaEventDestroy(t1));
  CK(cudaFree(d.clause_row));
  CK(cudaFree(d.occ_row));
  CK(cudaFree(d.occ_edge));
  CK(cudaFree(d.var));
  CK(cudaFree(d.prod));
  CK(cudaFree(d.neg));
  CK(cudaFree(d.eta[0]));
  CK(cudaFree(d.eta[1]));
  CK(cudaFree(d.msg));
  return ok ? 0 : 1;
}
