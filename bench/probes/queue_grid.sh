#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-grid, made here by `bench/probes/queue_grid.sh prepare`): the recursive floor's drain
# grid and its waiting. Variants of the same generated files (tree_descendants and tree_heights with `floor`) built
# with the -D flags of VARIANTS (name:flags;...), run alternately three times on tree_descendants at depths 1 to 5
# and tree_heights on the suite's two trees, the flat code in the same program runs.
set -u
cd "$(dirname "$0")/../.."
W=gpu-grid
VARIANTS=${VARIANTS:-"base:;sm1:-DDPOPT_FLOOR_QUEUE_PER_SM=1;sm2:-DDPOPT_FLOOR_QUEUE_PER_SM=2;sm4:-DDPOPT_FLOOR_QUEUE_PER_SM=4;t1024sm2:-DDPOPT_FLOOR_QUEUE_THREADS=1024 -DDPOPT_FLOOR_QUEUE_PER_SM=2;t512sm4:-DDPOPT_FLOOR_QUEUE_THREADS=512 -DDPOPT_FLOOR_QUEUE_PER_SM=4"}
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
names=()
IFS=';' read -ra vs <<< "$VARIANTS"
for v in "${vs[@]}"; do
  name=${v%%:*}; flags=${v#*:}; names+=("$name")
  for ex in tree_descendants tree_heights; do
    $nvcc -O3 -rdc=true -arch=sm_90 -I $W $flags -o $b/${ex}_$name $W/${ex}__floor.cu -lcudadevrt &
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
    for n in "${names[@]}"; do run "r$round d$d $n" tree_descendants_$n --depth $d --outdeg 32 --sparsity 1 --reps 20; done
  done
  for n in "${names[@]}"; do
    run "r$round heights-d4 $n" tree_heights_$n --depth 4 --outdeg 32 --sparsity 1 --reps 20
    run "r$round heights-d3k64 $n" tree_heights_$n --depth 3 --outdeg 64 --sparsity 0 --reps 20
  done
done
