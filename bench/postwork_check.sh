#!/usr/bin/env bash
# GPU check of postwork / CDP1 migration (`dpopt transform --migrate-sync`,
# docs/PRAGMA.md "Postwork and CDP1 migration"): the CDP1 programs of
# tests/postwork/ cannot compile for sm_90 as written (device-side
# cudaDeviceSynchronize), so each is migrated here and, on the GPU, built,
# run and verified against its CPU reference; the CDP1 tree program's
# programs' checksums must also equal those of the CDP2 examples
# (examples/tree_heights.cu, examples/tree_descendants.cu, as written) on the
# same trees.
#
#   bench/postwork_check.sh prepare   # here: needs cargo; writes gpu-postwork/
#   bench/postwork_check.sh run       # on the GPU: needs nvcc (PATH, or /usr/local/cuda/bin);
#                                     # reads gpu-postwork/, writes $OUT/postwork (or ./gpu-out/postwork)
#
# Each program runs in three builds: plain, -DDPOPT_STATS (counters), and
# -DDPOPT_STATS -DDPOPT_POSTWORK_PER_THREAD (every thread tail-launches its own
# continuation: the fallback path, exercised everywhere).
# A run passes when the program exits 0 with `verified=yes` and
# `launch_failures=0`, its -DDPOPT_STATS builds report no postwork run early
# (`early=0`: a continuation that found no room at all), and, for the trees,
# the checksums match the examples'. Stress runs shrink the device heap
# (records cannot be allocated: per-thread continuations) and the
# pending-launch limit (retries); they must still verify.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=gpu-postwork

prepare() {
  cargo build --release --quiet
  local dpopt=target/release/dpopt
  rm -rf "$BUILD" && mkdir -p "$BUILD/src"
  cp -r examples/common "$BUILD/src/common"
  for p in tests/postwork/*.cu; do
    local name; name=$(basename "$p" .cu)
    "$dpopt" transform --migrate-sync -I examples "$p" -o "$BUILD/src/$name.cu"
  done
  # The CDP2 examples as written (nvcc ignores their `#pragma dp`): the reference checksums.
  cp examples/tree_heights.cu "$BUILD/src/tree_heights_ref.cu"
  cp examples/tree_descendants.cu "$BUILD/src/tree_descendants_ref.cu"
  # Runs: name|binary|arguments|checks (tree: compare with the examples' cdp checksum)|builds
  # (perthread only where every parent thread's continuation fits the pending-launch limit at once:
  # all of them are pending until their grids end; --pending is stripped for the examples' reference runs)
  cat > "$BUILD/runs.txt" <<'RUNS'
sum|recursive_sum|--n 1000000 --leaf 2048|-|plain stats perthread
sum-deep|recursive_sum|--n 4000000 --leaf 256|-|plain stats perthread
sum-heap1|recursive_sum|--n 4000000 --leaf 256 --heap 1|-|plain stats
qsort|quicksort_cdp1|--n 65536|-|plain stats perthread
qsort-large|quicksort_cdp1|--n 262144 --seed 9|-|plain stats perthread
block|block_idiom|--n 1048576|-|plain stats
block-small|block_idiom|--n 8192 --pending 16384|-|plain stats perthread
pragma|pragma_then_sync|--rows 4096|-|plain stats perthread
shapes|shapes||-|plain stats perthread
buffered|buffered|--rows 20000|-|plain stats
buffered-small|buffered|--rows 2000|-|plain stats perthread
recwait|recursive_wait|--fanout 4 --depth 6|-|plain stats
recwait-wide|recursive_wait|--fanout 32 --depth 3|-|plain stats
tree-d4k32s1|tree_heights_cdp1|--depth 4 --outdeg 32 --sparsity 1 --reps 1|tree|plain stats
tree-d3k64s0|tree_heights_cdp1|--depth 3 --outdeg 64 --sparsity 0 --reps 1|tree|plain stats
tree-d6k4s0|tree_heights_cdp1|--depth 6 --outdeg 4 --sparsity 0 --reps 1 --pending 65536|tree|plain stats perthread
tree-d8k3s0|tree_heights_cdp1|--depth 8 --outdeg 3 --sparsity 0 --reps 1 --pending 65536|tree|plain stats perthread
desc-d4k32s1|tree_descendants_cdp1|--depth 4 --outdeg 32 --sparsity 1 --reps 1|desc|plain stats
desc-d5k8s0|tree_descendants_cdp1|--depth 5 --outdeg 8 --sparsity 0 --reps 1|desc|plain stats
desc-d7k3s0|tree_descendants_cdp1|--depth 7 --outdeg 3 --sparsity 0 --reps 1 --pending 65536|desc|plain stats perthread
tree-heap1|tree_heights_cdp1|--depth 6 --outdeg 4 --sparsity 0 --reps 1 --heap 1 --pending 16384|tree|plain stats
RUNS
  echo "prepared $BUILD: $(ls "$BUILD/src" | wc -l) files; on the GPU: bench/postwork_check.sh run"
}

run() {
  local nvcc; nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  local out="${OUT:-gpu-out}/postwork"
  local bin="$BUILD/bin"  # binaries stay out of $OUT (only logs and the summary come back)
  mkdir -p "$bin" "$out/logs"
  [ -d "$BUILD/src" ] || { echo "no $BUILD/: run 'bench/postwork_check.sh prepare' first"; exit 2; }
  "$nvcc" --version | tail -n1 > "$out/nvcc.txt"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/gpu.txt" 2>/dev/null || true
  # Builds, in parallel: each program as is and with -DDPOPT_STATS.
  local pids=()
  for src in "$BUILD"/src/*.cu; do
    local name; name=$(basename "$src" .cu)
    ( "$nvcc" -O3 -rdc=true -arch=sm_90 -I "$BUILD/src" -o "$bin/$name" "$src" -lcudadevrt \
        > "$out/logs/build-$name.txt" 2>&1 || echo "BUILD FAILED" >> "$out/logs/build-$name.txt" ) &
    pids+=($!)
    case "$name" in *_ref) continue ;; esac
    ( "$nvcc" -O3 -rdc=true -arch=sm_90 -DDPOPT_STATS -I "$BUILD/src" -o "$bin/$name.stats" "$src" -lcudadevrt \
        > "$out/logs/build-$name.stats.txt" 2>&1 || echo "BUILD FAILED" >> "$out/logs/build-$name.stats.txt" ) &
    pids+=($!)
    ( "$nvcc" -O3 -rdc=true -arch=sm_90 -DDPOPT_STATS -DDPOPT_POSTWORK_PER_THREAD -I "$BUILD/src" -o "$bin/$name.perthread" "$src" -lcudadevrt \
        > "$out/logs/build-$name.perthread.txt" 2>&1 || echo "BUILD FAILED" >> "$out/logs/build-$name.perthread.txt" ) &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p" || true; done
  local failed=0 summary="$out/summary.md"
  {
    echo "# postwork check ($(cat "$out/nvcc.txt"); $(cat "$out/gpu.txt" 2>/dev/null))"
    echo
    echo "| run | build | verdict | time_ms | checksum | reference checksum | postwork counters (stats build) |"
    echo "|---|---|---|---|---|---|---|"
  } > "$summary"
  while IFS='|' read -r run prog args check builds; do
    [ -n "$run" ] || continue
    for build in $builds; do
      local exe="$bin/$prog" log="$out/logs/run-$run-$build.txt"
      [ "$build" = plain ] || exe="$bin/$prog.$build"
      local verdict=ok rc=0
      if [ ! -x "$exe" ]; then
        verdict="FAIL (no binary: $(tail -n 3 "$out/logs/build-$(basename "$exe").txt" | tr '\n' ' '))"
      else
        timeout 120 "$exe" $args > "$log" 2>&1 || rc=$?
        [ "$rc" -eq 0 ] || verdict="FAIL (exit $rc)"
      fi
      local result; result=$(grep '^result ' "$log" 2>/dev/null | head -n1 || true)
      grep -q 'verified=yes' <<< "$result" || verdict="${verdict/#ok/FAIL (not verified)}"
      grep -q 'launch_failures=0' <<< "$result" || verdict="${verdict/#ok/FAIL (launch failures)}"
      local counters; counters=$(grep '^dpopt_postwork ' "$log" 2>/dev/null | sed 's/dpopt_postwork //' | tr '\n' ';' || true)
      if [ "$build" != plain ] && grep -q 'early=[1-9]' <<< "$counters"; then
        verdict="${verdict/#ok/FAIL (postwork run early)}"
      fi
      if [ "$build" = perthread ] && grep -q 'block_continuations=[1-9]' <<< "$counters"; then
        verdict="${verdict/#ok/FAIL (block continuations in a per-thread build)}"
      fi
      local time sum ref="-"
      time=$(grep -o 'time_ms=[0-9.]*' <<< "$result" | cut -d= -f2 || true)
      sum=$(grep -o 'checksum=[0-9a-f]*' <<< "$result" | cut -d= -f2 || true)
      if [ "$check" = tree ] || [ "$check" = desc ]; then
        # The examples as written (CDP2, top-down) on the same tree: their `impl=cdp` checksums.
        local targs; targs=$(sed 's/ --heap [0-9]*//; s/ --pending [0-9]*//' <<< "$args")
        local key; key=$(tr ' ' '_' <<< "$targs")
        local refh="$out/logs/ref-heights$key.txt" refd="$out/logs/ref-desc$key.txt"
        [ -f "$refd" ] || timeout 300 "$bin/tree_descendants_ref" $targs > "$refd" 2>&1 || true
        local rh="" rd mh="" md
        rd=$(grep '^result example=tree_descendants .*impl=cdp ' "$refd" | head -n1 | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2 || true)
        md=$(grep '^result example=tree_descendants ' "$log" | head -n1 | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2 || true)
        ref="desc ${rd:-?}"
        sum="desc ${md:-?}"
        if [ "$check" = tree ]; then
          [ -f "$refh" ] || timeout 300 "$bin/tree_heights_ref" $targs > "$refh" 2>&1 || true
          rh=$(grep '^result example=tree_heights .*impl=cdp ' "$refh" | head -n1 | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2 || true)
          mh=$(grep '^result example=tree_heights ' "$log" | head -n1 | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2 || true)
          ref="heights ${rh:-?}, $ref"
          sum="heights ${mh:-?}, $sum"
        fi
        if [ -z "$rd" ] || [ "$rd" != "$md" ] || [ "$rh" != "$mh" ]; then
          verdict="${verdict/#ok/FAIL (checksum differs from the examples)}"
        fi
      fi
      [ "${verdict:0:2}" = ok ] || failed=$((failed + 1))
      echo "| $run ($args) | $build | $verdict | ${time:--} | ${sum:--} | $ref | ${counters:--} |" >> "$summary"
      echo "$run $build: $verdict"
    done
  done < "$BUILD/runs.txt"
  echo >> "$summary"
  echo "failed: $failed" >> "$summary"
  cat "$summary"
  [ "$failed" -eq 0 ]
}

case "${1:-}" in
  prepare) prepare ;;
  run) run ;;
  *) echo "usage: $0 prepare|run"; exit 2 ;;
esac
