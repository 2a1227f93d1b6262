#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-ab with old/ and new/ bfs__TCF.cu and sssp__TCF.cu from `bench/gpu_check.sh prepare` at two commits, and gpu-build):
# old/new TCF files of bfs and sssp at floor t1 c1 and t512 c1, flat and cdp of the same process
cd "$(dirname "$0")/../.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
for e in bfs sssp; do for g in old new; do for t in 1 512; do
  $nvcc -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=$t -DDPOPT_COARSEN=1 -o $w/${e}_${g}_t$t gpu-ab/$g/${e}__TCF.cu -lcudadevrt &
done; done; done
wait
for round in 1 2 3 4 5 6; do
  for e in bfs sssp; do for g in old new; do for t in 1 512; do
    out=$(timeout 60 $w/${e}_${g}_t$t --road 512 --reps 10 2>/dev/null)
    f=$(echo "$out" | grep "impl=flat " | grep -o "time_ms=[0-9.]*" | cut -d= -f2)
    c=$(echo "$out" | grep "impl=cdp " | grep -o "time_ms=[0-9.]*" | cut -d= -f2)
    v=$(echo "$out" | grep "impl=cdp " | grep -o "verified=[a-z]*")
    echo "$round,$e,$g,t$t,$f,$c,$v"
  done; done; done
done
