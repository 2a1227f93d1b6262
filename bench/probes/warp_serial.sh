#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-probe, made here by `bench/probes/warp_serial.sh prepare`): a warp-cooperative serial
# version. SSSP's floor at threshold 128 (road-grid children all below it) as generated (each parent thread runs its
# child's threads in turn) against the same file with the below-threshold call replaced by a hand-written version in
# which the lanes that reach the site together pool their children's threads (a warp scan, each lane finding its
# thread's child by a 5-step shuffle search and fetching its arguments by shuffles); and the floor at threshold 1
# (every child recorded, run by its block). Road grid and R-MAT, alternating rounds.
set -u
cd "$(dirname "$0")/../.."
W=gpu-probe
if [ "${1:-}" = prepare ]; then
  rm -rf $W && mkdir -p $W && cp -r examples/common $W/common
  for t in 1 128; do
    awk -v p="#pragma dp threshold($t) floor" '/^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; next } { print }' \
      examples/sssp.cu > $W/sssp_in.cu
    target/release/dpopt transform $W/sssp_in.cu -o $W/sssp_t$t.cu && rm $W/sssp_in.cu
  done
  cp bench/probes/warp_serial.cuh $W/
  perl -0pe 's|(/\* dpopt: the body of `sssp_parent`.s launch-free copy)|#include "warp_serial.cuh"\n$1|;
    s|(        \} else \{\n(#line[^\n]*\n)?            )dpopt_serial_folded_sssp_child\(|$1probe_warp_serial_sssp_child(|' \
    $W/sssp_t128.cu > $W/sssp_t128w.cu
  grep -c probe_warp_serial $W/sssp_t128w.cu
  exit 0
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
for v in t1 t128 t128w; do
  $nvcc -O3 -rdc=true -arch=sm_90 -I $W -o $W/sssp_$v $W/sssp_$v.cu -lcudadevrt &
done
wait
for round in 1 2 3; do
  for args in "--road 512" "--scale 14" "--scale 16 --ef 8"; do
    for v in t1 t128 t128w; do
      $W/sssp_$v $args --reps 5 | grep '^result' | grep -v flat-lb | sed "s/^/r$round $v /; s/checksum.*//"
    done
  done
done
