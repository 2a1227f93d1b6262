#!/usr/bin/env bash
# Probe of the serial version split at block barriers (src/barrier_split.rs): the fixture
# tests/fixtures/barrier_children.cu (a CSR row reduced in shared memory, an image tile
# smoothed with early returns before the barrier) as written and transformed, each build run
# with every child serial (-DDPOPT_THRESHOLD=1048576), none (=1) and as annotated.
#
#   bench/probes/barrier_split.sh prepare   # here: needs target/release/dpopt; writes gpu-split/
#   bench/probes/barrier_split.sh run       # on the GPU (carry gpu-split): writes $OUT/barrier_split.txt
#
# Variants: orig (CDP as written), dp (as annotated: threshold, coarsen), A{wa,bl,mu,gr} (the
# threshold with warp, block, multiblock 8 and grid aggregation), F (threshold and floor where the
# child returns after its barriers only); g3_T: tests/corpus/grids_3d.cu with every launch
# thresholded (its box filter takes dynamic shared memory). ONLY=bc_F runs the originals and
# that variant alone. Each
# binary prints `verified=yes` only when every row and pixel matches the CPU, and a checksum
# that must equal the original's.
set -uo pipefail
cd "$(dirname "$0")/../.."
fx=tests/fixtures/barrier_children.cu
case "${1:-}" in
prepare)
  dpopt=target/release/dpopt
  rm -rf gpu-split && mkdir -p gpu-split
  cp "$fx" gpu-split/bc_orig.cu
  "$dpopt" transform "$fx" -o gpu-split/bc_dp.cu
  for g in warp:wa block:bl "multiblock, 8:mu" grid:gr; do
    sed "s/^#pragma dp threshold(\([0-9]*\)).*/#pragma dp threshold(\1) consldt(${g%%:*})/" "$fx" > gpu-split/t.cu
    "$dpopt" transform gpu-split/t.cu -o "gpu-split/bc_A${g#*:}.cu"
  done
  # floor where the child has no early return before a barrier (not smooth_tile's)
  sed "/threshold(1024)/!s/^#pragma dp threshold(\([0-9]*\)).*/#pragma dp threshold(\1) floor/" "$fx" > gpu-split/t.cu
  "$dpopt" transform gpu-split/t.cu -o gpu-split/bc_F.cu
  # tests/corpus/grids_3d.cu: its 3x3 box filter (dynamic shared memory, an
  # early return after the barrier) thresholded, every other launch too
  cp tests/corpus/grids_3d.cu gpu-split/g3_orig.cu
  sed "s/^#pragma dp.*/#pragma dp threshold(128)/" tests/corpus/grids_3d.cu > gpu-split/t.cu
  "$dpopt" transform gpu-split/t.cu -o gpu-split/g3_T.cu
  rm -f gpu-split/t.cu
  ls gpu-split
  ;;
run)
  out=${OUT:-gpu-out}; mkdir -p "$out"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  w=$(mktemp -d)
  builds=("bc_orig:" "g3_orig:")
  for src in gpu-split/bc_*.cu gpu-split/g3_*.cu; do
    v=$(basename "$src" .cu)
    case "$v" in *_orig) continue ;; esac
    [ -n "${ONLY:-}" ] && [ "$v" != "$ONLY" ] && continue
    builds+=("$v:" "$v@serial:-DDPOPT_THRESHOLD=1048576" "$v@launch:-DDPOPT_THRESHOLD=1" "$v@stats:-DDPOPT_STATS -DDPOPT_THRESHOLD=1048576")
  done
  for b in "${builds[@]}"; do
    name=${b%%:*}; defs=${b#*:}; src=gpu-split/${name%%@*}.cu
    # shellcheck disable=SC2086
    $nvcc -O3 -rdc=true -arch=sm_90 $defs -o "$w/$name" "$src" -lcudadevrt > "$w/$name.log" 2>&1 ||
      echo "BUILD FAILED $name: $(grep -m3 error "$w/$name.log")" &
  done
  wait
  {
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    declare -A ref=()
    for b in "${builds[@]}"; do
      name=${b%%:*}
      [ -x "$w/$name" ] || { echo "$name not built"; continue; }
      reps=2
      case "$name" in *@launch|*@stats) reps=1 ;; esac
      for rep in $(seq $reps); do
        line=$(timeout 60 "$w/$name" "${ROWS:-20000}" 2>&1); rc=$?
        sum=$(echo "$line" | grep -o 'checksum=[0-9a-f]*' | head -n1)
        prefix=${name%%_*}
        [ -z "${ref[$prefix]:-}" ] && ref[$prefix]=$sum
        same=$([ -n "$sum" ] && [ "$sum" = "${ref[$prefix]}" ] && echo SAME || echo DIFF)
        echo "$name rep=$rep rc=$rc $same $(echo "$line" | grep -o 'time_ms=[0-9.]* verified=[a-z]* checksum=[0-9a-f]* launch_failures=[0-9]*')"
        [[ "$name" == *@stats ]] && echo "$line" | grep '^dpopt_stats'
      done
    done
  } 2>&1 | tee "$out/barrier_split.txt"
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2
  ;;
esac
