#!/usr/bin/env bash
# GPU check of the split serial version's newer forms (src/barrier_split.rs), one call:
#  - scopes: a callee run in place keeps its own names apart from the child's (the same `tid` in
#    both, the child's `v` passed to a parameter `v`), one callee runs in place twice (its
#    `__shared__` array one per block, its variables each call's own): tests/corpus/ragged_quantize.cu;
#    tests/fixtures/barrier_callees.cu (its callee phases no longer declare the child's `x0`, `y0`);
#  - locals nothing assigns that a head reads, computed once per block (cuda-samples' matrixMul tile
#    loop, a template child with a `dim3` block): tests/corpus/grouped_gemm_s8.cu;
#  - a uniform `break` of a barrier loop between two barriers, run once per block (Rodinia's
#    pathfinder pyramid): tests/corpus/pyramid_paths.cu;
#  - a tiled rasterizer's round loop (tests/corpus/tile_splats.cu): the tile's range read once per
#    block from a `const` parameter, a block vote's local deciding a `break`, a kept
#    `int acc[C] = {0};` copied from a variable of its own;
#  - a shared scalar passed by value to a function without atomics: tests/fixtures/barrier_then_return.cu
#    (its T variants were refused before).
# The corpus programs run in their 12 corpus variants, the fixtures as gpu_check.sh runs them, and
# extra builds: every child serial (-DDPOPT_THRESHOLD=1024 or more: every child of ragged_quantize
# has at most 256 threads, of grouped_gemm_s8 at most 144 x 64, of pyramid_paths 58 x 64, of tile_splats 1,024 x 64), threshold and coarsening with every
# child serial, and ragged_quantize with `const` on the variables the split keeps per thread
# (`const int result = red[0];`, `const int amax = block_max(...)`).
#
#   bash bench/probes/split_check.sh prepare   # here: needs cargo; writes gpu-build/ (only what travels)
#   bash bench/probes/split_check.sh run       # on the GPU (carry gpu-build): $OUT/summary.md
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
prepare)
  bash bench/gpu_check.sh prepare > /dev/null
  b=gpu-build
  sed -e 's/  int result = red\[0\];/  const int result = red[0];/' \
      -e 's/  int amax = block_max/  const int amax = block_max/' \
      -e 's/  int qsum = block_sum/  const int qsum = block_sum/' \
      -e 's/^#pragma dp .*/#pragma dp threshold(128)/' tests/corpus/ragged_quantize.cu > $b/tmp.cu
  target/release/dpopt transform $b/tmp.cu -o $b/src/ragged_quantize_const__T.cu
  sed 's/^#pragma dp .*/#pragma dp threshold(128) coarsen(4)/' tests/fixtures/barrier_then_return.cu > $b/tmp.cu
  target/release/dpopt transform $b/tmp.cu -o $b/src/barrier_then_return_TC__dp.cu
  grep -E '^(ragged_quantize|grouped_gemm_s8|pyramid_paths|tile_splats|barrier_callees|barrier_then_return) ' $b/jobs.txt > $b/scopes.txt
  cat >> $b/scopes.txt <<'JOBS'
ragged_quantize T all-serial ragged_quantize__T -DDPOPT_THRESHOLD=1024
ragged_quantize TC all-serial ragged_quantize__TC -DDPOPT_THRESHOLD=1024
ragged_quantize TCAb all-serial ragged_quantize__TCAb -DDPOPT_THRESHOLD=1024
ragged_quantize T const ragged_quantize_const__T -
ragged_quantize T const-all-serial ragged_quantize_const__T -DDPOPT_THRESHOLD=1024
barrier_then_return TC t128c4 barrier_then_return_TC__dp -
barrier_then_return TC all-serial barrier_then_return_TC__dp -DDPOPT_THRESHOLD=1048576
grouped_gemm_s8 T all-serial grouped_gemm_s8__T -DDPOPT_THRESHOLD=16777216
grouped_gemm_s8 TC all-serial grouped_gemm_s8__TC -DDPOPT_THRESHOLD=16777216
grouped_gemm_s8 TCAg all-serial grouped_gemm_s8__TCAg -DDPOPT_THRESHOLD=16777216
pyramid_paths T all-serial pyramid_paths__T -DDPOPT_THRESHOLD=16777216
pyramid_paths TCAb all-serial pyramid_paths__TCAb -DDPOPT_THRESHOLD=16777216
tile_splats T all-serial tile_splats__T -DDPOPT_THRESHOLD=16777216
tile_splats TCAw all-serial tile_splats__TCAw -DDPOPT_THRESHOLD=16777216
JOBS
  bash bench/gpu_check.sh keep $b/scopes.txt
  ;;
run)
  JOBS=gpu-build/scopes.txt STATS=0 bash bench/gpu_check.sh run
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
