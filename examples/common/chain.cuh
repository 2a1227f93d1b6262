// chain.cuh - what the producer-consumer chain examples (stream_compaction.cu,
// partition.cu; KLAP's promotion benchmarks, paper 003 Table I) share: the
// chunk each single-block step handles, a block-wide exclusive scan, the
// flat version's scan of the per-chunk counts, and the host harness (flags,
// timing, the nesting limit of plain CDP, the result line).
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

// One step: a block of CHAIN_THREADS threads, CHAIN_ITEMS consecutive
// elements each (the paper's 512 threads; its datasets are multiples of
// 8,192 elements: small 16,384 = 2 steps, medium 204,800 = 25 steps, large
// 25,174,016 = 3,073 steps).
#ifndef CHAIN_THREADS
#define CHAIN_THREADS 512
#endif
#define CHAIN_ITEMS 16
#define CHAIN_CHUNK (CHAIN_THREADS * CHAIN_ITEMS)

// Launches nested below a host launch that the device runtime allows (the
// CUDA programming guide's nesting depth, paper 003's 25 steps): a plain CDP
// chain of more steps than this plus one cannot run (its launches fail with
// cudaErrorLaunchMaxDepthExceeded).
#define CHAIN_CDP_NESTING_LIMIT 24

#define CUDA_CHECK(call)                                                       \
    do {                                                                       \
        cudaError_t err_ = (call);                                             \
        if (err_ != cudaSuccess) {                                             \
            fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #call, __FILE__,   \
                    __LINE__, cudaGetErrorString(err_));                       \
            exit(1);                                                           \
        }                                                                      \
    } while (0)

// Number of failed device-side launches (checked by the host), and of those
// that failed because the chain nests deeper than the device runtime allows.
__device__ unsigned int g_launch_failures = 0;
__device__ unsigned int g_depth_failures = 0;
// The error of the first failed launch (a cudaError_t; 0: none).
__device__ unsigned int g_first_launch_error = 0;

// Count the launch just made when it failed.
__device__ void chain_count_failure()
{
    const cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess) return;
    atomicAdd(&g_launch_failures, 1u);
    atomicCAS(&g_first_launch_error, 0u, (unsigned)e);
    if (e == cudaErrorLaunchMaxDepthExceeded) atomicAdd(&g_depth_failures, 1u);
}
#ifdef DPOPT_STATS
// Launch statements executed: the device-side launches of the original
// program. dpopt's generated code defines the report functions (-DDPOPT_STATS).
__device__ unsigned long long g_launch_requests = 0;
extern "C" void dpopt_promote_report(FILE*) __attribute__((weak));
extern "C" void dpopt_promote_reset(void) __attribute__((weak));
#endif

// Exclusive scan of one value per thread over the block (any block size up
// to 1,024 threads, all threads taking part); *total gets the sum.
__device__ int chain_block_scan(int value, int* total)
{
    __shared__ int warp_sums[32];
    const unsigned lane = threadIdx.x % 32u, warp = threadIdx.x / 32u;
    const unsigned warps = (blockDim.x + 31u) / 32u;
    int inclusive = value;
    for (int d = 1; d < 32; d *= 2) {
        const int other = __shfl_up_sync(0xffffffffu, inclusive, d);
        if (lane >= (unsigned)d) inclusive += other;
    }
    if (lane == 31u || threadIdx.x == blockDim.x - 1u) warp_sums[warp] = inclusive;
    __syncthreads();
    if (warp == 0u) {
        int s = lane < warps ? warp_sums[lane] : 0;
        for (int d = 1; d < 32; d *= 2) {
            const int other = __shfl_up_sync(0xffffffffu, s, d);
            if (lane >= (unsigned)d) s += other;
        }
        if (lane < warps) warp_sums[lane] = s;  // inclusive over warps
    }
    __syncthreads();
    const int before = (warp == 0u ? 0 : warp_sums[warp - 1u]) + inclusive - value;
    *total = warp_sums[warps - 1u];
    __syncthreads();  // warp_sums is read before a next scan writes it
    return before;
}

// Flat version: exclusive scan of the per-chunk counts (one block, in tiles
// of its threads with a running carry); total[0] gets the sum.
__global__ void chain_scan_counts(const int* counts, int* offsets, int chunks, int* total)
{
    int carry = 0;
    for (int base = 0; base < chunks; base += blockDim.x) {
        const int i = base + threadIdx.x;
        const int v = i < chunks ? counts[i] : 0;
        int sum;
        const int before = chain_block_scan(v, &sum);
        if (i < chunks) offsets[i] = carry + before;
        carry += sum;
    }
    if (threadIdx.x == 0) *total = carry;
}

static uint64_t chain_fnv1a(uint64_t h, const void* data, size_t bytes)
{
    const unsigned char* p = (const unsigned char*)data;
    for (size_t i = 0; i < bytes; ++i) { h ^= p[i]; h *= 1099511628211ull; }
    return h;
}

// Flags: --n N (elements)  --reps R  --seed S
struct ChainArgs {
    long long n = 204800;
    int reps = 5;
    uint64_t seed = 12345;
};

static ChainArgs chain_args(int argc, char** argv)
{
    ChainArgs a;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (i + 1 >= argc) { fprintf(stderr, "missing value for %s\n", arg.c_str()); exit(1); }
        const char* val = argv[++i];
        if (arg == "--n") a.n = atoll(val);
        else if (arg == "--reps") a.reps = atoi(val);
        else if (arg == "--seed") a.seed = strtoull(val, nullptr, 10);
        else { fprintf(stderr, "unknown option %s\n", arg.c_str()); exit(1); }
    }
    if (a.n < 1 || a.n > (1ll << 30) || a.reps < 1) {
        fprintf(stderr, "invalid arguments (1 <= n <= 2^30, reps >= 1)\n");
        exit(1);
    }
    return a;
}

// Steps of the chain for n elements.
static int chain_steps(long long n) { return (int)((n + CHAIN_CHUNK - 1) / CHAIN_CHUNK); }

// The verdict of one implementation: `yes`, `no`, or `depth-limit` when
// launches failed because the chain nests deeper than the device runtime
// allows (what plain CDP does on a long chain; promotion with aggregation
// must not): they failed with cudaErrorLaunchMaxDepthExceeded, or, on a
// chain that nests past the limit, with another launch error (on an H100
// with CUDA 13.0 the runtime reports such a chain's failures otherwise).
static const char* chain_verdict(bool verified, unsigned depth_failures, unsigned failures, bool beyond_limit)
{
    if (verified) return "yes";
    return depth_failures > 0 || (failures > 0 && beyond_limit) ? "depth-limit" : "no";
}

// Median of the timed runs.
static double chain_median(std::vector<float> times)
{
    std::sort(times.begin(), times.end());
    const size_t m = times.size();
    return m % 2 ? times[m / 2] : 0.5 * (times[m / 2 - 1] + times[m / 2]);
}

// The throughput of the paper's Fig. 10, as elements per second.
static double chain_throughput(long long n, double ms) { return ms > 0 ? (double)n / (ms * 1e-3) : 0.0; }

// Run the flat (impl 0) and the CDP version (impl 1) reps times each after
// an untimed warm-up: prepare() resets the inputs, run(impl) runs one
// version and waits for it, check(impl, rep, &checksum) verifies the
// result. Prints a result line per version; false when one was wrong (a
// chain deeper than CDP nests that failed its launches is reported as
// verified=depth-limit, what plain CDP must do, not an error).
template <typename Prepare, typename Run, typename Check>
static bool chain_run(const char* example, const ChainArgs& args, Prepare prepare, Run run, Check check)
{
    cudaEvent_t ev_start, ev_stop;
    CUDA_CHECK(cudaEventCreate(&ev_start));
    CUDA_CHECK(cudaEventCreate(&ev_stop));
    bool all_ok = true;
    for (int impl = 0; impl < 2; ++impl) {
        const char* name = impl == 0 ? "flat" : "cdp";
        unsigned zero = 0;
        CUDA_CHECK(cudaMemcpyToSymbol(g_launch_failures, &zero, sizeof zero));
        CUDA_CHECK(cudaMemcpyToSymbol(g_depth_failures, &zero, sizeof zero));
        CUDA_CHECK(cudaMemcpyToSymbol(g_first_launch_error, &zero, sizeof zero));
        std::vector<float> times;
        bool verified = true;
        uint64_t checksum = 0;
        for (int r = 0; r <= args.reps; ++r) {  // r == 0 is the untimed warm-up
#ifdef DPOPT_STATS
            if (r == args.reps) {  // count the launches of the last run only
                const unsigned long long zero64 = 0;
                cudaMemcpyToSymbol(g_launch_requests, &zero64, sizeof zero64);
                if (dpopt_promote_reset) dpopt_promote_reset();
            }
#endif
            prepare();
            CUDA_CHECK(cudaDeviceSynchronize());
            CUDA_CHECK(cudaEventRecord(ev_start));
            run(impl);
            CUDA_CHECK(cudaEventRecord(ev_stop));
            CUDA_CHECK(cudaEventSynchronize(ev_stop));
            float ms = 0.f;
            CUDA_CHECK(cudaEventElapsedTime(&ms, ev_start, ev_stop));
            if (r > 0) times.push_back(ms);
            if (!check(impl, r, &checksum)) verified = false;
        }
#ifdef DPOPT_STATS
        if (impl == 1) {
            unsigned long long requests = 0;
            cudaMemcpyFromSymbol(&requests, g_launch_requests, sizeof requests);
            printf("stats example=%s launch_requests=%llu\n", example, requests);
            if (dpopt_promote_report) dpopt_promote_report(stdout);
        }
#endif
        unsigned failures = 0, depth = 0, first_error = 0;
        CUDA_CHECK(cudaMemcpyFromSymbol(&failures, g_launch_failures, sizeof failures));
        CUDA_CHECK(cudaMemcpyFromSymbol(&depth, g_depth_failures, sizeof depth));
        CUDA_CHECK(cudaMemcpyFromSymbol(&first_error, g_first_launch_error, sizeof first_error));
        const double median = chain_median(times);
        const bool beyond_limit = chain_steps(args.n) - 1 > CHAIN_CDP_NESTING_LIMIT;
        const char* verdict = chain_verdict(verified, depth, failures, beyond_limit);
        if (failures > 0)
            printf("info example=%s impl=%s: %u launches failed, the first with %s\n", example, name, failures,
                   cudaGetErrorName((cudaError_t)first_error));
        if (depth > 0)
            printf("info example=%s impl=%s: %u launches failed with cudaErrorLaunchMaxDepthExceeded: the chain "
                   "nests deeper than the device runtime allows\n",
                   example, name, depth);
        printf("result example=%s input=n%lld impl=%s time_ms=%.4f elements_per_s=%.4e verified=%s "
               "checksum=%016llx launch_failures=%u depth_failures=%u\n",
               example, args.n, name, median, chain_throughput(args.n, median), verdict,
               (unsigned long long)checksum, failures, depth);
        if (std::string(verdict) == "no") all_ok = false;
    }
    CUDA_CHECK(cudaEventDestroy(ev_start));
    CUDA_CHECK(cudaEventDestroy(ev_stop));
    return all_ok;
}

// The info lines of a chain example: its size, steps and nesting.
static void chain_info(const char* example, long long n, const char* what, size_t count)
{
    const int steps = chain_steps(n);
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    printf("info example=%s n=%lld steps=%d nesting=%d cdp_nesting_limit=%d %s=%zu gpu=%s\n", example, n, steps,
           steps - 1, CHAIN_CDP_NESTING_LIMIT, what, count, prop.name);
    if (steps - 1 > CHAIN_CDP_NESTING_LIMIT)
        printf("info a plain CDP chain of %d steps nests %d launches, more than the device runtime's %d: its "
               "launches fail (verified=depth-limit); promotion with aggregation runs it\n",
               steps, steps - 1, CHAIN_CDP_NESTING_LIMIT);
}
