#!/usr/bin/env bash
# Probe (GPU machine, after `bench/gpu_check.sh prepare` here; carry gpu-build): why SSSP on the road grid
# runs slower with `floor` than the flat code although the copy makes no device-runtime call. Builds the
# floor variant (threshold 128, no coarsening) and profiles 20 iterations of the copy and of the flat
# kernel with Nsight Compute: duration, registers, occupancy, instructions, memory traffic.
# Writes $OUT/ncu-*.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
echo "ncu: $ncu"
"$nvcc" -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=128 -DDPOPT_COARSEN=1 \
  -o "$out/sssp_tcf" gpu-build/src/sssp__TCF.cu -lcudadevrt -Xptxas -v > "$out/build.txt" 2>&1 || { cat "$out/build.txt"; exit 1; }
"$out/sssp_tcf" --road 512 --reps 1 | tee "$out/run.txt"
for k in dpopt_floor_sssp_parent sssp_flat; do
  "$ncu" --kernel-name-base function --kernel-name "regex:^$k" --launch-skip 200 --launch-count 20 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,dram__bytes.sum,lts__t_bytes.sum,launch__grid_size,launch__block_size,smsp__thread_inst_executed_per_inst_executed.ratio \
    "$out/sssp_tcf" --road 512 --reps 1 > "$out/ncu-$k.txt" 2>&1
  tail -n 40 "$out/ncu-$k.txt"
done
