#!/usr/bin/env bash
# Probe (GPU machine, after `bench/gpu_check.sh prepare` here; carry gpu-build): which part of the floor's copy of
# SSSP's parent costs time on the road grid (nothing recorded there: every child runs serially). Nsight Compute,
# 20 iterations of the copy, for variants of gpu-build/src/sssp__TCF.cu built at threshold 128 without coarsening:
#   shipped    as generated
#   nobar      the two block barriers and the drain call removed
#   nopush     nobar, and the recording call replaced by `false` (no list code left in the kernel)
#   cap1       the block's list one record long (its shared memory 100 bytes instead of 3.3 KiB)
#   join0      -DDPOPT_FLOOR_JOIN=0 (the global work list and a drain grid: no barrier, no shared memory)
#   nobounds   -DDPOPT_PARENT_BOUNDS= (no __launch_bounds__(1024) on the copy)
# and the flat kernel. Writes $OUT/floor-variants.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
src=gpu-build/src/sssp__TCF.cu
work=$(mktemp -d)
nobar='/__syncthreads();  \/\* the block.s \(lists are empty\|children are recorded\) \*\//d; s/if (dpopt_floor_local_sssp_parent_1_count != 0u) dpopt_floor_join_sssp_parent_1();/(void)0;/'
cp "$src" "$work/shipped.cu"; cp "$src" "$work/join0.cu"; cp "$src" "$work/nobounds.cu"
sed -e "$nobar" "$src" > "$work/nobar.cu"
sed -e "$nobar" -e 's/if (dpopt_floor_push_sssp_parent_1(dpopt_ticket, [^{]*{/if (false) {/' "$src" > "$work/nopush.cu"
sed -e 's/_cap = sizeof(dpopt_floor_record_sssp_parent_1) \* 32u <= 4096u ? 32u/_cap = 1u ? 1u/' "$src" > "$work/cap1.cu"
report=$out/floor-variants.txt
: > "$report"
for v in nopush cap1; do cmp -s "$src" "$work/$v.cu" && echo "$v: the edit did not apply" >> "$report"; done
defs() { case $1 in join0) echo -DDPOPT_FLOOR_JOIN=0 ;; nobounds) echo -DDPOPT_PARENT_BOUNDS= ;; esac; }
variants="shipped nobar nopush cap1 join0 nobounds"
for v in $variants; do
  "$nvcc" -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=128 -DDPOPT_COARSEN=1 $(defs $v) \
    -o "$work/$v" "$work/$v.cu" -lcudadevrt -Xptxas -v > "$work/$v.build" 2>&1 || echo "$v: build failed" >> "$report" &
done
wait
summ() { awk '/gpu__time_duration.sum|launch__registers_per_thread|smsp__inst_executed.sum|launch__shared_mem_per_block_static/ { n[$1]++; s[$1] += $NF } END { for (k in n) printf "  %s mean %.2f\n", k, s[k] / n[k] }' "$1" | sort; }
metrics=gpu__time_duration.sum,launch__registers_per_thread,smsp__inst_executed.sum,launch__shared_mem_per_block_static
for v in $variants; do
  [ -x "$work/$v" ] || continue
  "$ncu" --kernel-name-base function --kernel-name "regex:^dpopt_floor_sssp_parent" --launch-skip 200 --launch-count 20 \
    --metrics $metrics "$work/$v" --road 512 --reps 1 > "$work/$v.ncu" 2>&1
  echo "## $v ($(grep -o 'verified=[a-z]*' <(grep 'impl=cdp' "$work/$v.ncu") | head -n1))" >> "$report"; summ "$work/$v.ncu" >> "$report"
done
"$ncu" --kernel-name-base function --kernel-name "regex:^sssp_flat" --launch-skip 200 --launch-count 20 \
  --metrics $metrics "$work/shipped" --road 512 --reps 1 > "$work/flat.ncu" 2>&1
echo "## flat kernel" >> "$report"; summ "$work/flat.ncu" >> "$report"
cat "$report"
