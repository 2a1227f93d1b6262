#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-ab with old/ and new/ {bfs,sssp,spmv}__TCF.cu from `bench/gpu_check.sh prepare` at
# two commits, and gpu-build for the data): the floor's drain in the copy with the records' thread counts scanned by
# the block's first warp after the body (old) against each record's end claimed with it, in one 64-bit atomic
# operation of the block (new: no scan, no barrier in the drain). Floor at threshold 1 and coarsening off, ROUNDS
# alternating rounds (default 4) of --reps 10, flat and floor of the same process. Writes $OUT/floor_claim_ab.csv.
# The new code was a change of templates/floor_site.cu.tera measured once and not kept
# (bench/results/2026-11-27-h100-floor-claim-ab.csv).
set -uo pipefail
cd "$(dirname "$0")/../.."
. bench/probes/flat_and_floor.sh
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
for e in bfs sssp spmv; do for g in old new; do
  $nvcc -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=1 -DDPOPT_COARSEN=1 -o $w/${e}_$g gpu-ab/$g/${e}__TCF.cu \
    -lcudadevrt > $w/${e}_$g.log 2>&1 || echo "BUILD FAILED ${e}_$g: $(grep -m3 error $w/${e}_$g.log)" &
done; done
wait
echo "round,example,input,code,flat_ms,floor_ms,verified" > "$out/floor_claim_ab.csv"
for round in $(seq "${ROUNDS:-4}"); do
  for job in "sssp|--road 512" "sssp|--scale 14 --ef 16" "sssp|--web 325557" "bfs|--road 512" "bfs|--scale 14 --ef 16" \
             "bfs|--web 325557" "spmv|--mtx gpu-build/data/bcsstk13.mtx" "spmv|--rows 65536 --max-row 4096"; do
    e=${job%%|*}; input=${job#*|}
    for g in old new; do
      # shellcheck disable=SC2086
      echo "$round,$e,${input// /_},$g,$(flat_and_floor $w/${e}_$g $input)" | tee -a "$out/floor_claim_ab.csv"
    done
  done
done
