#!/usr/bin/env bash
# The benchmark suite's sweep: threshold x coarsening factor x granularity,
# one build per variant. Every variant is built once with
# -DDPOPT_RUNTIME_KNOBS, and the examples set the tuning values from
# DPOPT_THRESHOLD / DPOPT_COARSEN at run time (dpopt_knobs_from_env), so a
# whole sweep needs no rebuild. Run on the GPU machine after
# `bench/gpu_check.sh prepare` here (carry gpu-build):
#
#   bash bench/sweep.sh [EXAMPLES] [THRESHOLDS] [FACTORS]
#   e.g. bash bench/sweep.sh "bfs sssp" "1 32 128 512 1024" "1 2 8"
#        bash bench/sweep.sh -      (the promoted examples alone, below)
#
# Each point is named like the suite's fixed variants: threshold 1 means no
# thresholding and factor 1 no coarsening, so the TC build gives T, C and TC,
# the warp build (TCA) A, TA, CA and TCA, and likewise for block (Ab...),
# multiblock with groups of 8 (Am..., config t..c..g8) and grid (Ag...);
# for bezier_alloc also the aggregated allocations alone, per warp (TCL
# build: L, TL, CL, TCL) and per block (TCLb: Lb, ...).
# Also runs the original program (CDP), its launches in fire-and-forget
# streams (CDPff), and the flat version and the load-balanced flat version
# (impl=flat-lb: same checksum as CDP required, but for bezier, whose
# program checks the points within a tolerance) in every binary. Then, from
# -DDPOPT_STATS builds, the device-side launches of every variant at the
# points t1c1 and t128c8 (and of CDP, CDPff).
#
# Writes $OUT (or ./gpu-out)/sweep.csv in the suite's format (benchmark,
# input, variant, config, impl, time_ms, device_launches, verified, gpu);
# dpopt-report turns it into tables and plots. A row is verified when the
# program's CPU check passed, no launch failed, and its checksum equals the
# original program's on the same input. INPUTS=regex selects input lines as
# in gpu_check.sh; REPS (default 5) timed runs per binary, median reported.
# STATS=0 skips the -DDPOPT_STATS builds and their runs (device_launches
# stays empty): about a fifth fewer processes, for a sweep that must fit
# a time limit (docs/PERFORMANCE.md, "Running it").
# VARIANTS (default "TC TCA TCAb TCAm TCAg") chooses the builds; TCF is
# the launch-free floor (`threshold coarsen floor`: F, TF, CF, TCF points),
# whose copy's blocks drain the recorded children where the child allows it;
# TCFd the same build with drain grids instead (-DDPOPT_FLOOR_JOIN=0: Fd,
# TFd, ...) and TCFp with drain grids launched with programmatic dependent
# launch (-DDPOPT_FLOOR_PDL=1: Fp, TFp, ...). The
# floor's comparison on the low-nesting inputs:
#   VARIANTS="TC TCAg TCF TCFd" INPUTS='road|t32|bcsstk|d3' bash bench/sweep.sh \
#     "bfs sssp spmv bezier tree_heights tree_descendants" "1 32 128 512" "1 8"
# (recursive children refuse the floor: the trees get no TCF build.)
#
# Promoted examples (PROMOTE_EXAMPLES, default "stream_compaction
# partition"; "" skips them) are swept over the promotion variants instead:
# orig (plain CDP), P and PO (basic promotion, without and with overlap) at
# DPOPT_PROMOTE_AHEAD in AHEADS (default "1 2 4", config ahead<k>), PA and
# PAO (aggregated) at DPOPT_PROMOTE_POOL in POOLS (default "1 2 8 32 128",
# config g<G>); one build per point (the knobs are compile-time). Rows as
# above; a chain deeper than CDP nests shows verified=no for orig, P and PO
# (the program says depth-limit), as expected.
set -uo pipefail
cd "$(dirname "$0")/../gpu-build" || { echo "run bench/gpu_check.sh prepare first" >&2; exit 1; }
examples=${1:-"bfs sssp spmv bezier bezier_alloc tc sp mstf mstv tree_heights tree_descendants"}
[ "$examples" = - ] && examples=""  # "-": only the promoted examples
thresholds=${2:-"1 32 128 512 1024"}
factors=${3:-"1 2 8"}
reps=${REPS:-5}
out=${OUT:-../gpu-out}
mkdir -p "$out" sweep
nvcc=${NVCC:-nvcc}
command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr ',' ' ')
# TCL, TCLb: aggregated allocations alone (bezier_alloc; absent elsewhere)
variants=${VARIANTS:-"TC TCA TCAb TCAm TCAg TCL TCLb"}
# The source a variant is built from, and the flags it adds.
source_of() { case $1 in TCFp|TCFd) echo TCF ;; *) echo "$1" ;; esac; }
flags_of() { case $1 in TCFp) echo ",-DDPOPT_FLOOR_JOIN=0,-DDPOPT_FLOOR_PDL=1" ;; TCFd) echo ",-DDPOPT_FLOOR_JOIN=0" ;; esac; }

# Builds: the original, CDPff and every variant, with run-time knobs, and each with -DDPOPT_STATS.
for ex in $examples; do
  for v in orig CDPff $variants; do
    src="src/${ex}__$(source_of "$v").cu"
    [ -f "$src" ] || continue
    echo "$src sweep/${ex}__$v -DDPOPT_RUNTIME_KNOBS$(flags_of "$v")"
    [ "${STATS:-1}" = 0 ] || echo "$src sweep/${ex}__${v}__stats -DDPOPT_RUNTIME_KNOBS,-DDPOPT_STATS$(flags_of "$v")"
  done
done | xargs -r -P "$(nproc)" -n 3 sh -c \
  "$nvcc"' -O3 -rdc=true -arch=sm_90 -I src $(echo "$2" | tr , " ") -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED: $1"'
echo "$(date +%T) built $(ls sweep | grep -vc '\.log$') binaries"

csv=$out/sweep.csv
[ -f "$csv" ] || echo "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu" > "$csv"
row() {  # row VARIANT CONFIG OUTPUTFILE REFCHECKSUM LAUNCHES
  grep '^result ' "$3" | while read -r _ rest; do
    declare -A f=()
    for kv in $rest; do f[${kv%%=*}]=${kv#*=}; done
    ok=no
    if [ "${f[verified]}" = yes ] && [ "${f[launch_failures]}" = 0 ] &&
       { [ "${f[impl]}" = flat ] || [ "${f[checksum]}" = "$4" ] ||
         { [ "${f[impl]}" = flat-lb ] && [ "${f[example]}" = bezier ]; }; }; then ok=yes; fi
    l=""; [ "${f[impl]}" = cdp ] && l=$5
    echo "${f[example]},${f[input]},$1,$2,${f[impl]},${f[time_ms]},$l,$ok,$gpu"
  done >> "$csv"
}
name() {  # name BUILD T C -> the suite's variant name ("" for TC at t1c1)
  local p=""
  [ "$2" -gt 1 ] && p=T
  [ "$3" -gt 1 ] && p=${p}C
  case $1 in TC) echo "$p" ;; TCA) echo "${p}A" ;; TCAb) echo "${p}Ab" ;; TCAm) echo "${p}Am" ;; TCAg) echo "${p}Ag" ;;
    TCF) echo "${p}F" ;; TCFd) echo "${p}Fd" ;; TCFp) echo "${p}Fp" ;; TCL) echo "${p}L" ;; TCLb) echo "${p}Lb" ;; esac
}
launches() {  # launches BINARY ARGS...: device-side launches of the last run (stats build)
  local bin=$1; shift
  [ -x "$bin" ] || return 0  # STATS=0: not built
  # shellcheck disable=SC2086
  timeout 120 "$bin" "$@" --reps 1 > sweep/stats.txt 2>&1
  awk '/^stats example=/ { split($3, kv, "="); req = kv[2]; d = a = n = 0 }
       /^dpopt_stats / { for (k = 3; k <= NF; k++) { split($k, kv, "="); x[kv[1]] = kv[2] }; d += x["direct"]; a += x["aggregated"]; n++ }
       /^dpopt_promote / { for (k = 3; k <= NF; k++) { split($k, kv, "="); y[kv[1]] = kv[2] }; d += y["grids"] + y["direct"]; n++ }
       END { if (req != "") print (n == 0 ? req : d + a) }' sweep/stats.txt
}
for ex in $examples; do
  [ -x "sweep/${ex}__orig" ] || continue
  inputs=$(grep "^$ex|" inputs.txt | grep -E -- "${INPUTS:-.}" | cut -d'|' -f2 | sed "s|@DATA@|$PWD/data|g")
  [ -n "$inputs" ] || inputs="-"
  while IFS= read -r args; do
    [ "$args" = "-" ] && args=""
    # shellcheck disable=SC2086
    timeout 300 "sweep/${ex}__orig" $args --reps "$reps" > sweep/out.txt 2>&1
    ref=$(grep '^result .*impl=cdp' sweep/out.txt | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2)
    # shellcheck disable=SC2086
    row orig - sweep/out.txt "$ref" "$(launches "sweep/${ex}__orig__stats" $args)"
    # shellcheck disable=SC2086
    timeout 300 "sweep/${ex}__CDPff" $args --reps "$reps" > sweep/out.txt 2>&1
    # shellcheck disable=SC2086
    row CDPff ff sweep/out.txt "$ref" "$(launches "sweep/${ex}__CDPff__stats" $args)"
    for v in $variants; do
      [ -x "sweep/${ex}__$v" ] || continue
      for t in $thresholds; do
        for c in $factors; do
          n=$(name "$v" "$t" "$c"); [ -n "$n" ] || continue
          cfg=t${t}c$c; [ "$v" = TCAm ] && cfg=${cfg}g8
          l=""
          if { [ "$t" = 1 ] && [ "$c" = 1 ]; } || { [ "$t" = 128 ] && [ "$c" = 8 ]; }; then
            # shellcheck disable=SC2086
            l=$(DPOPT_THRESHOLD=$t DPOPT_COARSEN=$c launches "sweep/${ex}__${v}__stats" $args)
          fi
          # shellcheck disable=SC2086
          DPOPT_THRESHOLD=$t DPOPT_COARSEN=$c timeout 120 "sweep/${ex}__$v" $args --reps "$reps" > sweep/out.txt 2>&1 ||
            echo "$ex $v $cfg [$args]: exit $?"
          row "$n" "$cfg" sweep/out.txt "$ref" "$l"
        done
      done
    done
    echo "$(date +%T) $ex [$args] done"
  done <<< "$inputs"
done

# Promoted examples: a build per variant and knob value.
promote_examples=${PROMOTE_EXAMPLES-"stream_compaction partition"}
pools=${POOLS:-"1 2 8 32 128"}
aheads=${AHEADS:-"1 2 4"}
points() {  # points EXAMPLE: "variant config defines" per build
  echo "orig - -"
  for v in P PO; do for a in $aheads; do echo "$v ahead$a -DDPOPT_PROMOTE_AHEAD=$a"; done; done
  for v in PA PAO; do for g in $pools; do echo "$v g$g -DDPOPT_PROMOTE_POOL=$g"; done; done
}
for ex in $promote_examples; do
  points "$ex" | while read -r v cfg defs; do
    [ -f "src/${ex}__$v.cu" ] || continue
    [ "$defs" = - ] && defs=""
    echo "src/${ex}__$v.cu sweep/${ex}__${v}__$cfg ${defs:-none}"
    [ "${STATS:-1}" = 0 ] || echo "src/${ex}__$v.cu sweep/${ex}__${v}__${cfg}__stats ${defs:+$defs,}-DDPOPT_STATS"
  done
done | xargs -r -P "$(nproc)" -n 3 sh -c \
  'd=$(echo "$2" | sed "s/^none$//" | tr , " "); '"$nvcc"' -O3 -rdc=true -arch=sm_90 -I src $d -o "$1" "$0" -lcudadevrt > "$1.log" 2>&1 || echo "BUILD FAILED: $1"'
for ex in $promote_examples; do
  [ -x "sweep/${ex}__orig__-" ] || continue
  inputs=$(grep "^$ex|" inputs.txt | grep -E -- "${INPUTS:-.}" | cut -d'|' -f2)
  while IFS= read -r args; do
    # shellcheck disable=SC2086
    timeout 300 "sweep/${ex}__orig__-" $args --reps "$reps" > sweep/out.txt 2>&1
    # The reference: the original CDP program's result, or the flat version's
    # where the chain is deeper than CDP nests.
    ref=$(grep '^result .*impl=cdp.*verified=yes' sweep/out.txt | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2)
    [ -n "$ref" ] || ref=$(grep '^result .*impl=flat' sweep/out.txt | grep -o 'checksum=[0-9a-f]*' | cut -d= -f2)
    # shellcheck disable=SC2086
    row orig - sweep/out.txt "$ref" "$(launches "sweep/${ex}__orig__-__stats" $args)"
    points "$ex" | tail -n +2 | while read -r v cfg defs; do
      [ -x "sweep/${ex}__${v}__$cfg" ] || continue
      # shellcheck disable=SC2086
      l=$(launches "sweep/${ex}__${v}__${cfg}__stats" $args)
      # shellcheck disable=SC2086
      timeout 300 "sweep/${ex}__${v}__$cfg" $args --reps "$reps" > sweep/out.txt 2>&1 ||
        echo "$ex $v $cfg [$args]: exit $?"
      row "$v" "$cfg" sweep/out.txt "$ref" "$l"
    done
    echo "$(date +%T) $ex [$args] done"
  done <<< "$inputs"
done
echo "sweep CSV: $csv ($(($(wc -l < "$csv") - 1)) rows, $(grep -c ',no,' "$csv") not verified)"
