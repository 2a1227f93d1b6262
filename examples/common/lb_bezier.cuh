// lb_bezier.cuh - the load-balanced flat Bezier tessellation (impl=flat-lb of
// bezier.cu): one launch; each thread computes its line's nTess (exactly as
// the other versions: compute_ntess) and stores it, then the points are
// written by lb::twc: a thread per line of < 32 points, a warp per line of
// 32..127 points, the whole block per line of >= 128 points, so consecutive
// threads store consecutive points (coalesced) and no thread writes more than
// 31 points. Needs BezierLine, compute_ntess and bezier_point (bezier.cu).
#pragma once

#include <cuda_runtime.h>

#include "lb_twc.cuh"

#define LB_BEZIER_BLOCK 128

namespace lb {

__global__ void __launch_bounds__(LB_BEZIER_BLOCK)
    bezier_twc(const BezierLine* lines, int nLines, float scale, int max_tess,
               int* tess, float2* vertices) {
  const int lidx = blockIdx.x * LB_BEZIER_BLOCK + threadIdx.x;
  const bool valid = lidx < nLines;
  int nTess = 0;
  if (valid) {
    nTess = compute_ntess(lines[lidx], scale, max_tess);
    tess[lidx] = nTess;
  }
  twc<LB_BEZIER_BLOCK, false, int>(
      valid, lidx, nTess, 0, nTess, 0,
      [=](int j, int line, int n) {
        const BezierLine l = lines[line];
        vertices[(size_t)line * max_tess + j] = bezier_point(l, j / (float)(n - 1));
        return 0;
      },
      Plus(), NoFinish());
}

inline void bezier_launch(const BezierLine* lines, int nLines, float scale,
                          int max_tess, int* tess, float2* vertices) {
  const int blocks = (nLines + LB_BEZIER_BLOCK - 1) / LB_BEZIER_BLOCK;
  bezier_twc<<<blocks, LB_BEZIER_BLOCK>>>(lines, nLines, scale, max_tess, tess, vertices);
}

}  // namespace lb
