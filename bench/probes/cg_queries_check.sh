#!/usr/bin/env bash
# GPU check of block-group position queries (`cta.thread_rank()`, `cta.size()`, `cta.thread_index()`,
# `cta.group_index()`, `cta.group_dim()`, `cta.dim_threads()`, `cg::thread_rank(cta)`,
# `cg::group_size(cta)`), which every copy of a body now writes as the builtins they read
# (hazard::BlockQuery, transform/renderer.rs), one call:
#  - tests/corpus/region_histograms.cu (2-D 16x8 tiles over quadtree leaves, a helper taking the group
#    by reference that waits, shared atomics, a block reduction whose loop head reads `block.size()`)
#    as written and in its 12 corpus variants, and with every child serial (-DDPOPT_THRESHOLD above
#    every child's size) for T, TC and TCAb;
#  - the same program with the helper written inline (`inline` below), whose aggregated variants the
#    binary before this change accepted while its copies read the hardware's block index and size:
#    built from this binary, and (when OLD_DPOPT names a binary of that revision at prepare time) from
#    that binary as `before` configurations, which are expected to fail verification;
#  - the guide's reduce_sum with a loop bound from blockDim (`lanes`) and tile_splats' child written with
#    the 3D Gaussian splatting rasterizer's cooperative-groups queries (`cg`), in T, TC, Ab and all-serial.
#
#   bash bench/probes/cg_queries_check.sh prepare   # here: needs cargo; writes gpu-build/ (only what travels)
#   bash bench/probes/cg_queries_check.sh run       # on the GPU (carry gpu-build): $OUT/summary.md
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
prepare)
  bash bench/gpu_check.sh prepare > /dev/null
  b=gpu-build
  sed -e 's/^  clear_bins(block, bins);$/  for (unsigned int b = block.thread_rank(); b < BINS; b += block.num_threads()) bins[b] = 0;\n  block.sync();/' \
    tests/corpus/region_histograms.cu > $b/inline.cu
  grep -q clear_bins\(block $b/inline.cu && { echo "inline: the helper's call is still there" >&2; exit 1; }
  grep -E '^region_histograms ' $b/jobs.txt > $b/queries.txt
  for v in "T|threshold(128)" "Aw|consldt(warp)" "Ab|consldt(block)" "Am|consldt(multiblock, 8)" "Ag|consldt(grid)" "TCAb|threshold(128) coarsen(8) consldt(block)"; do
    name=${v%%|*} pragma=${v#*|}
    sed "s/^#pragma dp .*/#pragma dp $pragma/" $b/inline.cu > $b/tmp.cu
    target/release/dpopt transform $b/tmp.cu -o $b/src/region_histograms_inline__$name.cu
    echo "region_histograms $name inline region_histograms_inline__$name -" >> $b/queries.txt
    if [ -n "${OLD_DPOPT:-}" ] && "$OLD_DPOPT" transform $b/tmp.cu -o $b/src/region_histograms_before__$name.cu 2>/dev/null; then
      echo "region_histograms $name before region_histograms_before__$name -" >> $b/queries.txt
    fi
  done
  # The guide's reduce_sum with its loop bound from blockDim and a local sum (`lanes`): the binary before
  # accepted it under threshold and ran `g.thread_rank()` as the parent thread's; and the 3D Gaussian
  # splatting rasterizer's own spelling of tile_splats' child (`splats_cg`: block.group_index(),
  # block.thread_index(), block.thread_rank(), block.sync()).
  sed -e 's|for (int i = g.size() / 2; i > 0; i /= 2)|int acc = val;\n    for (int i = blockDim.x / 2; i > 0; i /= 2)|' \
      -e 's|temp\[lane\] = val;|temp[lane] = acc;|' -e 's|if(lane<i) val += temp|if(lane<i) acc += temp|' \
      -e 's|return val; // note|return acc; // note|' tests/corpus/guide_block_sums.cu > $b/lanes.cu
  grep -q 'acc += temp' $b/lanes.cu || { echo "lanes: not rewritten" >&2; exit 1; }
  python3 - tests/corpus/tile_splats.cu $b/splats_cg.cu <<'PY'
import sys
s = open(sys.argv[1]).read()
head, rest = s.split("__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)", 1)
child, tail = rest.split("__global__ void render_batch", 1)
for a, b in [("{\n", "{\n  auto block = cg::this_thread_block();\n"),
             ("blockIdx.x * BLOCK_X, blockIdx.y * BLOCK_Y", "block.group_index().x * BLOCK_X, block.group_index().y * BLOCK_Y"),
             ("pix_min.x + threadIdx.x, pix_min.y + threadIdx.y", "pix_min.x + block.thread_index().x, pix_min.y + block.thread_index().y"),
             ("ranges[blockIdx.y * horizontal_blocks + blockIdx.x]", "ranges[block.group_index().y * horizontal_blocks + block.group_index().x]"),
             ("(threadIdx.y * BLOCK_X + threadIdx.x)", "block.thread_rank()"),
             ("collected[threadIdx.y * BLOCK_X + threadIdx.x]", "collected[block.thread_rank()]"),
             ("__syncthreads();", "block.sync();")]:
    assert a in child, a
    child = child.replace(a, b, 1 if a == "{\n" else -1)
head = head.replace("#include <cuda_runtime.h>", "#include <cooperative_groups.h>\n#include <cuda_runtime.h>\nnamespace cg = cooperative_groups;", 1)
open(sys.argv[2], "w").write(head + "__global__ void __launch_bounds__(BLOCK_X * BLOCK_Y)" + child + "__global__ void render_batch" + tail)
PY
  for v in "T|threshold(128)" "TC|threshold(128) coarsen(8)" "Ab|consldt(block)"; do
    name=${v%%|*} pragma=${v#*|}
    sed "s/^#pragma dp .*/#pragma dp $pragma/" $b/lanes.cu > $b/tmp.cu
    target/release/dpopt transform $b/tmp.cu -o $b/src/guide_block_sums_lanes__$name.cu
    echo "guide_block_sums $name lanes guide_block_sums_lanes__$name -" >> $b/queries.txt
    if [ -n "${OLD_DPOPT:-}" ] && "$OLD_DPOPT" transform $b/tmp.cu -o $b/src/guide_block_sums_before__$name.cu 2>/dev/null; then
      echo "guide_block_sums $name before guide_block_sums_before__$name -" >> $b/queries.txt
    fi
    sed "s/^#pragma dp .*/#pragma dp $pragma/" $b/splats_cg.cu > $b/tmp.cu
    target/release/dpopt transform $b/tmp.cu -o $b/src/tile_splats_cg__$name.cu
    echo "tile_splats $name cg tile_splats_cg__$name -" >> $b/queries.txt
  done
  grep -E '^(guide_block_sums|tile_splats) orig ' $b/jobs.txt >> $b/queries.txt
  echo "tile_splats T cg-all-serial tile_splats_cg__T -DDPOPT_THRESHOLD=16777216" >> $b/queries.txt
  echo "guide_block_sums T lanes-all-serial guide_block_sums_lanes__T -DDPOPT_THRESHOLD=16777216" >> $b/queries.txt
  cat >> $b/queries.txt <<'JOBS'
region_histograms T all-serial region_histograms__T -DDPOPT_THRESHOLD=1048576
region_histograms TC all-serial region_histograms__TC -DDPOPT_THRESHOLD=1048576
region_histograms TCAb all-serial region_histograms__TCAb -DDPOPT_THRESHOLD=1048576
JOBS
  rm -f $b/tmp.cu $b/inline.cu $b/lanes.cu $b/splats_cg.cu
  bash bench/gpu_check.sh keep $b/queries.txt
  ;;
run)
  JOBS=gpu-build/queries.txt STATS=0 bash bench/gpu_check.sh run
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
