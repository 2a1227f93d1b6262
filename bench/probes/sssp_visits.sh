#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-probe, made here by `bench/probes/sssp_visits.sh prepare`): does SSSP's floor do more
# work than the flat code on the road grid? The generated floor file (threshold 1, every child run by its block) is
# patched to count the host loop's iterations and the parent visits (active vertices processed) of every run, in the
# flat kernel, the CDP parent and the floor's copy alike; each run prints `probe impl=... iters=... visits=... ms=...`.
set -u
cd "$(dirname "$0")/../.."
W=gpu-probe
if [ "${1:-}" = prepare ]; then
  rm -rf $W && mkdir -p $W && cp -r examples/common $W/common
  awk -v p="#pragma dp threshold(1) floor" '/^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; next } { print }' \
    examples/sssp.cu > $W/sssp_in.cu
  target/release/dpopt transform $W/sssp_in.cu -o $W/sssp_floor.cu && rm $W/sssp_in.cu
  perl -0pi -e 's/^/static long g_probe_iters; __device__ unsigned long long g_probe_visits;\n/;
    s/active\[v\] = 0;/active[v] = 0; atomicAdd(&g_probe_visits, 1ull);/g;
    s/    if \(!changed\) break;/    ++g_probe_iters; if (!changed) break;/;
    s/(float ms = run_sssp\(impl, d, src, t0, t1\);)/$1 { unsigned long long pv = 0, z = 0; cudaMemcpyFromSymbol(&pv, g_probe_visits, 8); cudaMemcpyToSymbol(g_probe_visits, &z, 8); std::printf("probe impl=%s iters=%ld visits=%llu ms=%.3f\\n", impl_name(impl), g_probe_iters, pv, ms); g_probe_iters = 0; }/' \
    $W/sssp_floor.cu
  grep -c g_probe $W/sssp_floor.cu
  exit 0
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
$nvcc -O3 -rdc=true -arch=sm_90 -I $W -o $W/sssp_floor $W/sssp_floor.cu -lcudadevrt || exit 1
for round in 1 2 3; do
  $W/sssp_floor --road 512 --reps 5 | grep -E '^(probe|result)' | grep -v flat-lb | sed "s/^/r$round /"
done
