#!/bin/bash
# gpu_run.sh -- on the GPU machine, from gpu-showme/ (bench/probes/showme/pack.sh):
#
#     bash gpu-showme/gpu_run.sh [CONFIG ...]     # results under $OUT/showme (or ./showme-out)
#
# Builds each configuration's baseline (the app ported to CUDA 13 without CDP1
# waits: port/, port_nosync/ for pagerank) and every packed variant, 16 builds
# at a time; runs every binary with every solution (-s) of the app on every
# dataset (8 runs at a time: a correctness check, not a timing); compares each
# variant's run with the baseline's run of the same solution and dataset
# (compare.py: exit code, CUDA error lines, the app's own result).
# Output: summary.tsv (one line per run), summary.txt (counts per configuration
# and result), logs/ (the builds and runs that failed or differ).
set -u
cd "$(dirname "$0")"
HERE=$PWD
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
ARCH=${ARCH:-sm_90}
FLAGS="-Xcompiler -fopenmp -arch=$ARCH -rdc=true -O3"
TIMEOUT=${RUN_TIMEOUT:-60}
OUT=${OUT:-$HERE/showme-out}/showme
# KEEP=1: keep the work directory of an earlier call (its builds are reused).
W=${W:-/tmp/showme-work}
[ "${KEEP:-0}" = 1 ] || rm -rf "$W"
mkdir -p "$W" "$OUT/logs"
nvidia-smi -L 2>/dev/null | head -1 > "$OUT/gpu.txt"; "$NVCC" --version | tail -2 | head -1 > "$OUT/nvcc.txt"
ALL_CFGS="SpMV bfs-rec graph-color pagerank pagerank-nosync sssp"
CFGS=${*:-$ALL_CFGS}
cfg_app()     { case $1 in pagerank-nosync) echo pagerank;; *) echo $1;; esac; }
base_root()   { case $1 in pagerank|pagerank-nosync) echo port_nosync;; *) echo port;; esac; }
app_kernel()  { case $1 in SpMV) echo SpMV_kernel.cu;; bfs-rec) echo bfs_rec_kernel.cu;; graph-color) echo graph_color_kernel.cu;; pagerank) echo pagerank_kernel.cu;; sssp) echo sssp_kernel.cu;; esac; }
app_wrapper() { case $1 in SpMV) echo SpMV_wrapper.cu;; bfs-rec) echo bfs_rec_wrapper.cu;; graph-color) echo graph_color_wrapper.cu;; pagerank) echo pagerank_wrapper.cu;; sssp) echo sssp_wrapper.cu;; esac; }
app_cpp()     { case $1 in SpMV) echo SpMV.cpp;; bfs-rec) echo bfs_rec.cpp;; graph-color) echo graph_color.cpp;; pagerank) echo pagerank.cpp;; sssp) echo sssp.cpp;; esac; }
app_defs()    { case $1 in SpMV|sssp) echo "-DCONSOLIDATE_LEVEL=0 -DBUFFER_ALLOCATOR=2";; *) echo "";; esac; }
app_solutions() { case $1 in bfs-rec) echo "0 1 2 3 4 5";; *) echo "0 1 2 3 4";; esac; }
export NVCC FLAGS W HERE
# A job: CFG SITE VARIANT (SITE = baseline for the baseline).
jobs=$W/jobs.txt; : > "$jobs"
for cfg in $CFGS; do
  echo "$cfg baseline -" >> "$jobs"
  for v in "$HERE"/variants/$cfg/*/*/; do
    [ -d "$v" ] || continue
    echo "$cfg $(basename "$(dirname "$v")") $(basename "$v")" >> "$jobs"
  done
done
# The app's host files (its .cpp and common/global.cpp) are compiled once, with
# the baseline; each variant compiles its wrapper (which #includes the kernel
# file) and links with them.
build_one() {
  local cfg=$1 site=$2 variant=$3 app root b base
  app=$(cfg_app "$cfg"); root=$HERE/$(base_root "$cfg")
  b=$W/b/$cfg/$site/$variant; base=$W/b/$cfg/baseline/-; mkdir -p "$b"
  [ "$(cat "$b/build.rc" 2>/dev/null)" = 0 ] && return 0
  cp "$root/apps/$app/src/"* "$b/"
  [ "$site" = baseline ] || cp "$HERE/variants/$cfg/$site/$variant/$(app_kernel "$app")" "$b/"
  ( cd "$b" &&
    if [ "$site" = baseline ]; then
      $NVCC $FLAGS -I. -I"$root/common" -c "$root/common/global.cpp" -o global.o &&
      $NVCC $FLAGS -I. -I"$root/common" -c $(app_cpp "$app") -o host.o
    fi &&
    $NVCC $(app_defs "$app") $FLAGS -I. -I"$root/common" -c $(app_wrapper "$app") -o wrapper.o &&
    $NVCC $FLAGS "$base/global.o" "$base/host.o" wrapper.o -lcudadevrt -o app.bin ) > "$b/build.log" 2>&1
  echo $? > "$b/build.rc"
}
export -f build_one cfg_app base_root app_kernel app_wrapper app_cpp app_defs
t0=$(date +%s)
grep ' baseline ' "$jobs" | xargs -P 16 -L 1 bash -c 'build_one $0 $1 $2'
grep -v ' baseline ' "$jobs" | xargs -P 16 -L 1 bash -c 'build_one $0 $1 $2'
echo "built $(wc -l < "$jobs") binaries in $(( $(date +%s) - t0 )) s"
DATASETS=${DATASETS:-"data_test hubs"}
runs=$W/runs.txt; : > "$runs"
while read -r cfg site variant; do
  b=$W/b/$cfg/$site/$variant
  [ "$(cat "$b/build.rc")" = 0 ] || continue
  for ds in $DATASETS; do for s in $(app_solutions "$(cfg_app "$cfg")"); do
    echo "$b $ds $s" >> "$runs"
  done; done
done < "$jobs"
# A run, and the extraction of its result (compare.py extract), in the worker.
run_one() {
  local b=$1 ds=$2 s=$3 app
  app=$(cfg_app "$(echo "$b" | sed "s|^$W/b/||" | cut -d/ -f1)")
  rm -f "$b/$ds.s$s.rc" "$b/$ds.s$s.json"
  ( cd "$b" && timeout "$TIMEOUT" ./app.bin -f 0 -i "$HERE/datasets/$ds.gr" -v -d -s "$s" > "$ds.s$s.out" 2> "$ds.s$s.err"; echo $? > "$ds.s$s.rc" )
  python3 "$HERE/compare.py" extract "$app" "$HERE/datasets/$ds.gr" "$b/$ds.s$s.out" "$b/$ds.s$s.err" "$(cat "$b/$ds.s$s.rc")" > "$b/$ds.s$s.json"
}
export -f run_one; export TIMEOUT W
t0=$(date +%s)
# RUN_BUDGET seconds for all runs (default 300): what did not run by then is NOT_RUN.
timeout "${RUN_BUDGET:-300}" xargs -P "${RUN_JOBS:-12}" -L 1 bash -c 'run_one $0 $1 $2' < "$runs" 2> "$W/runs.err"
echo "ran $(wc -l < "$runs") runs in $(( $(date +%s) - t0 )) s"
SUMMARY=$OUT/summary.tsv
printf 'config\tsite\tvariant\tdataset\tsolution\tresult\tdetail\n' > "$SUMMARY"
while read -r cfg site variant; do
  app=$(cfg_app "$cfg"); b=$W/b/$cfg/$site/$variant; base=$W/b/$cfg/baseline/-
  if [ "$(cat "$b/build.rc")" != 0 ]; then
    printf '%s\t%s\t%s\t-\t-\tBUILD_FAIL\t%s\n' "$cfg" "$site" "$variant" "$(tail -3 "$b/build.log" | tr '\t\n' '  ')" >> "$SUMMARY"
    mkdir -p "$OUT/logs/$cfg/$site/$variant" && cp "$b/build.log" "$OUT/logs/$cfg/$site/$variant/"
    continue
  fi
  for ds in $DATASETS; do for s in $(app_solutions "$app"); do
    r=$b/$ds.s$s
    if [ ! -s "$r.json" ]; then
      printf '%s\t%s\t%s\t%s\t%s\tNOT_RUN\t-\n' "$cfg" "$site" "$variant" "$ds" "$s" >> "$SUMMARY"
      continue
    fi
    if [ "$site" = baseline ]; then
      printf '%s\tbaseline\t-\t%s\t%s\trc=%s\t%s\n' "$cfg" "$ds" "$s" "$(cat "$r.rc")" "$(head -c 200 "$r.json")" >> "$SUMMARY"
      continue
    fi
    if [ ! -s "$base/$ds.s$s.json" ]; then
      printf '%s\t%s\t%s\t%s\t%s\tBASE_NOT_RUN\t-\n' "$cfg" "$site" "$variant" "$ds" "$s" >> "$SUMMARY"
      continue
    fi
    if [ "$(cat "$base/$ds.s$s.rc")" != 0 ]; then  # the original fails here: nothing to compare with
      printf '%s\t%s\t%s\t%s\t%s\tBASE_FAILS\trc=%s, baseline rc=%s\n' "$cfg" "$site" "$variant" "$ds" "$s" "$(cat "$r.rc")" "$(cat "$base/$ds.s$s.rc")" >> "$SUMMARY"
      continue
    fi
    if why=$(python3 "$HERE/compare.py" compare "$app" "$HERE/datasets/$ds.gr" "$base/$ds.s$s.json" "$r.json"); then
      res=SAME; [ "$(cat "$r.rc")" = 124 ] && res=TIMEOUT_BOTH
    else
      res=DIFF; [ "$(cat "$r.rc")" = 124 ] && res=TIMEOUT
      mkdir -p "$OUT/logs/$cfg/$site/$variant"
      cp "$r.out" "$r.err" "$OUT/logs/$cfg/$site/$variant/" 2>/dev/null
      head -c 20000 "$base/$ds.s$s.out" > "$OUT/logs/$cfg/$site/$variant/baseline.$ds.s$s.out"
    fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cfg" "$site" "$variant" "$ds" "$s" "$res" "$why" >> "$SUMMARY"
  done; done
done < "$W/jobs.txt"
# BASE_REPEATS=N: run each baseline N more times per dataset and solution and count how many repeats give
# the result of its first run (an original that fails now and then makes its variants' DIFFs say nothing).
if [ "${BASE_REPEATS:-0}" -gt 0 ]; then
  printf 'config\tdataset\tsolution\trepeats\tsame_as_first\n' > "$OUT/baseline_repeats.tsv"
  for cfg in $CFGS; do
    app=$(cfg_app "$cfg"); base=$W/b/$cfg/baseline/-
    [ "$(cat "$base/build.rc" 2>/dev/null)" = 0 ] || continue
    for ds in $DATASETS; do for s in $(app_solutions "$app"); do
      [ -s "$base/$ds.s$s.json" ] || continue
      same=0
      for r in $(seq "$BASE_REPEATS"); do
        ( cd "$base" && timeout "$TIMEOUT" ./app.bin -f 0 -i "$HERE/datasets/$ds.gr" -v -d -s "$s" > rep.out 2> rep.err; echo $? > rep.rc )
        python3 "$HERE/compare.py" extract "$app" "$HERE/datasets/$ds.gr" "$base/rep.out" "$base/rep.err" "$(cat "$base/rep.rc")" > "$base/rep.json"
        python3 "$HERE/compare.py" compare "$app" "$HERE/datasets/$ds.gr" "$base/$ds.s$s.json" "$base/rep.json" > /dev/null && same=$((same + 1))
      done
      printf '%s\t%s\t%s\t%s\t%s\n' "$cfg" "$ds" "$s" "$BASE_REPEATS" "$same" >> "$OUT/baseline_repeats.tsv"
    done; done
  done
  echo "=== baseline repeats (same result as the first run)"; column -t "$OUT/baseline_repeats.tsv" 2>/dev/null || cat "$OUT/baseline_repeats.tsv"
fi
awk -F'\t' 'NR>1 && $2!="baseline" {n[$1" "$6]++} END {for (k in n) print n[k], k}' "$SUMMARY" | sort -k2 > "$OUT/summary.txt"
echo "=== $(cat "$OUT/gpu.txt"); $(cat "$OUT/nvcc.txt")"
echo "=== baselines (exit codes per dataset and solution)"
awk -F'\t' '$2=="baseline" {print $1, $4, "-s", $5, $6}' "$SUMMARY" | tr '\n' ';' | sed 's/;/; /g'; echo
echo "=== runs per configuration and result"
cat "$OUT/summary.txt"
echo "=== not SAME"
awk -F'\t' 'NR>1 && $2!="baseline" && $6!="SAME" {print}' "$SUMMARY" | head -40
