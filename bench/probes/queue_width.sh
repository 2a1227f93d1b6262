#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-qw, made here by `bench/probes/queue_width.sh prepare OLD_DPOPT`): the recursive
# floor's drain running several recorded blocks per block (DPOPT_FLOOR_QUEUE_THREADS / the child's block size, the
# queue's width) against one at a time (DPOPT_FLOOR_QUEUE_THREADS=32 for descendants' 32-thread children, and the
# generation before the width existed, OLD_DPOPT), at 4, 8 and 16 drain blocks per SM; tree_descendants at depths 1
# to 5 and tree_heights on the suite's two trees; the flat code in the same program runs.
set -u
cd "$(dirname "$0")/../.."
W=gpu-qw
if [ "${1:-}" = prepare ]; then
  old=$2
  rm -rf $W && mkdir -p $W && cp -r examples/common $W/common
  for ex in tree_descendants tree_heights; do
    awk -v p="#pragma dp floor" '/^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; next } { print }' \
      examples/$ex.cu > $W/${ex}_in.cu
    target/release/dpopt transform $W/${ex}_in.cu -o $W/${ex}__new.cu
    $old transform $W/${ex}_in.cu -o $W/${ex}__old.cu
    rm $W/${ex}_in.cu
  done
  exit 0
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
b=$(mktemp -d)
build() {  # name source defines...
  local name=$1 src=$2; shift 2
  $nvcc -O3 -rdc=true -arch=sm_90 -I $W "$@" -o $b/$name $W/$src -lcudadevrt
}
for q in 4 8 16; do
  build td_old_q$q tree_descendants__old.cu -DDPOPT_FLOOR_QUEUE_PER_SM=$q -DDPOPT_FLOOR_RECORDS=131072 &
  for t in 32 128 256 512 1024; do
    build td_t${t}_q$q tree_descendants__new.cu -DDPOPT_FLOOR_QUEUE_PER_SM=$q -DDPOPT_FLOOR_RECORDS=131072 \
      -DDPOPT_FLOOR_QUEUE_THREADS=$t &
  done
  wait
done
for t in old 64 256 512; do
  if [ $t = old ]; then build th_old tree_heights__old.cu &
  else build th_t$t tree_heights__new.cu -DDPOPT_FLOOR_QUEUE_THREADS=$t & fi
done
wait
ls $b
run() {  # label binary args...
  local label=$1 bin=$2; shift 2
  timeout 60 $b/$bin "$@" | grep '^result' | sed "s/^/$label /; s/checksum.*//"
}
for d in 1 2 3 4 5; do
  for q in 4 8 16; do
    for v in old t32 t128 t256 t512 t1024; do
      run "d$d q$q $v" td_${v}_q$q --depth $d --outdeg 32 --sparsity 1 --reps 20
    done
  done
done
for v in old t64 t256 t512; do
  run "heights d4 $v" th_$v --depth 4 --outdeg 32 --sparsity 1 --reps 20
  run "heights d3k64 $v" th_$v --depth 3 --outdeg 64 --sparsity 0 --reps 20
done
