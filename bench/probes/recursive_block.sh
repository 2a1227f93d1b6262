#!/usr/bin/env bash
# Investigation of the hang of block aggregation on a recursive kernel 5
# levels deep (README, Known problems; docs/AGGREGATION.md). dpopt refuses
# block/multiblock on recursive kernels; DPOPT_ALLOW_RECURSIVE_BLOCK=1 lifts
# that for this probe only.
#   bash bench/probes/recursive_block.sh prepare   # here: needs cargo
#   bash bench/probes/recursive_block.sh run        # on the GPU (carry gpu-probe)
# `run` builds tree_descendants and tree_heights with consldt(block) (and
# warp/grid for comparison), with launch-parameter budgets of 7168, 2048 and
# 512 bytes (DPOPT_PARAM_BYTES) and with -DDPOPT_STATS, then runs depth 4 and
# 5 with a 30 s limit, recording GPU utilisation when a run hangs and the
# launch counters otherwise. Output: $OUT (or ./gpu-out)/recursive_block.txt.
set -u
cd "$(dirname "$0")/../.."
dir=gpu-probe
case ${1:-} in
  prepare)
    cargo build --release --quiet || exit 1
    rm -rf "$dir" && mkdir -p "$dir/src" && cp -r examples/common "$dir/src/common"
    for ex in tree_descendants tree_heights; do
      for g in block warp grid; do
        awk -v p="#pragma dp consldt($g)" '/^[ \t]*#[ \t]*pragma[ \t]+dp/ { print p; next } { print }' \
          "examples/$ex.cu" > "$dir/tmp.cu"
        DPOPT_ALLOW_RECURSIVE_BLOCK=1 target/release/dpopt transform "$dir/tmp.cu" -o "$dir/src/${ex}__$g.cu" || exit 1
      done
    done
    rm -f "$dir/tmp.cu"
    echo "prepared $(ls "$dir/src" | grep -c '\.cu$') sources in $dir/"
    ;;
  run)
    out=${OUT:-gpu-out}; mkdir -p "$out" "$dir/bin"
    nvcc=${NVCC:-nvcc}; command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
    for src in "$dir"/src/*.cu; do
      name=$(basename "$src" .cu)
      for bytes in 7168 2048 512; do
        [ "${name##*__}" = block ] || [ "$bytes" = 7168 ] || continue
        echo "$src $dir/bin/${name}__p$bytes -DDPOPT_PARAM_BYTES=$bytes -DDPOPT_STATS"
      done
    done | xargs -P "$(nproc)" -n 4 sh -c "$nvcc"' -O3 -rdc=true -arch=sm_90 $2 $3 -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED $1"'
    for bin in "$dir"/bin/*; do
      case $bin in *.log) continue ;; esac
      for depth in 4 5; do
        "$bin" --depth "$depth" --outdeg 32 --sparsity 1 --reps 1 > "$dir/out.txt" 2>&1 &
        pid=$!; t=0
        while kill -0 "$pid" 2>/dev/null && [ "$t" -lt 300 ]; do sleep 0.1; t=$((t + 1)); done
        if kill -0 "$pid" 2>/dev/null; then
          echo "$(basename "$bin") depth $depth: HANG; gpu: $(nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader)"
          kill -9 "$pid"; wait "$pid" 2>/dev/null
        else
          wait "$pid"; rc=$?
          echo "$(basename "$bin") depth $depth: exit $rc; $(grep '^result .*impl=cdp' "$dir/out.txt" | cut -c1-140); $(grep '^dpopt_stats' "$dir/out.txt" | tail -n1)"
        fi
      done
    done | tee "$out/recursive_block.txt"
    ;;
  *) echo "usage: $0 prepare | run" >&2; exit 2 ;;
esac
