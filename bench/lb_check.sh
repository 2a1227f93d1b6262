#!/usr/bin/env bash
# The load-balanced flat versions (impl=flat-lb) in one call on the GPU
# machine, before the expensive sweep. After `bench/gpu_check.sh prepare`
# here (carry gpu-build):
#
#   bash bench/lb_check.sh [check|exp|all]     (default: check)
#
# check: builds every example as written (gpu-build/src/<ex>__orig.cu: the
#   binary runs flat, flat-lb and cdp), runs it on every suite input
#   (gpu-build/inputs.txt, INPUTS=regex selects lines "example|args") and
#   checks each flat-lb row: verified by the program (every output element
#   compared with the CPU reference; outputs poisoned before each run where
#   flat-lb stores them), no failed launch, and the same checksum as the
#   original CDP program (bezier: as the flat version, within the program's
#   tolerance instead). CDP runs only with CDP=1 (default 0: DPOPT_FLAT_ONLY=1,
#   flat and flat-lb only; the checksum is then compared with flat's, which
#   the sweep compares with CDP's). REPS timed runs (default 5), median.
#   Writes $OUT (or ./gpu-out)/lb.csv in the suite's format (dpopt-report
#   reads it with sweep.csv) and lb-summary.md; exit status 1 on a failure.
# exp: the timing experiments behind docs/PERFORMANCE.md's hypotheses on
#   the gap between dpopt's best and flat-lb: flat-lb of bfs/sssp rebuilt with
#   one launch + host round trip per level (LB_FRONTIER_LEVELS_PER_LAUNCH=1),
#   without the one-block mode (LB_FRONTIER_SMALL_EDGES=-1), 1 and 4 blocks
#   per SM, and items below 128 elements left to their thread
#   (LB_TWC_WARP_MIN=128, like threshold(128) serialization; also spmv, tc,
#   mstf); and dpopt's TCAg build at t128c8, with everything serialized
#   (DPOPT_THRESHOLD=1000000000: the parent alone, no device launch) and
#   its device launches (-DDPOPT_STATS). Writes $OUT/lb-exp.csv, and the
#   kernels' registers (cuobjdump -res-usage) to $OUT/lb-exp-resources.txt.
#   EXP_EXAMPLES (default "bfs sssp spmv tc mstf") and INPUTS narrow it.
# all: check, then exp.
# SANITIZE=1 (check): also compute-sanitizer memcheck of flat-lb on a small
#   input per example, where compute-sanitizer exists.
set -uo pipefail
cd "$(dirname "$0")/../gpu-build" || { echo "run bench/gpu_check.sh prepare first" >&2; exit 1; }
mode=${1:-check}
out=${OUT:-../gpu-out}
reps=${REPS:-5}
mkdir -p "$out" lb
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr ',' ' ')
examples=${EXAMPLES:-"bfs sssp spmv bezier tc sp mstf mstv tree_heights tree_descendants"}
echo "GPU: $gpu; nvcc: $("$nvcc" --version | tail -n1)"

# build SOURCE BINARY DEFINES(comma-separated or -) ... in parallel.
build() {
  xargs -P "$(nproc)" -n 3 sh -c \
    "$nvcc"' -O3 -rdc=true -arch=sm_90 -I src $(echo "$2" | tr , " " | sed "s/^-$//") -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || { echo "BUILD FAILED: $1"; cat "$1.log"; }'
}

inputs_of() {  # inputs_of EXAMPLE: its argument lines ("-" for none)
  local i
  i=$(grep "^$1|" inputs.txt | grep -E -- "${INPUTS:-.}" | cut -d'|' -f2 | sed "s|@DATA@|$PWD/data|g")
  [ -n "$i" ] && echo "$i" || echo "-"
}

field() {  # field NAME LINE
  echo "$2" | tr ' ' '\n' | sed -n "s/^$1=//p" | head -n1
}

check() {
  echo "$(date +%T) building"
  for ex in $examples; do echo "src/${ex}__orig.cu lb/$ex -"; done | build
  local csv=$out/lb.csv fail=0 runs=0
  echo "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu" > "$csv"
  {
    echo "| example | input | flat ms | flat-lb ms | cdp ms | flat / flat-lb | flat-lb verified | same checksum as | verdict |"
    echo "|---|---|---|---|---|---|---|---|---|"
  } > "$out/lb-summary.md"
  for ex in $examples; do
    [ -x "lb/$ex" ] || { echo "missing lb/$ex"; fail=1; continue; }
    while IFS= read -r args; do
      [ "$args" = "-" ] && args=""
      local flatonly=1; [ "${CDP:-0}" = 1 ] && flatonly=0
      # shellcheck disable=SC2086
      DPOPT_FLAT_ONLY=$flatonly timeout 300 "lb/$ex" $args --reps "$reps" > lb/out.txt 2>&1
      local rc=$?
      local flat lbl cdp
      flat=$(grep '^result .*impl=flat ' lb/out.txt | head -n1)
      lbl=$(grep '^result .*impl=flat-lb ' lb/out.txt | head -n1)
      cdp=$(grep '^result .*impl=cdp ' lb/out.txt | head -n1)
      local ref refname=cdp
      ref=$(field checksum "$cdp")
      if [ -z "$ref" ] || [ "$ex" = bezier ]; then ref=$(field checksum "$flat"); refname=flat; fi
      local ok=no
      if [ -n "$lbl" ] && [ "$(field verified "$lbl")" = yes ] && [ "$(field launch_failures "$lbl")" = 0 ] &&
         { [ "$ex" = bezier ] || [ "$(field checksum "$lbl")" = "$ref" ]; }; then ok=yes; fi
      [ "$ex" = bezier ] && refname="- (tolerance)"
      runs=$((runs + 1))
      [ "$ok" = yes ] || { fail=1; echo "FLAT-LB FAILED: $ex [$args] exit $rc"; tail -n 5 lb/out.txt; }
      local input tf tl tc ratio=-
      input=$(field input "${lbl:-$flat}"); [ -n "$input" ] || input=${args// /_}
      tf=$(field time_ms "$flat"); tl=$(field time_ms "$lbl"); tc=$(field time_ms "$cdp")
      [ -n "$tf" ] && [ -n "$tl" ] && ratio=$(awk -v a="$tf" -v b="$tl" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }')
      echo "| $ex | $input | ${tf:--} | ${tl:--} | ${tc:--} | $ratio | $(field verified "$lbl") | $refname | $ok |" >> "$out/lb-summary.md"
      for line in "$flat" "$lbl"; do
        [ -n "$line" ] || continue
        local impl v=no; impl=$(field impl "$line")
        if [ "$impl" = flat ]; then
          [ "$(field verified "$line")" = yes ] && [ "$(field launch_failures "$line")" = 0 ] && v=yes
        else v=$ok; fi
        echo "$ex,$input,orig,-,$impl,$(field time_ms "$line"),,$v,$gpu" >> "$csv"
      done
      echo "$(date +%T) $ex [$args] flat $tf flat-lb $tl ms: $ok"
    done <<< "$(inputs_of "$ex")"
  done
  echo >> "$out/lb-summary.md"
  if [ "$fail" = 0 ]; then echo "$runs inputs: ALL FLAT-LB VERIFIED" >> "$out/lb-summary.md"
  else echo "$runs inputs: FLAT-LB FAILURES" >> "$out/lb-summary.md"; fi
  cat "$out/lb-summary.md"
  if [ "${SANITIZE:-0}" = 1 ]; then sanitize || fail=1; fi
  return "$fail"
}

# compute-sanitizer memcheck (out-of-bounds, misaligned, races on shared
# memory with racecheck) of flat-lb on small inputs.
sanitize() {
  local cs=${CS:-compute-sanitizer}
  command -v "$cs" >/dev/null || cs=/usr/local/cuda/bin/compute-sanitizer
  [ -x "$cs" ] || command -v "$cs" >/dev/null || { echo "no compute-sanitizer: skipped"; return 0; }
  local bad=0
  while IFS='|' read -r ex args; do
    for tool in memcheck racecheck; do
      # shellcheck disable=SC2086
      DPOPT_FLAT_ONLY=1 timeout 300 "$cs" --tool "$tool" --error-exitcode 99 "lb/$ex" $args --reps 1 \
        > lb/san.txt 2>&1
      local rc=$?
      echo "$(date +%T) sanitize $tool $ex [$args]: exit $rc $(grep -c 'ERROR SUMMARY: 0 errors\|RACECHECK SUMMARY: 0 hazards' lb/san.txt) clean summary"
      [ "$rc" = 0 ] || { bad=1; grep -m 20 -i 'error\|hazard' lb/san.txt; }
    done
  done <<'SMALL'
bfs|--scale 10 --ef 16
bfs|--road 32
sssp|--scale 10 --ef 16
sssp|--road 32
spmv|--rows 4096 --max-row 1024
bezier|--lines 512 --max-tess 512
tc|--scale 10 --ef 16
sp|--vars 500 --clauses 4000 --k 5 --iters 2
mstf|--scale 10 --ef 16
mstv|--scale 10 --ef 16
tree_heights|--depth 3 --outdeg 32 --sparsity 1
tree_descendants|--depth 3 --outdeg 32 --sparsity 1
SMALL
  return "$bad"
}

# Timing experiments: one row per (example, input, build, impl).
exp() {
  echo "$(date +%T) building experiments"
  {
    for ex in bfs sssp; do
      echo "src/${ex}__orig.cu lb/${ex}__lpl1 -DLB_FRONTIER_LEVELS_PER_LAUNCH=1"
      echo "src/${ex}__orig.cu lb/${ex}__nosmall -DLB_FRONTIER_SMALL_EDGES=-1"
      echo "src/${ex}__orig.cu lb/${ex}__bpsm1 -DLB_FRONTIER_BLOCKS_PER_SM=1"
      echo "src/${ex}__orig.cu lb/${ex}__bpsm4 -DLB_FRONTIER_BLOCKS_PER_SM=4"
      echo "src/${ex}__TCAg.cu lb/${ex}__TCAg -DDPOPT_RUNTIME_KNOBS"
      echo "src/${ex}__TCAg.cu lb/${ex}__TCAg_stats -DDPOPT_RUNTIME_KNOBS,-DDPOPT_STATS"
    done
    for ex in bfs sssp spmv tc mstf; do
      echo "src/${ex}__orig.cu lb/${ex}__warp128 -DLB_TWC_WARP_MIN=128"
    done
    for ex in bfs sssp spmv tc mstf; do [ -x "lb/$ex" ] || echo "src/${ex}__orig.cu lb/$ex -"; done
  } | build
  local csv=$out/lb-exp.csv
  echo "example,input,build,knobs,impl,time_ms,verified,device_launches" > "$csv"
  erow() {  # erow EXAMPLE BUILD KNOBS OUTPUTFILE [LAUNCHES]
    grep '^result ' "$4" | while read -r line; do
      echo "$1,$(field input "$line"),$2,$3,$(field impl "$line"),$(field time_ms "$line"),$(field verified "$line"),${5:-}"
    done >> "$csv"
  }
  for ex in ${EXP_EXAMPLES:-bfs sssp spmv tc mstf}; do
    while IFS= read -r args; do
      [ "$args" = "-" ] && args=""
      for b in "" __lpl1 __nosmall __bpsm1 __bpsm4 __warp128; do
        [ -x "lb/$ex$b" ] || continue
        # shellcheck disable=SC2086
        DPOPT_FLAT_ONLY=1 timeout 300 "lb/$ex$b" $args --reps "$reps" > lb/out.txt 2>&1
        erow "$ex" "flat-lb${b:-__default}" - lb/out.txt
      done
      if [ -x "lb/${ex}__TCAg" ]; then
        for knobs in "128 8" "1000000000 8" "1000000000 1"; do
          set -- $knobs
          local l
          # shellcheck disable=SC2086
          l=$(DPOPT_THRESHOLD=$1 DPOPT_COARSEN=$2 timeout 300 "lb/${ex}__TCAg_stats" $args --reps 1 2>&1 |
              awk '/^dpopt_stats / { for (k = 3; k <= NF; k++) { split($k, kv, "="); x[kv[1]] = kv[2] }; d += x["direct"] + x["aggregated"] } END { print d + 0 }')
          # shellcheck disable=SC2086
          DPOPT_THRESHOLD=$1 DPOPT_COARSEN=$2 timeout 300 "lb/${ex}__TCAg" $args --reps "$reps" > lb/out.txt 2>&1
          erow "$ex" TCAg "t$1c$2" lb/out.txt "$l"
        done
      fi
      echo "$(date +%T) exp $ex [$args] done"
    done <<< "$(inputs_of "$ex")"
  done
  # Registers, stack and shared memory per kernel (occupancy without ncu).
  local cuobjdump=${CUOBJDUMP:-cuobjdump}
  command -v "$cuobjdump" >/dev/null || cuobjdump=/usr/local/cuda/bin/cuobjdump
  for bin in lb/bfs lb/bfs__TCAg lb/sssp lb/sssp__TCAg; do
    [ -x "$bin" ] || continue
    echo "## $bin"
    "$cuobjdump" -res-usage "$bin" 2>&1 | grep -A1 -E 'frontier_kernel|_parent|aggregated|dispatch|_flat' |
      grep -E 'Function|REG' | sed 's/^ *//'
  done > "$out/lb-exp-resources.txt" 2>&1
  echo "experiments: $csv ($(($(wc -l < "$csv") - 1)) rows); registers: $out/lb-exp-resources.txt"
  column -s, -t < "$csv" 2>/dev/null || cat "$csv"
}

case $mode in
  check) check ;;
  exp) exp ;;
  all) check; rc=$?; exp; exit "$rc" ;;
  *) echo "usage: $0 [check|exp|all]" >&2; exit 2 ;;
esac
