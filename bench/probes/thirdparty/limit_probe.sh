#!/usr/bin/env bash
# temporal-hpc's mandelbrot-dyn with `threshold` at its recursive launch alone (split_pack.py's s2_block
# variants T and TS), 2,048 x 2,048: as built by gpu_run.sh, with dpopt's direct launches in the NULL stream
# (-DDPOPT_DIRECT_STREAM=0, _null), and with the pending-launch limit raised to 32,768 in main (_lim).
# Run from the pack (gpu-tp-split/, a copy of /tmp/thirdparty/pack-split) on the GPU machine:
#   bash ../bench/probes/thirdparty/limit_probe.sh      -> $OUT/lp/limit_probe.txt
set -u
out=${OUT:-out}; mkdir -p "$out/lp"; w=$(mktemp -d)
MD="-O3 -arch=sm_90 -rdc=true -Xcompiler -fopenmp -diag-suppress 2464 -Icompat/png -DcudaThreadSynchronize=cudaDeviceSynchronize -DW=2048 -DH=2048 -DMAX_DWELL=512 -DMAX_DEPTH=5 -DMIN_SIZE=8"
for v in orig T TS; do
  if [ $v = orig ]; then f=prog/md/mandelbrot-dyn.cu; else f=variants/md/s2_block/$v/mandelbrot-dyn.cu; fi
  cp "$f" "$w/md_$v.cu"
  sed 's/^int main(int argc, char \*\*argv) {/&\n\tcudaDeviceSetLimit(cudaLimitDevRuntimePendingLaunchCount, 32768);/' "$f" > "$w/md_${v}_lim.cu"
  # shellcheck disable=SC2086
  nvcc $MD "$w/md_$v.cu" -o "$w/md_$v" -lcudadevrt > "$w/b_$v.log" 2>&1 &
  # shellcheck disable=SC2086
  nvcc $MD "$w/md_${v}_lim.cu" -o "$w/md_${v}_lim" -lcudadevrt > "$w/bl_$v.log" 2>&1 &
  # shellcheck disable=SC2086
  [ $v != orig ] && nvcc $MD -DDPOPT_DIRECT_STREAM=0 "$w/md_$v.cu" -o "$w/md_${v}_null" -lcudadevrt > "$w/bn_$v.log" 2>&1 &
done
wait
for b in md_orig md_orig_lim md_T md_T_lim md_T_null md_TS md_TS_lim md_TS_null; do
  [ -x "$w/$b" ] || { echo "$b not built"; continue; }
  for rep in 1 2; do
    (cd "$w" && rm -f ./*.png ./*.ppm; timeout 60 "./$b" > run.txt 2>&1; rc=$?
     img=$(ls ./*.png ./*.ppm 2>/dev/null | head -1); sum=$([ -n "$img" ] && md5sum "$img" | cut -c1-12)
     echo "$b rep=$rep rc=$rc image=$sum $(grep -m1 -i -E 'assert|exceed|error' run.txt | cut -c1-100)")
  done
done | tee "$out/lp/limit_probe.txt"
