#!/usr/bin/env bash
# Probe (GPU machine, after `bench/gpu_check.sh prepare` here; carry gpu-build): where the floor's copy of
# SSSP's parent loses to the flat kernel on the road grid, where no child reaches the threshold (every child
# runs serially, nothing is recorded). Variants of gpu-build/src/sssp__TCF.cu (threshold 128, no coarsening):
#   shipped   as generated
#   nobar     the copy's two block barriers and the join removed (valid here only: nothing is recorded)
#   ser32     the serial loop over the child's threads counted in 32 bits
#   nobar32   both
# For each: Nsight Compute of 20 iterations of the copy (duration, instructions, registers), and the
# program's median time over REPS runs (default 15) next to the flat version's, 3 rounds interleaved.
# Writes $OUT/floor-overhead.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
src=gpu-build/src/sssp__TCF.cu
work=$(mktemp -d)
cp "$src" "$work/shipped.cu"
sed -e '/__syncthreads();  \/\* the block.s \(lists are empty\|children are recorded\) \*\//d' \
    -e 's/if (dpopt_floor_local_sssp_parent_1_count != 0u) dpopt_floor_join_sssp_parent_1();/(void)0;/' \
    "$src" > "$work/nobar.cu"
ser32() { sed -e 's/const long long dpopt_all = (long long)dpopt_gridDim.x \* dpopt_blockDim.x;/const unsigned dpopt_all = dpopt_gridDim.x * dpopt_blockDim.x;/' \
    -e 's/const long long dpopt_end = (long long)(deg) < dpopt_all ? (long long)(deg) : dpopt_all;/const unsigned dpopt_end = (unsigned)(deg) < dpopt_all ? (unsigned)(deg) : dpopt_all;/' \
    -e 's/for (long long dpopt_t = 0; dpopt_t < dpopt_end; ++dpopt_t)/for (unsigned dpopt_t = 0; dpopt_t < dpopt_end; ++dpopt_t)/' "$1"; }
ser32 "$work/shipped.cu" > "$work/ser32.cu"
ser32 "$work/nobar.cu" > "$work/nobar32.cu"
report=$out/floor-overhead.txt
: > "$report"
variants="shipped nobar ser32 nobar32"
for v in $variants; do
  grep -c 'unsigned dpopt_t = 0' "$work/$v.cu" | sed "s/^/$v: 32-bit serial loops: /" >> "$report"
  "$nvcc" -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=128 -DDPOPT_COARSEN=1 \
    -o "$work/$v" "$work/$v.cu" -lcudadevrt > "$work/$v.build" 2>&1 || { echo "$v: build failed" >> "$report"; tail -5 "$work/$v.build" >> "$report"; } &
done
wait
for v in $variants; do
  [ -x "$work/$v" ] || continue
  echo "## $v: ncu, copy kernel, 20 iterations" >> "$report"
  "$ncu" --kernel-name-base function --kernel-name "regex:^dpopt_floor_sssp_parent" --launch-skip 200 --launch-count 20 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$work/$v" --road 512 --reps 1 > "$work/$v.ncu" 2>&1
  awk '/gpu__time_duration.sum|launch__registers_per_thread|smsp__inst_executed.sum|sm__warps_active/ { n[$1]++; s[$1] += $NF } END { for (k in n) printf "  %s mean %.2f\n", k, s[k] / n[k] }' "$work/$v.ncu" | sort >> "$report"
done
[ -x "$work/shipped" ] && { echo "## flat kernel, ncu, 20 iterations" >> "$report"
  "$ncu" --kernel-name-base function --kernel-name "regex:^sssp_flat" --launch-skip 200 --launch-count 20 \
    --metrics gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active \
    "$work/shipped" --road 512 --reps 1 > "$work/flat.ncu" 2>&1
  awk '/gpu__time_duration.sum|launch__registers_per_thread|smsp__inst_executed.sum|sm__warps_active/ { n[$1]++; s[$1] += $NF } END { for (k in n) printf "  %s mean %.2f\n", k, s[k] / n[k] }' "$work/flat.ncu" | sort >> "$report"; }
echo "## program medians (ms), --road 512 --reps ${REPS:-15}, 3 interleaved rounds: cdp (the copy) and flat" >> "$report"
for round in 1 2 3; do
  for v in $variants; do
    [ -x "$work/$v" ] || continue
    "$work/$v" --road 512 --reps "${REPS:-15}" > "$work/$v.run" 2>&1
    cdp=$(grep 'impl=cdp ' "$work/$v.run" | grep -o 'time_ms=[0-9.]*' | cut -d= -f2)
    flat=$(grep 'impl=flat ' "$work/$v.run" | grep -o 'time_ms=[0-9.]*' | cut -d= -f2)
    ok=$(grep 'impl=cdp ' "$work/$v.run" | grep -o 'verified=[a-z]*')
    echo "round $round $v cdp=$cdp flat=$flat $ok" | tee -a "$report"
  done
done
cat "$report"
