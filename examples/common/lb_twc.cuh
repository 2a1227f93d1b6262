// lb_twc.cuh - thread/warp/block cooperative processing of irregular ranges
// (the "TWC" load balancing of Merrill, Garland and Grimshaw's BFS, also in
// Gunrock): the building block of the load-balanced flat versions
// (impl=flat-lb) of the examples. No dynamic parallelism.
//
// Every thread of a block of BLOCK threads holds at most one item with a
// range [begin, end) of work (the edges of a vertex, the nonzeros of a row,
// the points of a curve). lb::twc processes all of them in three phases:
//   block : items with at least BLOCK elements, one at a time, by the whole
//           block (the owner publishes its range in shared memory);
//   warp  : items with 32 .. BLOCK-1 elements, one at a time per warp, by
//           its 32 lanes (the leader broadcasts its range with shuffles);
//   thread: items with fewer than 32 elements, by their own thread
//           (32: LB_TWC_WARP_MIN).
// So a hub's edges are spread over the block and a leaf's stay with one
// thread, which walks fewer than 32 elements alone.
//
// Contract: every thread of the block calls lb::twc (blockDim.x == BLOCK,
// all warps converged); load(e, item, aux) is called exactly once for every
// element e of every valid item, by some thread of the block; with REDUCE,
// finish(item, aux, r) is called exactly once per valid item (also for an
// empty range: r = identity), where r is op over all load results of the
// item (op associative and commutative: every use here is an exact integer
// sum, min or max, so the result does not depend on the order).
#pragma once

#include <cuda_runtime.h>

#include <cstdlib>

// Items with at least this many elements (and fewer than BLOCK) go to a
// warp; smaller ones stay with their thread. An experiment knob
// (bench/lb_check.sh exp: 128 mimics dpopt's threshold(128) serialization).
#ifndef LB_TWC_WARP_MIN
#define LB_TWC_WARP_MIN 32
#endif

namespace lb {

constexpr unsigned kFullMask = 0xffffffffu;

template <typename T>
__device__ __forceinline__ T shfl_xor(T v, int m) {
  return __shfl_xor_sync(kFullMask, v, m);
}
__device__ __forceinline__ uint2 shfl_xor(uint2 v, int m) {
  return make_uint2(__shfl_xor_sync(kFullMask, v.x, m),
                    __shfl_xor_sync(kFullMask, v.y, m));
}

// op over the 32 lanes of a converged warp (every lane gets the result).
template <typename T, typename Op>
__device__ __forceinline__ T warp_reduce(T v, Op op) {
  for (int m = 16; m > 0; m >>= 1) v = op(v, shfl_xor(v, m));
  return v;
}

// Finish for a for-each (REDUCE == false): never called.
struct NoFinish {
  template <typename T>
  __device__ void operator()(int, int, T) const {}
};
struct Plus {
  template <typename T>
  __device__ T operator()(T a, T b) const { return a + b; }
};

template <int BLOCK, bool REDUCE, typename T, typename Load, typename Op,
          typename Finish>
__device__ void twc(bool valid, int item, int aux, int begin, int end,
                    T identity, Load load, Op op, Finish finish) {
  static_assert(BLOCK % 32 == 0 && BLOCK >= 64 && BLOCK <= 1024, "block size");
  __shared__ int s_owner, s_item, s_aux, s_begin, s_end;
  __shared__ T s_part[BLOCK / 32];
  const int len = valid ? end - begin : 0;
  const int lane = threadIdx.x & 31;

  // Block phase: the block takes the large items one by one.
  bool big = valid && len >= BLOCK;
  for (;;) {
    if (threadIdx.x == 0) s_owner = -1;
    __syncthreads();
    if (big) s_owner = threadIdx.x;  // any one of the claimants wins
    __syncthreads();
    const int owner = s_owner;
    if (owner < 0) break;  // block-uniform
    if (owner == int(threadIdx.x)) {
      s_item = item; s_aux = aux; s_begin = begin; s_end = end;
      big = false;
    }
    __syncthreads();
    const int it = s_item, ax = s_aux, b = s_begin, en = s_end;
    T acc = identity;
    for (int e = b + int(threadIdx.x); e < en; e += BLOCK) {
      T v = load(e, it, ax);
      if constexpr (REDUCE) acc = op(acc, v);
    }
    if constexpr (REDUCE) {
      acc = warp_reduce(acc, op);
      if (lane == 0) s_part[threadIdx.x >> 5] = acc;
      __syncthreads();
      if (threadIdx.x < 32) {
        T v = threadIdx.x < BLOCK / 32 ? s_part[threadIdx.x] : identity;
        v = warp_reduce(v, op);
        if (threadIdx.x == 0) finish(it, ax, v);
      }
    }
    __syncthreads();  // the shared range is rewritten by the next round
  }

  // Warp phase: each warp takes its medium items one by one.
  bool mid = valid && len >= LB_TWC_WARP_MIN && len < BLOCK;
  for (unsigned m = __ballot_sync(kFullMask, mid); m != 0;
       m = __ballot_sync(kFullMask, mid)) {
    const int leader = __ffs(m) - 1;
    const int it = __shfl_sync(kFullMask, item, leader);
    const int ax = __shfl_sync(kFullMask, aux, leader);
    const int b = __shfl_sync(kFullMask, begin, leader);
    const int en = __shfl_sync(kFullMask, end, leader);
    if (lane == leader) mid = false;
    T acc = identity;
    for (int e = b + lane; e < en; e += 32) {
      T v = load(e, it, ax);
      if constexpr (REDUCE) acc = op(acc, v);
    }
    if constexpr (REDUCE) {
      acc = warp_reduce(acc, op);
      if (lane == 0) finish(it, ax, acc);
    }
  }

  // Thread phase: small items (fewer than LB_TWC_WARP_MIN elements, also
  // empty ones), except those the block took.
  if (valid && len < LB_TWC_WARP_MIN && len < BLOCK) {
    T acc = identity;
    for (int e = begin; e < end; ++e) {
      T v = load(e, item, aux);
      if constexpr (REDUCE) acc = op(acc, v);
    }
    if constexpr (REDUCE) finish(item, aux, acc);
  }
}

// How many of an example's implementations to run: all of them, or, with
// DPOPT_FLAT_ONLY=1 in the environment (bench/lb_check.sh), all but the
// last one, the CDP program (flat and flat-lb only).
inline int impls_to_run(int all) {
  const char* s = std::getenv("DPOPT_FLAT_ONLY");
  return s != nullptr && s[0] == '1' ? all - 1 : all;
}

// First index i in [lo, hi) with a[i] > x (a non-decreasing), or hi.
__device__ __forceinline__ int upper_bound(const int* a, int lo, int hi, int x) {
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (a[mid] <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace lb
