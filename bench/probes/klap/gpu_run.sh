#!/bin/bash
# Run on a machine with a GPU (sm_90, nvcc 13 on PATH or $NVCC), from /tmp/klap:
#     ./gpu_run.sh                 # every benchmark
#     ./gpu_run.sh BFS SSSP        # some of them
# Needs: bash, python3, nvcc. Does not need dpopt: it builds the dpopt outputs already made under
# variants/<B>/<site>/<variant>/out.cu (those whose result file says OK), the originals (work/<B>/kernel.base.cu),
# and the accepted probes/klap_configs/<B>_*.out.cu (consldt(warp|block|multiblock) alone).
#
# For each benchmark it
#   1. builds the original and every variant (parallel builds; logs in gpu/bin/<B>/*.log), each linked with
#      gpu/gpu_status.o, which prints "GPU_STATUS ... sync=<err> last=<err>" (device errors the benchmark ignores);
#   2. generates the inputs (gpu/inputs/), runs the original twice and each variant once per configuration,
#      in gpu/run/<B>/<name>/<cfg>/ (stdout, stderr, rc; inputs/ and outputs/ as the benchmark expects), timeout 300 s;
#   3. compares each variant's signature with the original's (see signature() below: exit code, the benchmark's own
#      verification output, GPU_STATUS, and result files where the benchmark writes them) and checks that the
#      original's own verification passed.
# Results: gpu/results.tsv (bench, variant, cfg, verdict, detail) and a summary on stdout.
#   PASS       the variant's signature equals the original's, and the original verified
#   FAIL       it differs (detail: both signatures)
#   ORIG_BAD   the original's own verification failed (or it was not deterministic): the variant is not judged
#   BUILD_FAIL / TIMEOUT
set -u
cd "$(dirname "$0")"
export KLAP=$(pwd)
source scripts/env.sh
command -v "$NVCC" >/dev/null 2>&1 || { echo "nvcc not found (set NVCC)"; exit 1; }
BENCH_LIST=${*:-$BENCHES}
G=$KLAP/gpu
JOBS=${JOBS:-$(nproc)}
TIMEOUT=${TIMEOUT:-300}
mkdir -p $G/bin $G/run $G/inputs
: > $G/results.tsv

# --- work trees, status object, inputs ------------------------------------------------------------------
scripts/setup_work.sh                                  # fresh work/<B> (upstream sources + stand-ins + ports)
$NVCC $NVFLAGS -c $G/gpu_status.cu -o $G/gpu_status.o || { echo "cannot compile gpu_status.cu"; exit 1; }
export EXTRA_OBJS=$G/gpu_status.o EXTRA_LDFLAGS="-Xlinker --wrap=cudaDeviceReset"
python3 $G/gen_inputs.py mtx $G/inputs/gc_hub.mtx 2000 1 150   # GC: max degree > 128 (children launched)
python3 $G/gen_inputs.py mtx $G/inputs/gc_flat.mtx 2000 2 0    # GC: max degree < 128 (children serialized by threshold)
python3 $G/gen_inputs.py gr  $G/inputs/graph.gr 4096 1         # MST, SSSP: 4096 nodes, hubs of 200..2500 neighbours
for s in 1 2 3 4; do python3 $G/gen_inputs.py cnf $G/inputs/sp_$s.cnf 2000 8400 $s; done   # SP candidates

# configurations: name|arguments (run in the run directory, where inputs/ holds the generated inputs)
configs() {
  case $1 in
    BFS)  echo "d200|-w 0 -r 1 -v 20000 -d 200"; echo "d20|-w 0 -r 1 -v 20000 -d 20";;
    BT)   echo "n4000|-w 0 -r 1 -n 4000";;
    GC)   echo "bcsstk13|-w 0 -r 1 -g inputs/bcsstk13.mtx"; echo "hub|-w 0 -r 1 -g inputs/gc_hub.mtx";;
    MST)  echo "rmat12|-w 0 -r 1 -g inputs/rmat12.sym.gr";;
    QT)   echo "p4000|-w 0 -r 1 -p 4000 -d 8 -m 16";;
    SP)   echo "cnf|-w 0 -r 1 -m 3 -f inputs/sp.cnf";;
    SSSP) echo "rmat12|-w 0 -r 1 -f inputs/rmat12.sym.gr"; echo "g4096|-w 0 -r 1 -f inputs/graph.gr";;
  esac
}

# run BINARY in DIR with ARGS; leaves DIR/{stdout,stderr,rc}
run_one() {
  local bin=$1 dir=$2 args=$3
  rm -rf $dir; mkdir -p $dir/outputs $dir/inputs
  for f in $G/inputs/*; do ln -s $f $dir/inputs/; done
  (cd $dir && timeout $TIMEOUT $bin $args < /dev/null > stdout 2> stderr; echo $? > rc)
}

# signature of a run: what must be equal between the original and a variant (timings excluded)
signature() {
  local B=$1 d=$2 rc st
  rc=$(cat $d/rc)
  st=$(grep -o 'GPU_STATUS .*' $d/stderr | sed 's/GPU_STATUS [^ ]* //' | head -1)
  case $B in
    BFS)  echo "rc=$rc success=$(grep -o success $d/stdout | wc -l) failed=$(grep -o failed $d/stdout | wc -l) cudaerr=$(grep -c 'error=' $d/stdout) $st";;
    BT)   echo "rc=$rc errors=$(grep -c 'Error' $d/stdout) avg=$(grep -c 'Average kernel time' $d/stdout) $st";;
    GC)   echo "rc=$rc testfailed=$(grep -c 'Test failed' $d/stderr) avg=$(grep -c 'Average kernel time' $d/stdout) $st";;
    MST)  echo "rc=$rc $(grep -o 'Overall: mstwt = [0-9]*' $d/stdout | tr '\n' ' ')$st";;
    QT)   echo "rc=$rc passed=$(grep -c passed $d/stderr) failed=$(grep -c failed $d/stderr) $st";;
    SP)   echo "rc=$rc unconverged=$(grep -c UN-CONVERGED $d/stdout) check=[$(python3 $G/sp_check.py $d/inputs/sp.cnf $d/outputs/sp_sol.dat $d/outputs/partial.cnf 2>/dev/null | head -1 | cut -d' ' -f1)] $st";;
    SSSP) echo "rc=$rc $(grep -o '#errors = [0-9]*' $d/stdout | tr '\n' ' ')dist=$(md5sum 2>/dev/null < $d/outputs/sssp-output.txt | cut -c1-12) $st";;
  esac
}

# the original's own verification (exit 0 = verified); the device must also have finished without error (sync=)
orig_ok() {
  local B=$1 d=$2 s
  s=$(signature $B $d)
  [[ $s == "rc=0 "* && $s == *" sync=cudaSuccess last="* ]] || return 1
  case $B in
    BFS)  [[ $s == *" success=1 failed=0 cudaerr=0 "* ]];;
    BT)   [[ $s == *" errors=0 avg=1 "* ]];;
    GC)   [[ $s == *" testfailed=0 avg=1 "* ]];;
    MST)  [[ $s == *"Overall: mstwt = "[0-9]*" "* ]];;
    QT)   [[ $s == *" passed=1 failed=0 "* ]];;
    SP)   [[ $s == *" unconverged=0 check=[consistent] "* ]] && [ -s $d/outputs/sp_sol.dat ];;
    SSSP) [[ $s == *"#errors = 0 dist="[0-9a-f]* ]];;
  esac
}

for B in $BENCH_LIST; do
  echo "=== $B"
  mkdir -p $G/bin/$B; rm -f $G/bin/$B/*
  # --- 1. build: "name kernel-file" pairs, in parallel ---------------------------------------------------
  { echo "orig $KLAP/work/$B/kernel.base.cu"
    for r in variants/$B/*/*/result; do
      [ -f "$r" ] || continue
      v=$(dirname $r); site=$(basename $(dirname $v)); name=$(basename $v)
      [ "$(cut -f1 $r)" = OK ] && echo "${site}_$name $KLAP/$v/out.cu"
    done
    for o in probes/klap_configs/${B}_*.out.cu; do   # extra: consldt(warp|block|multiblock) alone (KLAP's aw/ab)
      [ -f "$o" ] && echo "probe_$(basename $o .out.cu) $KLAP/$o"
    done; } > $G/bin/$B/list
  # other TUs first (once), then the kernels in parallel
  scripts/build_work.sh $B $KLAP/work/$B/kernel.base.cu $G/bin/$B/orig $G/bin/$B/orig.log; echo $? > $G/bin/$B/orig.rc
  grep -v '^orig ' $G/bin/$B/list | xargs -r -P $JOBS -L 1 bash -c \
    'scripts/build_work.sh '$B' "$1" '$G/bin/$B'/"$0" '$G/bin/$B'/"$0".log; echo $? > '$G/bin/$B'/"$0".rc'
  rm -f $G/bin/$B/*.kernel.o

  # --- 2. run ----------------------------------------------------------------------------------------------
  if [ "$(cat $G/bin/$B/orig.rc)" != 0 ]; then
    echo -e "$B\torig\t-\tBUILD_FAIL\tsee gpu/bin/$B/orig.log" | tee -a $G/results.tsv; continue
  fi
  if [ $B = SP ]; then          # pick an SP input on which the original verifies and fixes variables
    rm -f $G/inputs/sp.cnf
    for s in real 1 2 3 4; do
      ln -sf $G/inputs/sp_$s.cnf $G/inputs/sp.cnf
      run_one $G/bin/$B/orig $G/run/$B/pick_$s "-w 0 -r 1 -m 3 -f inputs/sp.cnf"
      orig_ok SP $G/run/$B/pick_$s && break
    done
    echo "SP input: $(readlink $G/inputs/sp.cnf)"
  fi
  configs $B | while IFS='|' read cfg args; do
    run_one $G/bin/$B/orig $G/run/$B/orig/$cfg "$args"
    run_one $G/bin/$B/orig $G/run/$B/orig2/$cfg "$args"
    so=$(signature $B $G/run/$B/orig/$cfg); so2=$(signature $B $G/run/$B/orig2/$cfg)
    good=1; why=""
    orig_ok $B $G/run/$B/orig/$cfg || { good=0; why="original did not verify: $so"; }
    [ "$so" = "$so2" ] || { good=0; why="original not deterministic: [$so] vs [$so2]"; }
    echo -e "$B\torig\t$cfg\t$([ $good = 1 ] && echo VERIFIED || echo ORIG_BAD)\t$so $why" | tee -a $G/results.tsv
    grep -v '^orig ' $G/bin/$B/list | while read name kfile; do
      if [ "$(cat $G/bin/$B/$name.rc)" != 0 ]; then
        echo -e "$B\t$name\t$cfg\tBUILD_FAIL\tbuild_work.sh rc=$(cat $G/bin/$B/$name.rc), see gpu/bin/$B/$name.log" | tee -a $G/results.tsv; continue
      fi
      d=$G/run/$B/$name/$cfg
      run_one $G/bin/$B/$name $d "$args"
      sv=$(signature $B $d)
      if [ "$(cat $d/rc)" = 124 ]; then verdict=TIMEOUT
      elif [ $good = 0 ]; then verdict=ORIG_BAD
      elif [ "$sv" = "$so" ]; then verdict=PASS
      else verdict=FAIL; fi
      extra=""
      [ $B = SP ] && { cmp -s $d/outputs/sp_sol.dat $G/run/$B/orig/$cfg/outputs/sp_sol.dat && extra=" (sp_sol.dat same as original)" || extra=" (sp_sol.dat differs from original: informational)"; }
      echo -e "$B\t$name\t$cfg\t$verdict\tvariant: $sv | original: $so$extra" | tee -a $G/results.tsv
    done
  done
done

echo; echo "=== summary (gpu/results.tsv)"
cut -f1,4 $G/results.tsv | sort | uniq -c
