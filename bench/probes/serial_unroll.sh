#!/usr/bin/env bash
# Probe (GPU machine, after `bench/gpu_check.sh prepare` here; carry gpu-build): A/B of the serial version's loop
# over the child's threads, `#pragma unroll 1` (new) against the compiler's unrolling (old: the pragma lines removed
# from the same file), for the thresholded (TC t128 c8) and floor (TCF t32 c1) builds of the suite's examples.
# Run it on a gpu-build prepared with `#pragma unroll 1` before the serial loops of templates/definitions.cu.tera
# (bench/results/2026-11-24-h100-serial-unroll.csv; not adopted, so the shipped template has none). The pairs
# are built and timed by bench/probes/ab_generated.sh: $OUT/ab.csv and $OUT/ab.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
rm -rf gpu-ab/unroll && mkdir -p gpu-ab/unroll/old gpu-ab/unroll/new
for ex in ${EXAMPLES:-bfs sssp bezier spmv mstf mstv sp tree_heights tree_descendants}; do
  for v in TC TCF; do
    f=gpu-build/src/${ex}__$v.cu
    [ -f "$f" ] || continue
    cp "$f" gpu-ab/unroll/new/
    sed '/^#pragma unroll 1$/d' "$f" > "gpu-ab/unroll/old/${ex}__$v.cu"
  done
done
A=gpu-ab/unroll/old B=gpu-ab/unroll/new exec bash bench/probes/ab_generated.sh
