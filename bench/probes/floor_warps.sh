#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-build from `bench/gpu_check.sh prepare`): the floor's drain in the copy by the block
# (DPOPT_FLOOR_JOIN=1: the block's list, a barrier before and after the body) against the drain by the warps that
# recorded children (DPOPT_FLOOR_JOIN=2: each warp's share of the list, a warp that recorded nothing leaves after
# the body), on the same generated files (bfs__TCF.cu, sssp__TCF.cu, coarsening off), threshold 1 and 128,
# ROUNDS alternating rounds (default 4) of --reps 10, flat and floor of the same process; then Nsight Compute's
# duration of the copy kernel (20 launches after 200) on SSSP's road grid at threshold 1, both joins, and of the
# flat kernel. Writes $OUT/floor_warps.csv (round,example,input,join,threshold,flat_ms,floor_ms,verified) and
# $OUT/floor_warps_ncu.txt. DPOPT_FLOOR_JOIN=2 was a change of templates/floor_site.cu.tera and floor_launcher.cu.tera
# measured with this script (bench/results/2026-11-27-h100-floor-warps*.{csv,txt}) and not kept: it lost (the copy's
# instructions doubled); on the code as it is, 2 builds as 1.
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/probes/flat_and_floor.sh
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
for e in bfs sssp; do for j in 1 2; do for t in 1 128; do
  $nvcc -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=$t -DDPOPT_COARSEN=1 -DDPOPT_FLOOR_JOIN=$j \
    -o $w/${e}_j${j}_t$t gpu-build/src/${e}__TCF.cu -lcudadevrt > $w/${e}_j${j}_t$t.log 2>&1 ||
    echo "BUILD FAILED ${e}_j${j}_t$t: $(grep -m3 error $w/${e}_j${j}_t$t.log)" &
done; done; done
wait
echo "round,example,input,join,threshold,flat_ms,floor_ms,verified" > "$out/floor_warps.csv"
for round in $(seq "${ROUNDS:-4}"); do
  for e in sssp bfs; do
    for input in "--road 512" "--scale 14 --ef 16" "--web 325557"; do
      for t in 1 128; do
        [ "$t" = 128 ] && [ "$input" != "--road 512" ] && continue
        for j in 1 2; do
          # shellcheck disable=SC2086
          echo "$round,$e,${input// /_},$j,$t,$(flat_and_floor $w/${e}_j${j}_t$t $input)" | tee -a "$out/floor_warps.csv"
        done
      done
    done
  done
done
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
if [ -n "$ncu" ]; then
  for j in 1 2; do for k in dpopt_floor_sssp_parent sssp_flat; do
    [ "$j" = 2 ] && [ "$k" = sssp_flat ] && continue
    echo "## join $j kernel $k" >> "$out/floor_warps_ncu.txt"
    timeout 120 "$ncu" --clock-control none --kernel-name-base function --kernel-name "regex:^$k" --launch-skip 200 \
      --launch-count 20 --metrics gpu__time_duration.sum,smsp__inst_executed.sum,launch__registers_per_thread \
      --print-summary per-kernel $w/sssp_j${j}_t1 --road 512 --reps 1 2>&1 | grep -E "gpu__time|inst_executed|registers" \
      >> "$out/floor_warps_ncu.txt"
  done; done
  cat "$out/floor_warps_ncu.txt"
fi
