#!/usr/bin/env bash
# Why temporal-hpc's mandelbrot-dyn with `consldt(grid)` alone at its three launches (no threshold)
# fails at 2,048 x 2,048 ("launch would exceed cudaLimitDevRuntimePendingLaunchCount" from its own
# cudaGetLastError check in the aggregated copy of its recursion), while the same with threshold
# passes. Builds the pack's md all3 G (and W, TG) variant with knobs and runs the medium input.
#   run on the GPU from the repo root, with gpu-tp-pos carried (bench/probes/thirdparty/position_pack.py)
set -uo pipefail
P=gpu-tp-pos; out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
w=$(mktemp -d)
C=$(cd "$P/compat/png" && pwd)
builds=(${BUILDS:-"G:" "G@stats:-DDPOPT_STATS" "G@pool1M:-DDPOPT_POOL_RECORDS=1048576" "G@nullstream:-DDPOPT_DIRECT_STREAM=0"
        "W:" "W@stats:-DDPOPT_STATS" "TG:" "TG@stats:-DDPOPT_STATS" "orig:"})
reps=${REPS:-2}
for b in "${builds[@]}"; do
  name=${b%%:*}; defs=${b#*:}; v=${name%%@*}
  d="$w/$name"; mkdir -p "$d"; cp -r "$P/prog/md/." "$d/"
  [ "$v" != orig ] && cp "$P/variants/md/all3/$v/mandelbrot-dyn.cu" "$d/"
  # shellcheck disable=SC2086
  (cd "$d" && $nvcc -O3 -arch=sm_90 -rdc=true -diag-suppress 2464 -I"$C" -Xcompiler -fopenmp \
     -DcudaThreadSynchronize=cudaDeviceSynchronize -DW=2048 -DH=2048 -DMAX_DWELL=512 -DMAX_DEPTH=5 -DMIN_SIZE=8 \
     $defs mandelbrot-dyn.cu -o app -lcudadevrt > build.log 2>&1 || echo "BUILD FAILED $name: $(grep -m2 error build.log)") &
done
wait
{
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  for b in "${builds[@]}"; do
    name=${b%%:*}
    [ -x "$w/$name/app" ] || { echo "$name not built"; continue; }
    for rep in $(seq "$reps"); do
      (cd "$w/$name" && timeout 60 ./app > run.out 2> run.err); rc=$?
      errs=$(grep -c "exceed" "$w/$name/run.err" "$w/$name/run.out" | awk -F: '{s+=$2} END {print s+0}')
      echo "$name rep=$rep rc=$rc exceed_msgs=$errs $(grep -m1 -i 'time\|ms' "$w/$name/run.out" | head -c 200)"
      [ "$rep" = 1 ] && grep '^dpopt_stats' "$w/$name/run.out" "$w/$name/run.err" 2>/dev/null | sed 's/^[^:]*://'
    done
  done
} 2>&1 | tee "$out/md_grid_probe.txt"
