#!/usr/bin/env bash
# The Professional CUDA C Programming book's gpuRecursiveReduceNosync (chapter03/nestedReduce2.cu,
# /tmp/thirdparty2) under dpopt: TCw/TCb stopped with an illegal memory access and Ag/TCm ran past
# 60 s in the tp2 pack (gpu-tp2). Builds those variants with knobs and runs each once.
#   on the GPU from the repo root, with gpu-tp2 carried: OUT=... bash bench/probes/thirdparty/pcc_probe.sh
set -uo pipefail
P=gpu-tp2; out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
builds=("TCw:" "TCw@depth0:-DDPOPT_SERIAL_DEPTH=0" "TCb:" "TCb@depth0:-DDPOPT_SERIAL_DEPTH=0"
        "T:" "Ag:" "Ag@stats:-DDPOPT_STATS" "TCm:" "TCm@depth0:-DDPOPT_SERIAL_DEPTH=0")
for b in "${builds[@]}"; do
  name=${b%%:*}; defs=${b#*:}; v=${name%%@*}
  # shellcheck disable=SC2086
  $nvcc -rdc=true -arch=sm_90 -O2 -diag-suppress 174 -I "$P/compat/common" $defs \
    "$P/variants/pcc/gpuRecursiveReduceNosync/$v.cu" -o "$w/$name" -lcudadevrt > "$w/$name.log" 2>&1 ||
    echo "BUILD FAILED $name: $(grep -m2 error "$w/$name.log")" &
done
wait
{
  for b in "${builds[@]}"; do
    name=${b%%:*}
    [ -x "$w/$name" ] || { echo "$name not built"; continue; }
    txt=$(timeout 30 "$w/$name" 2>&1); rc=$?
    echo "$name rc=$rc $(echo "$txt" | grep -E 'gpu_sum|Error|error' | tr '\n' ' ' | tr -s ' \t' ' ' | cut -c1-400)"
    echo "$txt" | grep '^dpopt_stats' | head -5
  done
} 2>&1 | tee "$out/pcc_probe.txt"
