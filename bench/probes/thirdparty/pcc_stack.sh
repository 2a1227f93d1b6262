#!/usr/bin/env bash
# Is the textbook reduction's illegal memory access (gpuRecursiveReduceNosync, threshold(128) coarsen(8) with
# warp/block/multiblock aggregation; pcc_probe.sh) a stack overflow of the serial fallback? Builds TCw/TCb/TCm
# as generated and with cudaLimitStackSize raised to 16 KiB in main, with the launch counters, runs each once;
# then bench/probes/stack/stack_address.cu (where a thread's stack is, in local space).
#   on the GPU from the repo root, with gpu-tp2 carried: OUT=... bash bench/probes/thirdparty/pcc_stack.sh
set -uo pipefail
P=gpu-tp2; out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
for v in TCw TCb TCm; do
  src=$P/variants/pcc/gpuRecursiveReduceNosync/$v.cu
  cp "$src" "$w/$v.cu"
  python3 - "$src" "$w/$v-stack.cu" <<'PY2'
import sys
s = open(sys.argv[1]).read()
head = "int main(int argc, char **argv)\n{"
assert head in s
s = s.replace(head, "int dpopt_real_main(int argc, char **argv);\nint main(int argc, char **argv) { cudaDeviceSetLimit(cudaLimitStackSize, 16384); return dpopt_real_main(argc, argv); }\nint dpopt_real_main(int argc, char **argv)\n{", 1)
open(sys.argv[2], "w").write(s)
PY2
done
for f in "$w"/*.cu; do
  n=$(basename "$f" .cu)
  $nvcc -rdc=true -arch=sm_90 -O2 -diag-suppress 174 -I "$P/compat/common" -DDPOPT_STATS "$f" -o "$w/$n" -lcudadevrt > "$w/$n.log" 2>&1 ||
    echo "BUILD FAILED $n: $(grep -m2 error "$w/$n.log")" &
done
$nvcc -rdc=true -arch=sm_90 -O2 bench/probes/stack/stack_address.cu -o "$w/stack_address" -lcudadevrt > /dev/null 2>&1 &
wait
{
  for n in TCw TCw-stack TCb TCb-stack TCm TCm-stack; do
    [ -x "$w/$n" ] || { echo "$n not built"; continue; }
    txt=$(timeout 60 "$w/$n" 2>&1); rc=$?
    echo "$n rc=$rc $(echo "$txt" | grep -E 'gpu_sum|Error|error' | tr '\n' ' ' | tr -s ' \t' ' ' | cut -c1-500)"
    echo "$txt" | grep -i 'dpopt' | head -12
  done
  "$w/stack_address"
} 2>&1 | tee "$out/pcc_stack.txt"
