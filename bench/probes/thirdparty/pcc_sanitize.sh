#!/usr/bin/env bash
# Where the textbook reduction's TCw/TCb (threshold(128) coarsen(8) consldt(warp|block)) still fault: TCw at serial
# depth 0 under compute-sanitizer (memcheck, device backtraces), and TCw with dpopt_stack_room printing what it
# measures (its first 40 calls, and every `false`).
#   on the GPU from the repo root, with gpu-tp2 carried: OUT=... bash bench/probes/thirdparty/pcc_sanitize.sh
set -uo pipefail
P=gpu-tp2; out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
w=$(mktemp -d)
src=$P/variants/pcc/gpuRecursiveReduceNosync/TCw.cu
python3 - "$src" "$w/TCw-dbg.cu" <<'PY'
import sys
s = open(sys.argv[1]).read()
old = "    return dpopt_used + (DPOPT_STACK_RESERVE) <= (unsigned long long)dpopt_limit + (DPOPT_STACK_TOP_RESERVED);"
assert old in s
new = """    const bool dpopt_ok = dpopt_used + (DPOPT_STACK_RESERVE) <= (unsigned long long)dpopt_limit + (DPOPT_STACK_TOP_RESERVED);
    static __device__ unsigned dpopt_calls;
    const unsigned dpopt_k = atomicAdd(&dpopt_calls, 1u);
    if (dpopt_k < 40 || (!dpopt_ok && dpopt_k < 100000 && dpopt_k % 500 == 0))
        printf("stack_room call %u used %llu limit %llu -> %d\\n", dpopt_k, dpopt_used, (unsigned long long)dpopt_limit, (int)dpopt_ok);
    return dpopt_ok;"""
s = s.replace(old, new, 1)
open(sys.argv[2], "w").write(s)
PY
$nvcc -rdc=true -arch=sm_90 -O2 -lineinfo -diag-suppress 174 -I "$P/compat/common" -DDPOPT_SERIAL_DEPTH=0 "$src" -o "$w/TCw0" -lcudadevrt > "$w/b1.log" 2>&1 &
$nvcc -rdc=true -arch=sm_90 -O2 -lineinfo -diag-suppress 174 -I "$P/compat/common" "$w/TCw-dbg.cu" -o "$w/TCwdbg" -lcudadevrt > "$w/b2.log" 2>&1 &
wait
cat "$w"/b*.log | grep -i error | head
{
  echo "== TCw, stack_room printing"
  timeout 60 "$w/TCwdbg" 2>&1 | grep -E "stack_room|gpu_sum|Error" | head -80
  echo "== TCw depth 0 under compute-sanitizer"
  timeout 240 "$san" --tool memcheck --show-backtrace device --print-limit 3 "$w/TCw0" 2>&1 | head -80
} 2>&1 | tee "$out/pcc_sanitize.txt"
