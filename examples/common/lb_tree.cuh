// lb_tree.cuh - the load-balanced flat tree kernels (impl=flat-lb of
// tree_heights.cu and tree_descendants.cu).
//
// The other versions work top-down (every node adds itself to each of its
// ancestors with atomics: O(nodes x depth) atomics, all nodes hitting the
// root's counters), because a CDP parent cannot wait for its children. A
// flat program can: one launch per depth level, deepest first, in one stream
// (no host synchronization between them), and each node combines its
// children, which the previous launch finished:
//   desc[v]   = sum over children c of (desc[c] + 1)
//   height[v] = 1 + max over children c of height[c]   (1 for a leaf)
//   level[v]  = d
// The children of v are the contiguous range [child_start[v],
// child_start[v] + child_count[v]) (BFS order), so lb::twc reduces them with
// a thread (leaves, < 32 children), a warp (32..255) or the whole block.
// No atomics; every node's values are stored exactly once.
#pragma once

#include <cuda_runtime.h>

#include <vector>

#include "lb_twc.cuh"

#define LB_TREE_BLOCK 256

namespace lb {

struct TreeCombine {
  __device__ uint2 operator()(uint2 a, uint2 b) const {
    return make_uint2(a.x + b.x, a.y > b.y ? a.y : b.y);
  }
};

// Nodes [first, first + count) of depth d. height and level may be null
// (tree_descendants computes desc only).
__global__ void __launch_bounds__(LB_TREE_BLOCK)
    tree_level(const int* child_start, const int* child_count, unsigned int* desc,
               unsigned int* height, int* level, int first, int count, int d) {
  const int i = blockIdx.x * LB_TREE_BLOCK + threadIdx.x;
  const bool valid = i < count;
  const int v = first + i;
  const int b = valid ? child_start[v] : 0;
  const int e = valid ? b + child_count[v] : 0;
  twc<LB_TREE_BLOCK, true, uint2>(
      valid, v, 0, b, e, make_uint2(0u, 0u),
      [=](int c, int, int) {
        return make_uint2(desc[c] + 1u, height ? height[c] : 0u);
      },
      TreeCombine(),
      [=](int node, int, uint2 r) {
        desc[node] = r.x;
        if (height) height[node] = r.y + 1u;
        if (level) level[node] = d;
      });
}

// level_start: BFS order, depth d = [level_start[d], level_start[d + 1]).
inline void tree_launch(const std::vector<int>& level_start, int max_depth,
                        const int* child_start, const int* child_count,
                        unsigned int* desc, unsigned int* height, int* level) {
  for (int d = max_depth; d >= 0; --d) {
    const int first = level_start[d], count = level_start[d + 1] - first;
    if (count > 0)
      tree_level<<<(count + LB_TREE_BLOCK - 1) / LB_TREE_BLOCK, LB_TREE_BLOCK>>>(
          child_start, child_count, desc, height, level, first, count, d);
  }
}

}  // namespace lb
