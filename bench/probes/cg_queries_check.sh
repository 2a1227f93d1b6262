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
#    that binary as `before` configurations, which are expected to fail verification.
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
  cat >> $b/queries.txt <<'JOBS'
region_histograms T all-serial region_histograms__T -DDPOPT_THRESHOLD=1048576
region_histograms TC all-serial region_histograms__TC -DDPOPT_THRESHOLD=1048576
region_histograms TCAb all-serial region_histograms__TCAb -DDPOPT_THRESHOLD=1048576
JOBS
  rm -f $b/tmp.cu $b/inline.cu
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
