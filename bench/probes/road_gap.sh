#!/usr/bin/env bash
# Why thresholded code trails the flat code on the road-like grid (issue 4:
# target within 5% of No-CDP). On the GPU after `bench/gpu_check.sh prepare`
# here (carry gpu-build):
#   bash bench/probes/road_gap.sh
# Builds BFS and SSSP's TC variant with run-time knobs, with and without
# -DDPOPT_WARP_UNIFORM_GUARD (a warp whose lanes all serialize skips the launch
# path in one uniform branch), times the road grid at thresholds 32..1024
# (factor 1) next to the flat version, then profiles one BFS level's parent
# kernel and the flat kernel with Nsight Compute (if ncu is there).
# Output: $OUT (or ./gpu-out)/road_gap.txt and road_gap_ncu.txt
set -u
cd "$(dirname "$0")/../../gpu-build" || exit 1
out=${OUT:-../gpu-out}; mkdir -p "$out" gap
nvcc=${NVCC:-nvcc}; command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
for ex in bfs sssp; do
  echo "src/${ex}__TC.cu gap/${ex} -DDPOPT_RUNTIME_KNOBS"
  echo "src/${ex}__TC.cu gap/${ex}-guard -DDPOPT_RUNTIME_KNOBS,-DDPOPT_WARP_UNIFORM_GUARD"
done | xargs -P 4 -n 3 sh -c "$nvcc"' -O3 -rdc=true -arch=sm_90 -I src -Xptxas -v $(echo "$2" | tr , " ") -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED $1"'
{
  for ex in bfs sssp; do
    grep -A1 "_parent" "gap/$ex.log" | grep -m2 "registers" | sed "s/^/$ex registers: /"
    for b in "$ex" "$ex-guard"; do
      for t in 32 128 512 1024; do
        for in in "--road 512" "--web 325557"; do
          # shellcheck disable=SC2086
          r=$(DPOPT_THRESHOLD=$t DPOPT_COARSEN=1 timeout 120 "gap/$b" $in --reps 5 2>&1 | grep '^result' | awk '{for(i=2;i<=NF;i++) if ($i ~ /^(impl|time_ms|verified)=/) printf "%s ", $i}')
          echo "$b t$t [$in]: $r"
        done
      done
    done
  done
} | tee "$out/road_gap.txt"
if [ -n "$ncu" ] && [ "${NCU:-1}" != 0 ]; then
  : > "$out/road_gap_ncu.txt"
  for k in bfs_flat bfs_parent; do
    DPOPT_THRESHOLD=512 timeout 240 "$ncu" --kernel-name "$k" --launch-skip 200 --launch-count 3 \
      --section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section InstructionStats \
      gap/bfs --road 512 --reps 1 >> "$out/road_gap_ncu.txt" 2>&1 || echo "ncu $k failed: $(tail -n 3 "$out/road_gap_ncu.txt")"
  done
  grep -E '^  [a-z_]+.*\(|Duration|Executed Ipc A|Registers Per|Achieved Occupancy|Executed Instructions  |Warp Cycles Per Issued|Branch Instructions Ratio|Stack Size|Local Memory' "$out/road_gap_ncu.txt" | head -80
else
  echo "no ncu on this machine"
fi
