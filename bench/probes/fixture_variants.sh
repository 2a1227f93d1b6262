#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-dbg): builds each line of gpu-dbg/variants.txt, "NAME SOURCE.cu DEFINES...",
# (sources in gpu-dbg/, prepared here: a fixture as written or as transformed by dpopt, e.g. with pragmas
# edited) and runs each binary RUNS times (default 3) with a TIMEOUT (default 20 s): exit status, time and the
# first lines of stderr per run, so that a failing or hanging configuration of a fixture can be narrowed down
# in one call; TRACE=REGEX attaches cuda-gdb to the first hang of each matching variant (its view of the
# device on stderr). Writes $OUT/variants.txt.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
work=$(mktemp -d)
grep -v '^#' gpu-dbg/variants.txt | grep . | while read -r name src defs; do
  echo "$nvcc -O3 -rdc=true -arch=sm_90 -lineinfo -I gpu-dbg $defs -o $work/$name gpu-dbg/$src -lcudadevrt > $work/$name.log 2>&1 || echo BUILD FAILED: $name"
done | xargs -P "$(nproc)" -I{} sh -c '{}'
grep -v '^#' gpu-dbg/variants.txt | grep . | while read -r name src defs; do
  for k in $(seq "${RUNS:-3}"); do
    [ -x "$work/$name" ] || { echo "$name: not built: $(grep -m3 error "$work/$name.log")"; break; }
    "$work/$name" > "$work/o.txt" 2> "$work/e.txt" & pid=$!
    for _ in $(seq 1 "$(( ${TIMEOUT:-20} * 10 ))"); do kill -0 $pid 2>/dev/null || break; sleep 0.1; done
    if kill -0 $pid 2>/dev/null; then
      rc=hang
      # TRACE=REGEX: the first hang of each matching variant gets cuda-gdb's view of the device
      if [[ -n ${TRACE:-} && $name =~ $TRACE && ! -e $work/$name.traced ]]; then
        touch "$work/$name.traced"
        echo "=== $name: cuda-gdb on the hang" >&2
        timeout 90 cuda-gdb -q --batch -p $pid -ex 'info cuda kernels' -ex 'info cuda warps' -ex 'bt' \
          -ex 'info cuda threads' 2>&1 | grep -v '^\[New Thread\|^$' | head -c 8000 >&2
        echo "=== end" >&2
      fi
      kill -9 $pid; wait $pid 2>/dev/null
    else
      wait $pid; rc=$?
    fi
    echo "$name run $k: exit=$rc $(grep -o 'time_ms=[0-9.]* verified=[a-z]* checksum=[0-9a-f]* launch_failures=[0-9]*' "$work/o.txt") $(head -c 600 "$work/e.txt" | tr '\n' '|')"
  done
done | tee "$out/variants.txt"
