#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-build and gpu-dbg with tree_descendants__F.cu from `bench/gpu_check.sh prepare`):
# the recursive floor of tree_descendants at depths 1..5 and 2..16 drain blocks per SM (the queue at 131,072
# records), against the flat code in the same program runs: the fixed cost of the copy and the drain, and each level's.
cd "$(dirname "$0")/../.."
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
for q in 2 4 8 16; do
  $nvcc -O3 -rdc=true -arch=sm_90 -I examples -DDPOPT_FLOOR_QUEUE_PER_SM=$q -DDPOPT_FLOOR_RECORDS=131072 -o $w/td_q$q gpu-dbg/tree_descendants__F.cu -lcudadevrt &
done
wait
for d in 1 2 3 4 5; do for q in 2 4 8 16; do
  echo "== d$d q$q"; timeout 60 $w/td_q$q --depth $d --outdeg 32 --sparsity 1 --reps 20 | grep result | sed 's/checksum.*//'
done; done
nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -n1)
echo "nsys: $nsys"
if [ -n "$nsys" ]; then
  cd $w && timeout 120 $nsys profile -t cuda -o td8 ./td_q8 --depth 4 --outdeg 32 --sparsity 1 --reps 20 > /dev/null 2>&1
  timeout 120 $nsys stats -r cuda_gpu_kern_sum td8.nsys-rep 2>&1 | cut -c1-220 | head -30
fi
