#!/usr/bin/env bash
# Probe of the split serial version's scopes (src/barrier_split.rs, `Scope`): a callee run in place
# keeps its own names apart from the child's (the same `tid` in both, the child's `v` passed to a
# parameter `v`) and one callee runs in place twice (its `__shared__` array is one per block, its
# variables are each call's own). tests/corpus/ragged_quantize.cu in its 12 corpus variants and
# tests/fixtures/barrier_callees.cu, as gpu_check.sh runs them, and extra builds of
# ragged_quantize: every row serial (-DDPOPT_THRESHOLD=1024: every child has at most 256 threads),
# threshold and coarsening with every row serial, and the program with `const` on the variables the
# split keeps per thread (`const int result = red[0];`, `const int amax = block_max(...)`).
#
#   bash bench/probes/callee_scopes.sh prepare   # here: needs cargo; writes gpu-build/
#   bash bench/probes/callee_scopes.sh run       # on the GPU (carry gpu-build): $OUT/summary.md
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
  grep -E '^(ragged_quantize|barrier_callees) ' $b/jobs.txt > $b/scopes.txt
  cat >> $b/scopes.txt <<'JOBS'
ragged_quantize T all-serial ragged_quantize__T -DDPOPT_THRESHOLD=1024
ragged_quantize TC all-serial ragged_quantize__TC -DDPOPT_THRESHOLD=1024
ragged_quantize TCAb all-serial ragged_quantize__TCAb -DDPOPT_THRESHOLD=1024
ragged_quantize T const ragged_quantize_const__T -
ragged_quantize T const-all-serial ragged_quantize_const__T -DDPOPT_THRESHOLD=1024
JOBS
  # only the sources these jobs build travel
  mkdir -p $b/keep
  for src in $(awk '{print $4}' $b/scopes.txt | sort -u); do mv "$b/src/$src.cu" $b/keep/; done
  rm -rf $b/src && mv $b/keep $b/src
  wc -l < $b/scopes.txt
  ;;
run)
  JOBS=gpu-build/scopes.txt STATS=0 bash bench/gpu_check.sh run
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
