#!/usr/bin/env bash
# `dpopt tune` on every example x input of the suite, compared with the
# committed sweep (bench/results/2026-11-24-h100-suite.csv).
#
#   bench/tune_check.sh prepare          # here: needs cargo; writes gpu-tune/ (carry it)
#   bench/tune_check.sh run [REGEX]      # on the GPU: needs nvcc, not Rust; REGEX selects
#                                        # "example|args" lines (e.g. 'bfs|sssp.*road')
#
# run: builds every example's screening variants first, examples in
# parallel (`dpopt tune --build-only`), then tunes each input in turn (one
# search at a time: the GPU is timed) with the program's own kernel time as
# the metric (`impl=cdp time_ms=`), and measures in the same pass the
# configuration chosen, today's default (t128 c8, multiblock groups of 8)
# and the flat version (one run each). Writes $OUT (or ./gpu-out)/tune.csv:
# benchmark,input,tuned_ms,best_ms,ratio,runs,flat_ms,default_ms,config,gpu
# (best_ms: the sweep's best verified C+A configuration for that input;
# runs: program runs of the search, stats run included).
# RUNS=N caps each search (default 12 per site); REPS (default 3) is the
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

run() {
  local filter=${1:-.}
  local out=${OUT:-gpu-out}
  mkdir -p "$out"
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
  echo "benchmark,input,tuned_ms,best_ms,ratio,runs,flat_ms,default_ms,config,gpu" > "$csv"
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
    local work; work=$(ls -d src/.$ex.cu.dpopt-tune/*/ | head -n1)
    local tuned="" default="" flat="" input=""
    if [ -n "$chosen" ]; then
      # One site per example: granularity-tT-cC.
      local g=${chosen%%-*} t c
      t=$(echo "$chosen" | sed 's/.*-t\([0-9]*\)-.*/\1/'); c=$(echo "$chosen" | sed 's/.*-c\([0-9]*\).*/\1/')
      IMPL=cdp tuned=$(IMPL=cdp measure "$work$g.exe" "$args" DPOPT_THRESHOLD="$t" DPOPT_COARSEN="$c")
    fi
    IMPL=cdp default=$(IMPL=cdp measure "${work}mb8.exe" "$args" DPOPT_THRESHOLD=128 DPOPT_COARSEN=8)
    flat=$(grep '^result .*impl=flat ' last.txt | grep -o 'time_ms=[0-9.]*' | cut -d= -f2 | head -n1)
    input=$(grep -m1 '^result ' last.txt | sed 's/.*input=\([^ ]*\).*/\1/')
    [ -n "$input" ] || input=${args// /_}
    local best; best=$(awk -F, -v b="$ex" -v i="$input" '$1 == b && $2 == i && $5 == "cdp" && $8 == "yes" && $3 != "orig" && $3 != "CDPff" {
        if (m == "" || $6 + 0 < m + 0) m = $6 } END { print m }' sweep.csv)
    local ratio=""
    [ -n "$tuned" ] && [ -n "$best" ] && ratio=$(awk -v a="$tuned" -v b="$best" 'BEGIN { printf "%.3f", a / b }')
    echo "$ex,$input,$tuned,$best,$ratio,$n,$flat,$default,$chosen,$gpu" >> "$csv"
    echo "$(date +%T) $ex [$args]: $chosen tuned=$tuned best=$best ratio=$ratio runs=$n flat=$flat default=$default"
  done < selected.txt
  awk -F, 'NR > 1 && $5 != "" { s += log($5); n++; r += $6 } END { if (n) printf "geometric mean ratio %.3f over %d inputs, %.1f runs per input\n", exp(s / n), n, r / n }' "$csv"
  echo "tune CSV: $csv"
}

case ${1:-} in
  prepare) prepare ;;
  run) shift; run "${1:-.}" ;;
  *) echo "usage: $0 prepare | run [REGEX]" >&2; exit 2 ;;
esac
