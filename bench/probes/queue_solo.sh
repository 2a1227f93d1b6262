#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-solo, made here by `bench/probes/queue_solo.sh prepare`): a host launch of a
# recursive floor kernel as one grid, the drain whose first tickets are the launch's blocks (DPOPT_FLOOR_QUEUE_SOLO=1,
# the default), against the launch-free copy followed by the drain (=0), the same generated files; tree_descendants
# at depths 1 to 5 and tree_heights on the suite's two trees, each pair built once and run alternately three times;
# the flat code in the same program runs. KNOB=NAME compares NAME=0 and NAME=1 instead (e.g.
# KNOB=DPOPT_FLOOR_QUEUE_ADAPT).
set -u
KNOB=${KNOB:-DPOPT_FLOOR_QUEUE_SOLO}
cd "$(dirname "$0")/../.."
W=gpu-solo
if [ "${1:-}" = prepare ]; then
  rm -rf $W && mkdir -p $W && cp -r examples/common $W/common
  for ex in tree_descendants tree_heights; do
    awk -v p="#pragma dp floor" '/^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; next } { print }' \
      examples/$ex.cu > $W/${ex}_in.cu
    target/release/dpopt transform $W/${ex}_in.cu -o $W/${ex}__floor.cu
    rm $W/${ex}_in.cu
  done
  exit 0
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
b=$(mktemp -d)
for ex in tree_descendants tree_heights; do
  for s in 0 1; do
    $nvcc -O3 -rdc=true -arch=sm_90 -I $W -D$KNOB=$s -DDPOPT_FLOOR_RECORDS=131072 \
      -o $b/${ex}_s$s $W/${ex}__floor.cu -lcudadevrt &
  done
done
wait
ls $b
run() {  # label binary args...
  local label=$1 bin=$2; shift 2
  timeout 60 $b/$bin "$@" | grep '^result' | grep -v flat-lb | sed "s/^/$label /; s/checksum.*//"
}
for round in 1 2 3; do
  for d in 1 2 3 4 5; do
    for s in 0 1; do run "r$round d$d $KNOB=$s" tree_descendants_s$s --depth $d --outdeg 32 --sparsity 1 --reps 20; done
  done
  for s in 0 1; do
    run "r$round heights-d4 $KNOB=$s" tree_heights_s$s --depth 4 --outdeg 32 --sparsity 1 --reps 20
    run "r$round heights-d3k64 $KNOB=$s" tree_heights_s$s --depth 3 --outdeg 64 --sparsity 0 --reps 20
  done
done
