#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-ab with smem/{bfs,sssp}_{gen,flatsmem,cap8}.cu: the TCF file as generated, the same with the
# flat kernel launched with 3,588 bytes of (unused) dynamic shared memory, the copy's block list cut to 8 records): does
# the copy's shared-memory list cost the road grids a shared-memory reconfiguration per iteration? Floor t1 c1,
# 6 alternating runs of --road 512 --reps 10, flat and floor of the same process.
cd "$(dirname "$0")/../.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
for e in sssp bfs; do for v in gen flatsmem cap8; do
  $nvcc -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_THRESHOLD=1 -DDPOPT_COARSEN=1 -o $w/${e}_$v gpu-ab/smem/${e}_$v.cu -lcudadevrt &
done; done
wait
for round in 1 2 3 4 5 6; do for e in sssp bfs; do for v in gen flatsmem cap8; do
  out=$(timeout 60 $w/${e}_$v --road 512 --reps 10 2>/dev/null)
  f=$(echo "$out" | grep "impl=flat " | grep -o "time_ms=[0-9.]*" | cut -d= -f2)
  c=$(echo "$out" | grep "impl=cdp " | grep -o "time_ms=[0-9.]*" | cut -d= -f2)
  v2=$(echo "$out" | grep "impl=cdp " | grep -o "verified=[a-z]*")
  echo "$round,$e,$v,$f,$c,$v2"
done; done; done
