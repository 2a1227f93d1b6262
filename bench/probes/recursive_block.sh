#!/usr/bin/env bash
# Investigation of the hang of block aggregation on a recursive kernel 5
# levels deep (README, Known problems; docs/AGGREGATION.md, "Launch
# resources"): 7 KiB launch parameters with a large pending-launch limit.
#   bash bench/probes/recursive_block.sh prepare   # here: needs cargo
#   bash bench/probes/recursive_block.sh run        # on the GPU (carry gpu-probe)
# `run` builds tree_descendants and tree_heights with consldt(block),
# consldt(multiblock, 8), warp and grid, block also with launch-parameter
# budgets of 2048 and 512 bytes (the default is 2048 since the fix: pass
# -DDPOPT_PARAM_BYTES=7168 in the first build line to reproduce the hang) (DPOPT_PARAM_BYTES) and with its aggregated
# launches in the NULL stream, all with -DDPOPT_STATS; then runs depth 4 and 5
# (and depth 5 cut at fewer nodes, or with another pending-launch limit) with
# a time limit (PROBE_TIMEOUT, 15 s), sampling GPU utilisation when a run
# hangs and printing the launch counters otherwise.
# Output: $OUT (or ./gpu-out)/recursive_block.txt.
set -u
cd "$(dirname "$0")/../.."
dir=gpu-probe
case ${1:-} in
  prepare)
    cargo build --release --quiet || exit 1
    rm -rf "$dir" && mkdir -p "$dir/src" && cp -r examples/common "$dir/src/common"
    for ex in tree_descendants tree_heights; do
      for g in block multiblock warp grid; do
        p="#pragma dp consldt($g)"; [ $g = multiblock ] && p="#pragma dp consldt(multiblock, 8)"
        awk -v p="$p" '/^[ \t]*#[ \t]*pragma[ \t]+dp/ { print p; next } { print }' \
          "examples/$ex.cu" > "$dir/tmp.cu"
        target/release/dpopt transform "$dir/tmp.cu" -o "$dir/src/${ex}__$g.cu" || exit 1
      done
    done
    rm -f "$dir/tmp.cu"
    echo "prepared $(ls "$dir/src" | grep -c '\.cu$') sources in $dir/"
    ;;
  run)
    out=${OUT:-gpu-out}; mkdir -p "$out" "$dir/bin"
    nvcc=${NVCC:-nvcc}; command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
    # builds: SOURCE BINARY DEFINES
    for src in "$dir"/src/*.cu; do
      name=$(basename "$src" .cu)
      echo "$src $dir/bin/$name -DDPOPT_STATS"
      if [ "${name##*__}" = block ]; then
        echo "$src $dir/bin/${name}-p2048 -DDPOPT_STATS,-DDPOPT_PARAM_BYTES=2048"
        echo "$src $dir/bin/${name}-p512 -DDPOPT_STATS,-DDPOPT_PARAM_BYTES=512"
        echo "$src $dir/bin/${name}-aggnull -DDPOPT_STATS,-DDPOPT_AGG_STREAM=0"
      fi
    done | xargs -P "$(nproc)" -n 3 sh -c "$nvcc"' -O3 -rdc=true -arch=sm_90 $(echo $2 | tr , " ") -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED $1"'
    limit=$(( ${PROBE_TIMEOUT:-15} * 10 ))
    # runs: BINARY ARGS...
    {
      for ex in tree_descendants tree_heights; do
        echo "${ex}__warp --depth 5"
        echo "${ex}__grid --depth 5"
        echo "${ex}__block --depth 4"
        echo "${ex}__block --depth 5"
        echo "${ex}__block-p512 --depth 5"
        echo "${ex}__multiblock --depth 4"
      done
      echo "tree_descendants__block --depth 5 --max-nodes 300000"
      echo "tree_descendants__block --depth 5 --max-nodes 1000000"
      echo "tree_descendants__block --depth 5 --max-nodes 2000000"
      echo "tree_descendants__block --depth 5 --pending 200000"
      echo "tree_descendants__block --depth 5 --pending 4000000"
      echo "tree_descendants__block-p2048 --depth 5"
      echo "tree_descendants__block-aggnull --depth 5"
      echo "tree_descendants__multiblock --depth 5"
    } | while read -r b args; do
      bin=$dir/bin/$b
      # shellcheck disable=SC2086
      "$bin" $args --outdeg 32 --sparsity 1 --reps 1 > "$dir/out.txt" 2>&1 &
      pid=$!; t=0; samples=""
      while kill -0 "$pid" 2>/dev/null && [ "$t" -lt "$limit" ]; do
        sleep 0.1; t=$((t + 1))
        [ $((t % 30)) -eq 0 ] && samples="$samples [$(nvidia-smi --query-gpu=utilization.gpu,power.draw --format=csv,noheader)]"
      done
      if kill -0 "$pid" 2>/dev/null; then
        echo "$b $args: HANG after $((t / 10)) s; gpu samples (every 3 s):$samples; output: $(grep -v '^info' "$dir/out.txt" | head -c 300 | tr '\n' ' ')"
        kill -9 "$pid"; wait "$pid" 2>/dev/null
      else
        wait "$pid"; rc=$?
        echo "$b $args: exit $rc in $((t / 10)) s; $(grep '^info' "$dir/out.txt" | head -n1 | cut -c1-100); $(grep '^result .*impl=cdp' "$dir/out.txt" | cut -c1-160); $(grep '^dpopt_stats' "$dir/out.txt" | tail -n1)"
      fi
    done | tee "$out/recursive_block.txt"
    ;;
  *) echo "usage: $0 prepare | run" >&2; exit 2 ;;
esac
