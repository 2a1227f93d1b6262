#!/usr/bin/env bash
# Next-session experiment for the intermittent hang of thresholded BFS on the
# scale-16 graph (README, Known problems). Run on the GPU machine after
# `bench/gpu_check.sh prepare` here (carry gpu-build):
#   bash bench/probes/hang_repro.sh [RUNS]
# Builds the original, T t512 and T+C t1024 c8 with their direct launches in the
# block's NULL stream (-DDPOPT_DIRECT_STREAM=0) and the same two as dpopt
# generates them now (fire-and-forget), then runs
# each RUNS times with 5 timed BFS runs per process (as the suite does) and
# records GPU utilisation whenever a run hangs.
set -u
cd "$(dirname "$0")/../../gpu-build" || exit 1
runs=${1:-20}
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
mkdir -p hang
build() { "$nvcc" -O3 -rdc=true -arch=sm_90 "${@:3}" -o "hang/$1" "src/$2.cu" -lcudadevrt 2>/dev/null; }
build orig bfs__orig &
build T512 bfs__T -DDPOPT_THRESHOLD=512 -DDPOPT_DIRECT_STREAM=0 &
build TC1024 bfs__TC -DDPOPT_THRESHOLD=1024 -DDPOPT_DIRECT_STREAM=0 &
build T512ff bfs__T -DDPOPT_THRESHOLD=512 &
build TC1024ff bfs__TC -DDPOPT_THRESHOLD=1024 &
wait
for b in orig T512 TC1024 T512ff TC1024ff; do
  ok=0; hung=0
  for i in $(seq 1 "$runs"); do
    stdbuf -oL "hang/$b" --scale 16 --ef 8 --reps 5 > hang/out.txt 2>&1 &
    pid=$!; t=0
    while kill -0 "$pid" 2>/dev/null && [ "$t" -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
    if kill -0 "$pid" 2>/dev/null; then
      hung=$((hung + 1))
      echo "$b run $i: HANG; gpu: $(nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader); last: $(tail -n1 hang/out.txt | cut -c1-100)"
      kill -9 "$pid"; wait "$pid" 2>/dev/null
    else
      wait "$pid" && ok=$((ok + 1))
    fi
  done
  echo "$b: ok=$ok hung=$hung of $runs"
done
