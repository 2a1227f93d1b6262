#!/usr/bin/env bash
# Where the intermittent hangs of programs that overflow the pending-launch limit come from: runs the minimal
# overflow program (bench/probes/overflow_min.cu) in several stream/fallback/limit settings, the original
# pending_overflow fixture left at the default limit, and dpopt's generated variants, RUNS times each; a run
# without a result in 8 s is a hang, and on the first hang of each binary cuda-gdb attaches and prints the
# resident kernels and the parent's threads' call stacks.
# Here: `bash bench/probes/overflow_hang_rootcause.sh prepare` (binaries into gpu-probe/rc/), or `prepare-budget`
# (the counted launches of the generated code, each also built with the count off: SPECS from its output);
# on the GPU machine (carry gpu-probe): `bash bench/probes/overflow_hang_rootcause.sh run`.
set -uo pipefail
cd "$(dirname "$0")/../.."
dir=gpu-probe/rc
nvcc_here() { "${NVCC:-.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc}" -O3 -rdc=true -arch=sm_90 -lineinfo "$@" -lcudadevrt; }
case "${1:-run}" in
prepare)
  cargo build --release --quiet
  mkdir -p "$dir"
  target/release/dpopt transform tests/fixtures/pending_overflow.cu -o "$dir/po_new.cu"
  sed 's/^\(#pragma dp .*\)$/\1 consldt(grid)/' tests/fixtures/pending_overflow.cu > "$dir/po_G.in.cu"
  target/release/dpopt transform "$dir/po_G.in.cu" -o "$dir/po_G.cu"
  [ -x "$dir/omin" ] || nvcc_here -o "$dir/omin" bench/probes/overflow_min.cu &
  nvcc_here -DDPOPT_DIRECT_STREAM=0 -o "$dir/raw" tests/fixtures/pending_overflow.cu &
  nvcc_here -o "$dir/b_new" "$dir/po_new.cu" &
  nvcc_here -DDPOPT_POOL_RECORDS=1 -o "$dir/b_g1" "$dir/po_G.cu" &
  nvcc_here -DDPOPT_POOL_RECORDS=1 -DDPOPT_STATS -o "$dir/b_g1s" "$dir/po_G.cu" &
  nvcc_here -DDPOPT_DEFER_MIN_THREADS=1 -o "$dir/b_all" "$dir/po_new.cu" &
  wait; ls -la "$dir" ;;
prepare-budget)
  # The counted launches (templates/launch_budget.cuh) against the same programs built with
  # -DDPOPT_UNCOUNTED_LAUNCHES (the count off: what the generated code did before), at every granularity.
  cargo build --release --quiet
  mkdir -p "$dir"
  po=tests/fixtures/pending_overflow.cu
  target/release/dpopt transform $po -o "$dir/po_new.cu"
  for g in warp block "multiblock, 8" grid; do
    t=$(echo "$g" | cut -c1 | tr wbmg WBMG)
    sed "s/^\(#pragma dp .*\)\$/\1 consldt($g)/" $po > "$dir/po_$t.in.cu"
    target/release/dpopt transform "$dir/po_$t.in.cu" -o "$dir/po_$t.cu"
  done
  target/release/dpopt transform tests/fixtures/header_child.cu -o "$dir/hc.cu"
  target/release/dpopt transform tests/fixtures/overflow_large_children.cu -o "$dir/olc.cu"
  j=0
  build() { nvcc_here "$@" & j=$((j + 1)); if [ $((j % ${JOBS:-2})) = 0 ]; then wait; fi; }
  for u in "" _u; do
    U=; [ -n "$u" ] && U=-DDPOPT_UNCOUNTED_LAUNCHES
    build $U -o "$dir/b_new$u" "$dir/po_new.cu"
    build $U -DDPOPT_DEFER_MIN_THREADS=1 -o "$dir/b_all$u" "$dir/po_new.cu"
    build $U -DDPOPT_POOL_RECORDS=1 -o "$dir/b_g1$u" "$dir/po_G.cu"
    build $U -o "$dir/b_G$u" "$dir/po_G.cu"
    build $U -o "$dir/b_W$u" "$dir/po_W.cu"
    build $U -o "$dir/b_B$u" "$dir/po_B.cu"
    build $U -DDPOPT_POOL_RECORDS=1 -o "$dir/b_M1$u" "$dir/po_M.cu"
    build $U -Itests/fixtures -o "$dir/hc$u" "$dir/hc.cu"
    build $U -o "$dir/olc$u" "$dir/olc.cu"
  done
  build -DDPOPT_POOL_RECORDS=1 -DDPOPT_STATS -o "$dir/b_g1s" "$dir/po_G.cu"
  wait; ls -la "$dir" ;;
run)
  export PATH=/usr/local/cuda/bin:$PATH
  cd "$dir" || exit 1
  command -v cuda-gdb || echo "no cuda-gdb"
  nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  specs=${SPECS:-"omin:40000,128,2048,0,0 omin:40000,128,2048,0,1 omin:40000,128,2048,0,2 omin:40000,128,2048,1,1 omin:40000,128,2048,2,1 omin:40000,128,65536,0,1 raw: b_new: b_g1: b_g1s: b_all:"}
  for spec in $specs; do
    b=${spec%%:*}; args=$(echo "${spec#*:}" | tr ',' ' ')
    ok=0; hang=0; other=0; traced=0; t0=$(date +%s); times=""
    for i in $(seq 1 "${RUNS:-15}"); do
      ./"$b" $args > out.txt 2>&1 & pid=$!
      for _ in $(seq 1 80); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
      if kill -0 $pid 2>/dev/null; then
        hang=$((hang + 1))
        if [ $traced = 0 ] && [[ $spec =~ ${TRACE:-.} ]]; then
          traced=1
          echo "=== $spec run $i: hang; GPU: $(nvidia-smi --query-gpu=utilization.gpu,memory.used --format=csv,noheader)"
          timeout 90 cuda-gdb -q --batch -p $pid -ex 'info cuda kernels' -ex 'info cuda sms' \
            -ex 'info cuda warps' -ex 'bt' -ex 'info cuda threads' 2>&1 | grep -v '^\[New Thread\|^$' | head -c 12000
          echo "=== end trace"
        fi
        kill -9 $pid; wait $pid 2>/dev/null
      else
        wait $pid; rc=$?
        if grep -q "verified=yes" out.txt; then ok=$((ok + 1)); times="$times $(grep -o "time_ms=[0-9.]*" out.txt | cut -d= -f2)"; else other=$((other + 1)); echo "$spec run $i rc=$rc: $(tail -n 2 out.txt | tr '\n' ' ' | cut -c1-240)"; fi
      fi
    done
    med=$(echo $times | tr " " "\n" | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]}')
    echo "$spec: ok=$ok hang=$hang other=$other median_ms=${med:-none} ($(( $(date +%s) - t0 )) s) last: $(grep result out.txt | cut -c1-200)"
  done ;;
esac
