#!/usr/bin/env bash
# Launch resources of the device runtime (docs/AGGREGATION.md, "Launch
# resources"): what a grid that launches past the pending-launch limit gets
# (pending_limit.cu), and whether the block-aggregation hang of a 5-level tree
# depends on the pending-launch limit times the launch-parameter size.
# Needs bench/probes/recursive_block.sh prepare and bench/gpu_check.sh prepare
# here; on the GPU (carry gpu-probe and gpu-build):
#   bash bench/probes/launch_resources.sh
# Output: $OUT (or ./gpu-out)/launch_resources.txt
set -u
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out" gpu-probe/bin
nvcc=${NVCC:-nvcc}; command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
{
  echo "bench/probes/pending_limit.cu gpu-probe/bin/pending_limit -DNONE"
  for ex in tree_descendants; do
    echo "gpu-probe/src/${ex}__block.cu gpu-probe/bin/${ex}__block -DDPOPT_STATS"
    echo "gpu-probe/src/${ex}__block.cu gpu-probe/bin/${ex}__block-p2048 -DDPOPT_STATS,-DDPOPT_PARAM_BYTES=2048"
  done
  for ex in bfs sssp; do
    for v in Ab Am; do
      for p in 7168 2048 1024; do echo "gpu-build/src/${ex}__$v.cu gpu-probe/bin/${ex}__$v-p$p -DDPOPT_PARAM_BYTES=$p"; done
    done
  done
} | xargs -P "$(nproc)" -n 3 sh -c "$nvcc"' -O3 -rdc=true -arch=sm_90 -I gpu-build/src $(echo $2 | tr , " ") -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED $1"'
watch() {  # watch SECONDS CMD...: run with a limit, report a hang with GPU utilisation
  local limit=$(( $1 * 10 )) t=0; shift
  "$@" > gpu-probe/out.txt 2>&1 &
  local pid=$!
  while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$limit" ]; do sleep 0.1; t=$((t + 1)); done
  if kill -0 "$pid" 2>/dev/null; then
    echo "$*: HANG after $((t / 10)) s; gpu $(nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader)"
    kill -9 "$pid"; wait "$pid" 2>/dev/null
  else
    wait "$pid"; echo "$*: exit $? in $((t / 10)) s; $(grep -E '^(pending_limit|result .*impl=cdp|dpopt_stats)' gpu-probe/out.txt | cut -c1-230 | tr '\n' ' ')"
  fi
}
{
  for s in null ff; do
    watch 10 gpu-probe/bin/pending_limit 3000 2048 $s
    watch 10 gpu-probe/bin/pending_limit 100000 2048 $s
    watch 10 gpu-probe/bin/pending_limit 3000 2048 $s 2000000
    watch 10 gpu-probe/bin/pending_limit 100000 200000 $s
  done
  b=gpu-probe/bin/tree_descendants__block
  watch 15 $b --depth 4 --pending 1048576 --reps 1
  watch 15 $b --depth 5 --pending 550000 --reps 1
  watch 15 $b --depth 5 --pending 650000 --reps 1
  watch 15 $b-p2048 --depth 5 --pending 1900000 --reps 1
  watch 15 $b-p2048 --depth 5 --pending 2300000 --reps 1
  for ex in bfs sssp; do
    for v in Ab Am; do
      for p in 7168 2048 1024; do
        for in in "--scale 14 --ef 16" "--scale 16 --ef 8"; do
          # shellcheck disable=SC2086
          watch 60 gpu-probe/bin/${ex}__$v-p$p $in
        done
      done
    done
  done
} | tee "$out/launch_resources.txt"
