#!/usr/bin/env bash
# Threshold x coarsening-factor sweep without a rebuild per point: every
# variant is built once with -DDPOPT_RUNTIME_KNOBS, and the examples set the
# tuning values from DPOPT_THRESHOLD / DPOPT_COARSEN at run time
# (dpopt_knobs_from_env). Run on the GPU machine after
# `bench/gpu_check.sh prepare` here (carry gpu-build):
#
#   bash bench/sweep.sh [EXAMPLES] [THRESHOLDS] [FACTORS]
#   e.g. bash bench/sweep.sh "bfs sssp" "16 32 64 128 256 512 1024" "1 2 4 8"
#
# Writes $OUT (or ./gpu-out)/sweep.csv in the suite's format (benchmark,
# input, variant, config, impl, time_ms, device_launches, verified, gpu);
# dpopt-report turns it into time-versus-threshold plots. A row is verified
# when the program's CPU check passed, no launch failed, and its checksum
# equals the original program's on the same input. INPUTS=regex selects
# input lines as in gpu_check.sh.
set -uo pipefail
cd "$(dirname "$0")/../gpu-build" || { echo "run bench/gpu_check.sh prepare first" >&2; exit 1; }
examples=${1:-"bfs sssp spmv bezier tc sp"}
thresholds=${2:-"16 32 64 128 256 512 1024"}
factors=${3:-"1 2 8"}
out=${OUT:-../gpu-out}
mkdir -p "$out" sweep
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr ',' ' ')
variants="TC TCA TCAb TCAm TCAg"

# Build: the original and every thresholded+coarsened variant, once each.
for ex in $examples; do
  for v in orig $variants; do
    [ -f "src/${ex}__$v.cu" ] || continue
    echo "src/${ex}__$v.cu sweep/${ex}__$v"
  done
done | xargs -P "$(nproc)" -n 2 sh -c \
  "$nvcc"' -O3 -rdc=true -arch=sm_90 -DDPOPT_RUNTIME_KNOBS -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED: $0"'

csv=$out/sweep.csv
echo "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu" > "$csv"
row() {  # row VARIANT CONFIG OUTPUTFILE REFCHECKSUM
  grep '^result ' "$3" | while read -r _ rest; do
    declare -A f=()
    for kv in $rest; do f[${kv%%=*}]=${kv#*=}; done
    ok=no
    if [ "${f[verified]}" = yes ] && [ "${f[launch_failures]}" = 0 ] &&
       { [ "${f[impl]}" = flat ] || [ "${f[checksum]}" = "$4" ]; }; then ok=yes; fi
    echo "${f[example]},${f[input]},$1,$2,${f[impl]},${f[time_ms]},,$ok,$gpu"
  done >> "$csv"
}
for ex in $examples; do
  [ -x "sweep/${ex}__orig" ] || continue
  inputs=$(grep "^$ex|" inputs.txt | grep -E -- "${INPUTS:-.}" | cut -d'|' -f2)
  [ -n "$inputs" ] || inputs="-"
  while IFS= read -r args; do
    [ "$args" = "-" ] && args=""
    # shellcheck disable=SC2086
    timeout 120 "sweep/${ex}__orig" $args > sweep/out.txt 2>&1
    ref=$(grep '^result .*impl=cdp' sweep/out.txt | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2)
    row orig - sweep/out.txt "$ref"
    for v in $variants; do
      [ -x "sweep/${ex}__$v" ] || continue
      for t in $thresholds; do
        for c in $factors; do
          # shellcheck disable=SC2086
          DPOPT_THRESHOLD=$t DPOPT_COARSEN=$c timeout 120 "sweep/${ex}__$v" $args > sweep/out.txt 2>&1
          row "$v" "t${t}c$c" sweep/out.txt "$ref"
        done
      done
    done
    echo "$(date +%T) $ex [$args] done"
  done <<< "$inputs"
done
echo "sweep CSV: $csv ($(($(wc -l < "$csv") - 1)) rows, $(grep -c ',no,' "$csv") not verified)"
