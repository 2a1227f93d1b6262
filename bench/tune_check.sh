#!/usr/bin/env bash
# `dpopt tune` on every example x input of the suite, compared with the
# committed sweep (bench/results/2026-11-24-h100-suite.csv) and with the
# sweep's best configuration measured again in the same pass.
#
#   bench/tune_check.sh prepare          # here: needs cargo; writes gpu-tune/ (carry it)
#   bench/tune_check.sh run [REGEX]      # on the GPU: needs nvcc, not Rust; REGEX selects
#                                        # "example|args" lines (e.g. 'bfs|sssp.*road')
#   bench/tune_check.sh sweep-best SWEEP.csv BENCH INPUT
#                                        # the sweep's best verified C+A point of an input
#                                        # as the tune builds name it: "BUILD T C KEY MS"
#
# run: builds every example's screening variants first, examples in
# parallel (`dpopt tune --build-only`), then tunes each input in turn (one
# search at a time: the GPU is timed) with the program's own kernel time as
# the metric (`impl=cdp time_ms=`). After each search it measures, in the
# same pass and interleaved (round k runs each of them once), MEASURE_REPS
# times each (default 5): the default (what a bare `#pragma dp` means for
# the example's site, from `dpopt check`: t128 c8 grid, or t32 block for the
# recursive trees; its runs also give the flat version's time), the
# configuration chosen, and the committed sweep's best configuration for the
# input mapped onto the tune builds (variant letters: T threshold, C
# coarsening, A warp / Ab block / Am multiblock 8 / Ag grid aggregation, no
# A: none; config tXcY[g8]: DPOPT_THRESHOLD=X DPOPT_COARSEN=Y), and reports
# the medians. Writes $OUT (or ./gpu-out)/tune.csv:
# benchmark,input,tuned_ms,best_ms,ratio,runs,flat_ms,default_ms,config,gpu,best_now_ms,ratio_now,best_config,reps
# tuned_ms, flat_ms, default_ms, best_now_ms: medians of the MEASURE_REPS
# runs of this pass; best_ms: the committed sweep's time of its best point
# (another run: ratio = tuned_ms / best_ms carries run-to-run noise and the
# optimism of a minimum over ~100 noisy points); best_now_ms: that point
# measured in this pass (ratio_now = tuned_ms / best_now_ms, the fair
# comparison); best_config: that point as `dpopt tune` names it; reps: the
# measurements behind the tuned median; runs: program runs of the search,
# stats run included. A failed search, build or run (timeout, wrong result)
# leaves its cells empty; the inputs concerned are listed at the end and
# left out of the summary, which gives the geometric mean and the count
# within 5% of both ratios.
# RUNS=N caps each search (default 11 per site, 12 with the stats run); REPS (default 3) is the
# program's --reps; TIMEOUT (default 60) limits one run, seconds.
set -uo pipefail
cd "$(dirname "$0")/.."
DIR=gpu-tune

prepare() {
  cargo build --release --quiet || exit 1
  rm -rf "$DIR" && mkdir -p "$DIR/src" "$DIR/data"
  cp target/release/dpopt "$DIR/dpopt"
  cp examples/*.cu "$DIR/src/" && cp -r examples/common "$DIR/src/common"
  cp bench/results/2026-11-24-h100-suite.csv "$DIR/sweep.csv"
  # The suite's inputs, as bench/gpu_check.sh lists them.
  sed -n "/<<'INPUTS'/,/^INPUTS\$/p" bench/gpu_check.sh | sed '1d;$d' > "$DIR/inputs.txt"
  # Promoted examples (`#pragma dp promote`) have no threshold, factor or
  # granularity to tune: bench/gpu_check.sh and bench/sweep.sh measure them.
  for ex in examples/*.cu; do
    grep -q '^[ \t]*#[ \t]*pragma[ \t]\+dp[ \t]\+promote' "$ex" && sed -i "/^$(basename "$ex" .cu)|/d" "$DIR/inputs.txt"
  done
  for f in rmat12.sym.gr random-42000-10000-3.cnf bcsstk13.mtx; do
    cp "../shared/data/$f" "$DIR/data/" 2>/dev/null || echo "missing ../shared/data/$f: its inputs will fail"
  done
  echo "prepared $DIR/: $(wc -l < "$DIR/inputs.txt") inputs of $(ls "$DIR"/src/*.cu | wc -l) examples"
}

# The metric's value of one run of a built variant with knobs: run EXE ARGS ENV...
measure() {
  local exe=$1 args=$2; shift 2
  # shellcheck disable=SC2086
  env "$@" timeout "${TIMEOUT:-60}" "$exe" $args --reps "${REPS:-3}" > "$DIR/last.txt" 2>&1 || { echo ""; return; }
  grep "^result .*impl=$IMPL " "$DIR/last.txt" | grep 'verified=yes' | grep -o 'time_ms=[0-9.]*' | cut -d= -f2 | head -n1
}

# The committed sweep's best verified point of an input (not orig, not
# CDPff) as the tune builds name it: "BUILD THRESHOLD FACTOR KEY MS", empty
# when the sweep has no such point. sweep_best SWEEP.csv BENCH INPUT
sweep_best() {
  awk -F, -v b="$2" -v i="$3" '
    $1 == b && $2 == i && $5 == "cdp" && $8 == "yes" && $3 != "orig" && $3 != "CDPff" {
      if (m == "" || $6 + 0 < m + 0) { m = $6; v = $3; c = $4 } }
    END {
      if (m == "") exit
      g = v; sub(/^[TC]*/, "", g)
      if (g == "") g = "none"; else if (g == "A") g = "warp"; else if (g == "Ab") g = "block"
      else if (g == "Ag") g = "grid"; else if (g == "F") g = "floor"
      else if (g == "Am") { g = "mb8"; if (match(c, /g[0-9]+$/)) g = "mb" substr(c, RSTART + 1) }
      else { print "sweep_best: variant " v " has no tune build" > "/dev/stderr"; exit 1 }
      if (!match(c, /^t[0-9]+c[0-9]+/)) { print "sweep_best: config " c > "/dev/stderr"; exit 1 }
      t = substr(c, 2); sub(/c.*/, "", t)
      f = substr(c, index(c, "c") + 1); sub(/g.*/, "", f)
      print g, t, f, g "-t" t "-c" f, m
    }' "$1"
}

# The median of the numbers given (empty when none).
median() {
  printf '%s\n' "$@" | grep -E '^[0-9.]+$' | sort -g | awk '{ v[NR] = $1 } END {
    if (NR == 0) exit; if (NR % 2) printf "%.4f", v[(NR + 1) / 2]; else printf "%.4f", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# The knobs of a point key (granularity-tT-cC[-aA]) as environment settings.
knobs_of() {
  local t c a
  t=$(echo "$1" | sed -n 's/.*-t\([0-9]*\)-c.*/\1/p'); c=$(echo "$1" | sed -n 's/.*-c\([0-9]*\).*/\1/p')
  a=$(echo "$1" | sed -n 's/.*-a\([0-9]*\)$/\1/p')
  echo "DPOPT_THRESHOLD=$t DPOPT_COARSEN=$c${a:+ DPOPT_AGG_THRESHOLD=$a}"
}

# The default of the example's site: "BUILD THRESHOLD FACTOR" (the build as
# `dpopt tune` names it), read from `dpopt check` of a copy with a bare pragma.
default_of() {
  sed 's/^\([ \t]*#[ \t]*pragma[ \t][ \t]*dp\)[ \t].*/\1/' "src/$1.cu" > "src/.$1.default.cu"
  ./dpopt check "src/.$1.default.cu" | awk '
    /DPOPT_THRESHOLD_/ { for (k = 1; k <= NF; k++) { if ($k ~ /^DPOPT_THRESHOLD_/) { split($k, kv, "="); t = kv[2] } if ($k ~ /^DPOPT_COARSEN_/) { split($k, kv, "="); c = kv[2] } } }
    /consldt\(/ { g = $1; sub(/^consldt\(/, "", g); sub(/\).*$/, "", g) }
    END { if (g == "") g = "none"; if (g == "multiblock") g = "mb8"; print g, (t == "" ? 1 : t), (c == "" ? 1 : c) }'
  rm -f "src/.$1.default.cu"
}

run() {
  local filter=${1:-.}
  local out=${OUT:-gpu-out}
  mkdir -p "$out" && out=$(cd "$out" && pwd)
  cd "$DIR" || { echo "run bench/tune_check.sh prepare first" >&2; exit 1; }
  DIR=.
  local nvcc=${NVCC:-nvcc}
  command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
  export DPOPT_NVCC=$nvcc
  local gpu; gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n1 | tr ',' ' ')
  grep -E -- "$filter" inputs.txt | sed "s|@DATA@|$PWD/data|g" > selected.txt
  local examples; examples=$(cut -d'|' -f1 selected.txt | sort -u)
  echo "$(date +%T) building the variants of: $(echo $examples)"
  # The default build, with the examples' include directory.
  printf '%s\n' $examples | xargs -P "$(nproc)" -I{} sh -c \
    './dpopt tune src/{}.cu --build-only --state tune-{}.build.json > build-{}.log 2>&1 || echo "BUILD FAILED: {} (gpu-tune/build-{}.log)"'
  echo "$(date +%T) built"
  local csv=$out/tune.csv
  local reps=${MEASURE_REPS:-5}
  echo "benchmark,input,tuned_ms,best_ms,ratio,runs,flat_ms,default_ms,config,gpu,best_now_ms,ratio_now,best_config,reps" > "$csv"
  : > errors.txt
  while IFS='|' read -r ex args; do
    local tag; tag=$(echo "$ex $args" | tr -c 'a-zA-Z0-9\n' '_')
    local runs=()
    [ -n "${RUNS:-}" ] && runs=(--runs "$RUNS")
    ./dpopt tune "src/$ex.cu" --state "state-$tag.json" --svg "$out/tune-$tag.svg" \
      --run "{exe} $args --reps ${REPS:-3}" --metric 'impl=cdp time_ms=([0-9.]+) verified=yes' \
      --check "grep -q 'impl=cdp .*verified=yes' \"\$DPOPT_TUNE_OUTPUT\"" \
      --timeout "${TIMEOUT:-60}" "${runs[@]}" > "$out/tune-$tag.txt" 2>&1
    local chosen; chosen=$(sed -n 's/^chosen: \([^ ]*\).*/\1/p' "$out/tune-$tag.txt")
    local n; n=$(sed -n 's/^runs: \([0-9]*\) for the search + \([0-9]*\) stats.*/\1 \2/p' "$out/tune-$tag.txt" | awk '{print $1 + $2}')
    local work; work=$(ls -d src/.$ex.cu.dpopt-tune/*/ 2>/dev/null | head -n1)
    [ -n "$chosen" ] || echo "$ex [$args]: the search chose nothing ($out/tune-$tag.txt)" >> errors.txt
    # One site per example: granularity-tT-cC[-aA].
    local dg dt dc
    read -r dg dt dc <<< "$(default_of "$ex")"
    local input="" best="" bg="" bkey="" bknobs="" tuned_v=() best_v=() default_v=() flat_v=() k v
    for ((k = 1; k <= reps; k++)); do
      v=$(IMPL=cdp measure "$work$dg.exe" "$args" DPOPT_THRESHOLD="$dt" DPOPT_COARSEN="$dc")
      default_v+=("$v")
      flat_v+=("$(grep '^result .*impl=flat ' last.txt | grep -o 'time_ms=[0-9.]*' | cut -d= -f2 | head -n1)")
      if [ -z "$input" ]; then
        input=$(grep -m1 '^result ' last.txt | sed -n 's/.*input=\([^ ]*\).*/\1/p')
        [ -n "$input" ] || input=${args// /_}
        local sb; sb=$(sweep_best sweep.csv "$ex" "$input")
        if [ -n "$sb" ]; then
          local bt bc
          read -r bg bt bc bkey best <<< "$sb"
          bknobs="DPOPT_THRESHOLD=$bt DPOPT_COARSEN=$bc"
        fi
      fi
      if [ -n "$chosen" ]; then
        # shellcheck disable=SC2046
        v=$(IMPL=cdp measure "$work${chosen%%-*}.exe" "$args" $(knobs_of "$chosen"))
        tuned_v+=("$v")
      fi
      if [ -n "$bkey" ]; then
        # shellcheck disable=SC2086
        v=$(IMPL=cdp measure "$work$bg.exe" "$args" $bknobs)
        best_v+=("$v")
      fi
    done
    local tuned default flat best_now ngood
    tuned=$(median "${tuned_v[@]}"); default=$(median "${default_v[@]}")
    flat=$(median "${flat_v[@]}"); best_now=$(median "${best_v[@]}")
    ngood=$(printf '%s\n' "${tuned_v[@]}" | grep -cE '^[0-9.]+$')
    [ -n "$chosen" ] && [ "$ngood" -lt "$reps" ] && echo "$ex [$args]: $chosen measured $ngood of $reps times (failed runs)" >> errors.txt
    [ -n "$bkey" ] && [ -z "$best_now" ] && echo "$ex [$args]: the sweep's best $bkey failed in every run" >> errors.txt
    [ -z "$default" ] && echo "$ex [$args]: the default $dg t$dt c$dc failed in every run" >> errors.txt
    local ratio="" ratio_now=""
    [ -n "$tuned" ] && [ -n "$best" ] && ratio=$(awk -v a="$tuned" -v b="$best" 'BEGIN { printf "%.3f", a / b }')
    [ -n "$tuned" ] && [ -n "$best_now" ] && ratio_now=$(awk -v a="$tuned" -v b="$best_now" 'BEGIN { printf "%.3f", a / b }')
    echo "$ex,$input,$tuned,$best,$ratio,$n,$flat,$default,$chosen,$gpu,$best_now,$ratio_now,$bkey,$ngood" >> "$csv"
    echo "$(date +%T) $ex [$args]: $chosen tuned=$tuned best=$best ratio=$ratio best_now=$best_now ($bkey) ratio_now=$ratio_now runs=$n flat=$flat default=$default"
  done < selected.txt
  summary "$csv"
  if [ -s errors.txt ]; then
    echo "errors (left out of the summary):"
    sed 's/^/  /' errors.txt
  fi
  echo "tune CSV: $csv"
}

# The summary line of a tune.csv: both ratios' geometric means and how many
# inputs are within 5%, over the inputs that have them.
summary() {
  awk -F, 'NR > 1 {
      if ($5 != "") { s += log($5); n++; r += $6; w += ($5 <= 1.05) }
      if ($12 != "") { s2 += log($12); n2++; w2 += ($12 <= 1.05) } }
    END {
      if (n) printf "geometric mean ratio %.3f over %d inputs, %.1f runs per input, %d within 5%% of the committed sweep'"'"'s best\n", exp(s / n), n, r / n, w
      if (n2) printf "geometric mean ratio_now %.3f over %d inputs, %d within 5%% of the sweep'"'"'s best measured in this pass\n", exp(s2 / n2), n2, w2 }' "$1"
}

case ${1:-} in
  prepare) prepare ;;
  run) shift; run "${1:-.}" ;;
  sweep-best) shift; sweep_best "$@" ;;
  summary) shift; summary "$1" ;;
  *) echo "usage: $0 prepare | run [REGEX] | sweep-best SWEEP.csv BENCH INPUT | summary tune.csv" >&2; exit 2 ;;
esac
