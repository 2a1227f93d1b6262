#!/usr/bin/env bash
# Probe of the split serial version running callees in place and splitting recursions
# (src/barrier_split.rs, `Step::Call`; the split serial version's own launches of a recursive
# child made as written): tests/fixtures/barrier_callees.cu (Mariani-Silver subdivision whose
# border reduction lives in `border_value`, a recursion whose block is the parent's own; a
# segmented sum through a void helper and an assigned result) and NVIDIA's cdpSimplePrint
# (a recursion whose barrier lives in `print_info`) with `threshold(128)` at its recursive launch; and
# the fixture with every site also aggregated by grid, and cdpSimplePrint aggregated (grid, warp) and with
# a bare pragma, whose callees read positions (their copies, src/position_clone.rs); and
# tests/fixtures/tail_levels.cu (a BFS whose levels chain through cudaStreamTailLaunch, the grid's last
# block launching the next: as annotated, threshold with warp aggregation, whose aggregated launch must
# stay in the tail stream).
#
#   bench/probes/barrier_callees.sh prepare   # here: needs target/release/dpopt and, for the
#                                             # sample, /tmp/vendor/cdpSimplePrint; writes gpu-callees/
#   bench/probes/barrier_callees.sh run       # on the GPU (carry gpu-callees): $OUT/barrier_callees.txt
#
# Each fixture build prints `verified=yes` only when every pixel and sum matches the CPU's replica,
# and a checksum that must equal the original's. Builds: as annotated, every child serial
# (-DDPOPT_THRESHOLD=1048576), none (=1), with stats. cdpSimplePrint: the number of BLOCK lines
# (every block of the recursion prints one) must equal the original's, at depths 2-4.
set -uo pipefail
cd "$(dirname "$0")/../.."
fx=tests/fixtures/barrier_callees.cu
case "${1:-}" in
prepare)
  dpopt=target/release/dpopt
  rm -rf gpu-callees && mkdir -p gpu-callees
  cp "$fx" gpu-callees/bk_orig.cu
  "$dpopt" transform "$fx" -o gpu-callees/bk_dp.cu
  # every site also aggregated by grid: the callees that read threadIdx run
  # as their copies taking the positions (src/position_clone.rs)
  sed 's|^\(#pragma dp .*\)$|\1 consldt(grid)|' "$fx" > gpu-callees/t.cu
  "$dpopt" transform gpu-callees/t.cu -o gpu-callees/bk_G.cu
  rm -f gpu-callees/t.cu
  cp tests/fixtures/tail_levels.cu gpu-callees/tl_orig.cu
  "$dpopt" transform tests/fixtures/tail_levels.cu -o gpu-callees/tl_dp.cu
  sp=/tmp/vendor/cdpSimplePrint/cdpSimplePrint.cu
  if [ -f "$sp" ]; then
    cp -r /tmp/vendor/common gpu-callees/common
    cp "$sp" gpu-callees/sp_orig.cu
    sed 's|^\( *\)cdp_kernel<<<gridDim.x, blockDim.x>>>|\1#pragma dp threshold(128)\n\1cdp_kernel<<<gridDim.x, blockDim.x>>>|' "$sp" > gpu-callees/t.cu
    "$dpopt" transform gpu-callees/t.cu -I gpu-callees/common -o gpu-callees/sp_dp.cu
    # aggregated (grid, warp) and the bare pragma's default: `print_info`
    # reads threadIdx and blockIdx, so these take its copy
    for v in "G:threshold(128) consldt(grid)" "W:consldt(warp)" "D:"; do
      sed "s|^\( *\)cdp_kernel<<<gridDim.x, blockDim.x>>>|\1#pragma dp ${v#*:}\n\1cdp_kernel<<<gridDim.x, blockDim.x>>>|" "$sp" > gpu-callees/t.cu
      "$dpopt" transform gpu-callees/t.cu -I gpu-callees/common -o "gpu-callees/sp_${v%%:*}.cu"
    done
    rm -f gpu-callees/t.cu
  fi
  ls gpu-callees
  ;;
run)
  out=${OUT:-gpu-out}; mkdir -p "$out"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  w=$(mktemp -d)
  builds=("bk_orig:" "bk_dp:" "bk_dp@serial:-DDPOPT_THRESHOLD=1048576" "bk_dp@launch:-DDPOPT_THRESHOLD=1"
          "bk_dp@stats:-DDPOPT_STATS -DDPOPT_THRESHOLD=1048576" "bk_G:" "bk_G@launch:-DDPOPT_THRESHOLD=1"
          "bk_G@stats:-DDPOPT_STATS")
  builds+=("tl_orig:" "tl_dp:" "tl_dp@serial:-DDPOPT_THRESHOLD=1048576" "tl_dp@launch:-DDPOPT_THRESHOLD=1")
  [ -f gpu-callees/sp_dp.cu ] && builds+=("sp_orig:" "sp_dp:" "sp_dp@launch:-DDPOPT_THRESHOLD=1" "sp_dp@stats:-DDPOPT_STATS"
                                          "sp_G:" "sp_G@launch:-DDPOPT_THRESHOLD=1" "sp_W:" "sp_D:")
  for b in "${builds[@]}"; do
    name=${b%%:*}; defs=${b#*:}; src=gpu-callees/${name%%@*}.cu
    # shellcheck disable=SC2086
    $nvcc -O3 -rdc=true -arch=sm_90 -Igpu-callees/common $defs -o "$w/$name" "$src" -lcudadevrt > "$w/$name.log" 2>&1 ||
      echo "BUILD FAILED $name: $(grep -m3 error "$w/$name.log")" &
  done
  wait
  {
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    declare -A ref=()
    for b in "${builds[@]}"; do
      name=${b%%:*}
      [ -x "$w/$name" ] || { echo "$name not built"; continue; }
      case "$name" in
      bk_*)
        for size in 1024 2048; do
          for rep in 1 2; do
            line=$(timeout 60 "$w/$name" "$size" 2>&1); rc=$?
            sum=$(echo "$line" | grep -o 'checksum=[0-9a-f]*' | head -n1)
            [ -z "${ref[$size]:-}" ] && ref[$size]=$sum
            same=$([ -n "$sum" ] && [ "$sum" = "${ref[$size]}" ] && echo SAME || echo DIFF)
            echo "$name w=$size rep=$rep rc=$rc $same $(echo "$line" | grep -o 'time_ms=[0-9.]* verified=[a-z]* checksum=[0-9a-f]*.*')"
            [[ "$name" == *@stats ]] && [ "$rep" = 1 ] && echo "$line" | grep '^dpopt_stats'
          done
        done ;;
      tl_*)
        for size in 192 512; do
          for rep in 1 2 3; do
            line=$(timeout 60 "$w/$name" "$size" 2>&1); rc=$?
            sum=$(echo "$line" | grep -o 'checksum=[0-9a-f]*' | head -n1)
            [ -z "${ref[tl$size]:-}" ] && ref[tl$size]=$sum
            same=$([ -n "$sum" ] && [ "$sum" = "${ref[tl$size]}" ] && echo SAME || echo DIFF)
            echo "$name w=$size rep=$rep rc=$rc $same $(echo "$line" | grep -o 'time_ms=[0-9.]* verified=[a-z]* checksum=[0-9a-f]*.*')"
          done
        done ;;
      sp_*)
        for depth in 2 3 4; do
          txt=$(timeout 60 "$w/$name" depth=$depth 2>&1); rc=$?
          n=$(echo "$txt" | grep -c 'BLOCK')
          [ -z "${ref[sp$depth]:-}" ] && ref[sp$depth]=$n
          same=$([ "$n" = "${ref[sp$depth]}" ] && echo SAME || echo DIFF)
          echo "$name depth=$depth rc=$rc $same blocks=$n $(echo "$txt" | grep -m1 -i -E 'error|fail' || true)"
          [[ "$name" == *@stats ]] && echo "$txt" | grep '^dpopt_stats'
        done ;;
      esac
    done
  } 2>&1 | tee "$out/barrier_callees.txt"
  ;;
*)
  echo "usage: $0 prepare|run" >&2
  exit 2 ;;
esac
