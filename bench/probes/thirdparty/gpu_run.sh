#!/usr/bin/env bash
# GPU check of dpopt on third-party CUDA dynamic-parallelism programs.
#
# Run from the pack directory (the one holding this script, prog/, variants/, compat/,
# manifest.tsv):   bash gpu_run.sh            (build everything, run, compare)
#                  bash gpu_run.sh --build-only
#                  bash gpu_run.sh --run-only     (reuse the builds of an earlier run)
# Needs: nvcc (CUDA 12.x/13.x) on PATH (or NVCC=...), g++, an sm_90 GPU. No network, no dpopt,
# no Rust: the dpopt outputs are in variants/. Everything it writes goes to $OUT_DIR
# (default ./out): out/summary.txt (one line per run + counts), out/results.tsv,
# out/build/<id>/build.log, out/run/<id>/{stdout,stderr}.
#
# For each program the original (prog/<p> as patched, see README) and every variant that
# compiled on the dpopt machine (variants/<p>/<site>/<variant>/<file>, overlaid on prog/<p>)
# are built in parallel (xargs -P $JOBS), run on a small and a medium input (timeout 60 s each,
# $RUN_JOBS at a time), and each variant's result is compared with the original's on the same
# input: exit code, CUDA/assert error lines, and the program's own result (image checksum,
# printed checksum, BFS levels and path, printed text). The original runs twice; if its two
# runs differ the input is marked ORIG_NONDET (no comparison is meaningful there).
# Programs: md (mandelbrot-dyn), at (auto_test), sbr (src/dp_sbr.cuh + driver), bfs, bfsR (bfs with
# the launch respelled <<<>>>), cms (test-dynamic-parallelism `crash`), and cpos: NOT third-party, the
# repro of the consldt + helper-reads-blockIdx observation (orig prints "mismatches: 0").
# Whole run: ~90 builds + ~135 runs; on 16 cores and one H100 it should take 1-3 minutes.
set -u
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
OUT=${OUT_DIR:-$HERE/out}
JOBS=${JOBS:-16}
RUN_JOBS=${RUN_JOBS:-8}
DEADLINE=${DEADLINE:-270}   # seconds from the start: runs not started by then are SKIPPED (keeps the whole run < 5 min)
RUN_TIMEOUT=${RUN_TIMEOUT:-60}
BUILD_ONLY=0; RUN_ONLY=0
[ "${1:-}" = "--build-only" ] && BUILD_ONLY=1
[ "${1:-}" = "--run-only" ] && RUN_ONLY=1     # reuse out/build from an earlier run
NVCC=${NVCC:-$(command -v nvcc || true)}
if [ -z "$NVCC" ]; then echo "nvcc not found (PATH or NVCC=)" >&2; exit 2; fi
T0=$(date +%s)
mkdir -p "$OUT/build" "$OUT/run" "$OUT/tmp"
COMPAT=$HERE/compat

# --- host environment ---------------------------------------------------------------
# OpenMP is only used for omp_get_wtime(); fall back to the stand-in header without -fopenmp.
printf '#include <omp.h>\nint main(){return omp_get_wtime() < 0;}\n' > "$OUT/tmp/omp.cu"
if "$NVCC" -Xcompiler -fopenmp "$OUT/tmp/omp.cu" -o "$OUT/tmp/omp" >/dev/null 2>&1; then
  OMPFLAGS="-Xcompiler -fopenmp"
else
  OMPFLAGS="-I$COMPAT/omp"
fi
# libcudart.so for the cms program's g++ link steps (its Makefile links with g++ -lcudart).
NVCC_DIR=$(dirname "$(readlink -f "$NVCC")")
CUDA_LIB=${CUDA_LIB:-}
if [ -z "$CUDA_LIB" ]; then
  for d in "$NVCC_DIR/../lib64" "$NVCC_DIR/../lib" "$NVCC_DIR/../targets/x86_64-linux/lib" /usr/local/cuda/lib64; do
    if ls "$d"/libcudart.so* >/dev/null 2>&1; then CUDA_LIB=$(readlink -f "$d"); break; fi
  done
fi
if [ -n "$CUDA_LIB" ] && [ ! -e "$CUDA_LIB/libcudart.so" ]; then   # only libcudart.so.NN: give it a link name
  mkdir -p "$OUT/lib"; ln -sf "$(ls "$CUDA_LIB"/libcudart.so.* | head -1)" "$OUT/lib/libcudart.so"
  for f in "$CUDA_LIB"/libcudadevrt.a; do [ -e "$f" ] && ln -sf "$f" "$OUT/lib/"; done
  CUDA_LIB_LINK="$OUT/lib"
else
  CUDA_LIB_LINK="$CUDA_LIB"
fi
export HERE OUT COMPAT NVCC OMPFLAGS CUDA_LIB CUDA_LIB_LINK RUN_TIMEOUT T0 DEADLINE
{
  echo "nvcc: $NVCC ($("$NVCC" --version | tail -1))"
  echo "gpu: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "OMPFLAGS=$OMPFLAGS CUDA_LIB=$CUDA_LIB CUDA_LIB_LINK=$CUDA_LIB_LINK JOBS=$JOBS RUN_JOBS=$RUN_JOBS"
} > "$OUT/env.txt"
cat "$OUT/env.txt"

# --- inputs -------------------------------------------------------------------------
# size-dependent compile flags (md, bfs) and run arguments
size_flags() {  # prog size
  case "$1:$2" in
    md:small)  echo "-DW=512 -DH=512 -DMAX_DWELL=512 -DMAX_DEPTH=5 -DMIN_SIZE=8" ;;
    md:medium) echo "-DW=2048 -DH=2048 -DMAX_DWELL=512 -DMAX_DEPTH=5 -DMIN_SIZE=8" ;;
    bfs*:small)  echo "-DBFS_GRID_SIZE=1600" ;;
    bfs*:medium) echo "-DBFS_GRID_SIZE=2048" ;;
    *) echo "" ;;
  esac
}
build_size() {  # prog size -> the size the build depends on ("any" when it does not)
  case "$1" in md|bfs|bfsR) echo "$2" ;; *) echo any ;; esac
}
sizes_of() { case "$1" in cms|cpos) echo only ;; *) echo "small medium" ;; esac; }
run_args() {  # prog size
  case "$1:$2" in
    at:small)   echo "1 1024 1024 -1.5 0.5 -1.0 1.0 512 32 16 4 5 out" ;;
    at:medium)  echo "1 2048 2048 -1.5 0.5 -1.0 1.0 512 8 16 4 5 out" ;;
    sbr:small)  echo "1024 1024 512 32 16 4 5" ;;
    sbr:medium) echo "2048 2048 512 8 16 4 5" ;;
    *) echo "" ;;
  esac
}
export -f size_flags build_size sizes_of run_args

# --- build --------------------------------------------------------------------------
build_one() {  # prog site variant file bsize
  local prog=$1 site=$2 var=$3 file=$4 bsize=$5
  local id="${prog}__${site}__${var}__${bsize}"
  local B="$OUT/build/$id"
  rm -rf "$B"; mkdir -p "$B"; cp -r "$HERE/prog/$prog/." "$B/"
  if [ "$var" != "orig" ] || [ -e "$HERE/variants/$prog/$site/$var/$file" ]; then
    cp "$HERE/variants/$prog/$site/$var/$file" "$B/$file" || { echo FAIL > "$B/BUILD_STATUS"; return; }
  fi
  local sf; sf=$(size_flags "$prog" "$bsize")
  (
    cd "$B" || exit 1
    set -e
    case "$prog" in
      md)  "$NVCC" -O3 -arch=sm_90 -rdc=true $OMPFLAGS -diag-suppress 2464 -I"$COMPAT/png" \
             -DcudaThreadSynchronize=cudaDeviceSynchronize $sf mandelbrot-dyn.cu -o app -lcudadevrt ;;
      at)  "$NVCC" -O3 -arch=sm_90 -rdc=true $OMPFLAGS -I"$COMPAT/png" -Dno -DBSX=32 -DBSY=32 -DREPEATS=1 \
             main.cu -o app -lcudadevrt ;;
      sbr) "$NVCC" -O3 -arch=sm_90 -rdc=true -I"$COMPAT/png" -DRDC_TRUE -DBSX=32 -DBSY=32 sbr_driver.cu -o app \
             -lcudadevrt ;;
      cpos) "$NVCC" -O3 -arch=sm_90 -rdc=true app.cu -o app -lcudadevrt ;;
      bfs|bfsR) "$NVCC" -std=c++20 -O3 -arch=sm_90 -rdc=true -diag-suppress 375 -Iinclude -I"$COMPAT/bfs" $sf \
             src/main.cu -o app -lcudadevrt ;;
      cms)
        F="--expt-relaxed-constexpr --expt-extended-lambda -std=c++14 -O2 --cudart=shared -arch=sm_90 -I$COMPAT/cms --compiler-options -O2,-pthread,-fPIC"
        L="-L$CUDA_LIB_LINK -lcudart -lcudadevrt -Wl,-rpath,$CUDA_LIB"
        "$NVCC" $F -dc foo.cu -o foo.o
        "$NVCC" $F -dlink foo.o -o foo_dlink.o
        g++ -O2 -pthread -fPIC --shared foo.o foo_dlink.o $L -o libfoo.so
        "$NVCC" $F -DMAY_CRASH -dc bar.cu -o bar_crash.o
        "$NVCC" $F -dlink bar_crash.o -o bar_crash_dlink.o
        g++ -O2 -pthread -fPIC --shared bar_crash.o bar_crash_dlink.o $L -o libbar_crash.so
        g++ -DMAY_CRASH -O2 -pthread -fPIC main.cc -L. -lfoo -ldl -Wl,-rpath,. $L -o app ;;
    esac
  ) > "$B/build.log" 2>&1 && echo OK > "$B/BUILD_STATUS" || echo FAIL > "$B/BUILD_STATUS"
  echo "build $(cat "$B/BUILD_STATUS") $id"
}
export -f build_one

# job lists: manifest.tsv = prog site variant file (orig rows included)
: > "$OUT/tmp/builds.txt"; : > "$OUT/tmp/runs.txt"
while IFS=$'\t' read -r prog site var file; do
  [ -z "$prog" ] && continue; case "$prog" in \#*) continue ;; esac
  for size in $(sizes_of "$prog"); do
    bs=$(build_size "$prog" "$size")
    echo "$prog $site $var $file $bs" >> "$OUT/tmp/builds.txt"
    echo "$prog $site $var $size $bs run1" >> "$OUT/tmp/runs.txt"
    [ "$var" = orig ] && echo "$prog $site $var $size $bs run2" >> "$OUT/tmp/runs.txt"
  done
done < "$HERE/manifest.tsv"
sort -u "$OUT/tmp/builds.txt" -o "$OUT/tmp/builds.txt"
echo "builds: $(wc -l < "$OUT/tmp/builds.txt"), runs: $(wc -l < "$OUT/tmp/runs.txt")"
[ "$RUN_ONLY" = 1 ] || xargs -P "$JOBS" -L 1 bash -c 'build_one "$@"' _ < "$OUT/tmp/builds.txt" > "$OUT/build.txt"
echo "builds done in $(( $(date +%s) - T0 )) s: $(grep -c '^build OK' "$OUT/build.txt") OK, $(grep -c '^build FAIL' "$OUT/build.txt") FAIL"
[ "$BUILD_ONLY" = 1 ] && exit 0

# --- run ----------------------------------------------------------------------------
run_one() {  # prog site variant size bsize tag
  local prog=$1 site=$2 var=$3 size=$4 bs=$5 tag=$6
  local B="$OUT/build/${prog}__${site}__${var}__${bs}"
  local id="${prog}__${site}__${var}__${size}__${tag}"
  local R="$OUT/run/$id"
  rm -rf "$R"; mkdir -p "$R"
  if [ $(( $(date +%s) - T0 )) -gt "$DEADLINE" ]; then
    echo "SKIPPED" > "$R/sig"; echo "-" > "$R/rc"; echo 0 > "$R/secs"; echo "run $id skipped (deadline)"; return
  fi
  if [ "$(cat "$B/BUILD_STATUS" 2>/dev/null)" != OK ]; then
    echo "BUILD_FAIL" > "$R/sig"; echo "-" > "$R/rc"; echo 0 > "$R/secs"; return
  fi
  local t0 t1 rc args; args=$(run_args "$prog" "$size")
  t0=$(date +%s%N)
  ( cd "$R" && if [ "$prog" = cms ]; then cd "$B" && LD_LIBRARY_PATH="$CUDA_LIB${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec timeout "$RUN_TIMEOUT" ./app; else
      exec timeout "$RUN_TIMEOUT" "$B/app" $args; fi ) > "$R/stdout" 2> "$R/stderr" < /dev/null
  rc=$?
  t1=$(date +%s%N)
  echo "$rc" > "$R/rc"; t1=$(( (t1 - t0) / 1000000 )); printf '%d.%03d\n' $((t1 / 1000)) $((t1 % 1000)) > "$R/secs"
  # the program's own result
  local res
  case "$prog" in
    md)  res="image $( [ -f "$R/mandelbrot.png" ] && md5sum < "$R/mandelbrot.png" | cut -c1-32 || echo none)" ;;
    at)  res="image $( [ -f "$R/out.png" ] && md5sum < "$R/out.png" | cut -c1-32 || echo none)" ;;
    sbr) res="$(grep -a 'fnv1a' "$R/stdout")" ;;
    cpos) res="$(grep -a 'mismatches' "$R/stdout")" ;;
    bfs|bfsR) res="stdout $(grep -av '\[Timer\]' "$R/stdout" | md5sum | cut -c1-32) ppm $( [ -f "$R/noise.ppm" ] && md5sum < "$R/noise.ppm" | cut -c1-32 || echo none) $(grep -a -m1 'finished after' "$R/stdout")" ;;
    cms) res="stdout $(tr '\n' '|' < "$R/stdout")" ;;
  esac
  rm -f "$R/mandelbrot.png" "$R/out.png" "$R/noise.ppm"
  # CUDA / assert errors the program printed (normalized: no numbers, no paths)
  local errs
  errs=$(cat "$R/stdout" "$R/stderr" | grep -aiE 'error|assert|fail|illegal|exceeded|abort|insufficient|invalid|cuda' | sed -E 's/[0-9]+/N/g; s#/[^ ]*/##g' | sort -u | head -5 | tr '\n' '|')
  [ "$rc" = 124 ] && echo "TIMEOUT" > "$R/sig" || echo "rc=$rc $res errs=[$errs]" > "$R/sig"
  echo "run $id rc=$rc"
}
export -f run_one
xargs -P "$RUN_JOBS" -L 1 bash -c 'run_one "$@"' _ < "$OUT/tmp/runs.txt" > "$OUT/runs.txt"

# --- compare ------------------------------------------------------------------------
{
  printf 'prog\tsite\tvariant\tsize\tstatus\trc\tsecs\tsignature\n'
  while read -r prog site var size bs tag; do
    [ "$tag" = run1 ] || continue
    R="$OUT/run/${prog}__${site}__${var}__${size}__${tag}"
    O1="$OUT/run/${prog}__orig__orig__${size}__run1/sig"; O2="$OUT/run/${prog}__orig__orig__${size}__run2/sig"
    sig=$(cat "$R/sig"); rc=$(cat "$R/rc"); secs=$(cat "$R/secs")
    if [ "$var" = orig ]; then
      if [ "$(cat "$O1")" = "$(cat "$O2")" ]; then st=ORIG; else st=ORIG_NONDET; fi
      case "$sig" in rc=0\ *) ;; *) st="$st(FAILS)";; esac
    elif [ "$sig" = BUILD_FAIL ]; then st=BUILD_FAIL
    elif [ "$sig" = TIMEOUT ]; then st=TIMEOUT
    elif [ "$sig" = SKIPPED ]; then st=SKIPPED
    elif [ "$sig" = "$(cat "$O1")" ]; then st=SAME
    else st=DIFF; fi
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$prog" "$site" "$var" "$size" "$st" "$rc" "$secs" "$sig"
  done < "$OUT/tmp/runs.txt"
} > "$OUT/results.tsv"
{
  echo "# dpopt third-party GPU check ($(date -u +%Y-%m-%dT%H:%MZ), $(( $(date +%s) - T0 )) s)"
  cat "$OUT/env.txt"
  echo
  { column -t -s $'\t' < "$OUT/results.tsv" 2>/dev/null || cat "$OUT/results.tsv"; } | cut -c1-220
  echo
  echo "not SAME:"; awk -F'\t' 'NR>1 && $5 != "SAME" && $5 !~ /^ORIG$/' "$OUT/results.tsv" | cut -f1-6,8 | cut -c1-300
  for s in SAME DIFF TIMEOUT BUILD_FAIL SKIPPED; do echo "$s: $(awk -F'\t' -v s=$s 'NR>1 && $5==s' "$OUT/results.tsv" | wc -l)"; done
  echo "originals: $(awk -F'\t' 'NR>1 && $5 ~ /^ORIG/' "$OUT/results.tsv" | cut -f1,4,5 | tr '\t\n' ' ;')"
} > "$OUT/summary.txt"
tail -7 "$OUT/summary.txt"
echo "total $(( $(date +%s) - T0 )) s; summary: $OUT/summary.txt"
