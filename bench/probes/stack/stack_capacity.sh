#!/usr/bin/env bash
# runs stack_capacity.cu: the leaf kernel's stack address, then for each limit the depths until the first error
#   on the GPU from the repo root: OUT=... bash bench/probes/stack/stack_capacity.sh
set -uo pipefail
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
$nvcc -rdc=true -arch=sm_90 -O2 bench/probes/stack/stack_capacity.cu -o "$w/sc" -lcudadevrt 2>/dev/null
{
  "$w/sc" leaf
  for L in 1024 2048; do
    for D in $(seq 0 40); do
      timeout 20 "$w/sc" $L $D || break
    done
  done
} 2>&1 | tee "$out/stack_capacity.txt"
