#!/usr/bin/env bash
# Probe (GPU machine, after `bench/gpu_check.sh prepare` here; carry gpu-build): A/B of the serial version's loop
# over the child's threads, `#pragma unroll 1` (as generated) against the compiler's unrolling (the pragma lines
# removed from the same file), for the thresholded (TC t128 c8) and floor (TCF t32 c1) builds of the suite's
# examples. Each input runs new, old, new, old (interleaved), --reps 5; the figure is the mean of the two
# medians per build. Writes $OUT/serial-unroll.csv: example,input,variant,new_ms,old_ms,ratio (new/old).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
B=gpu-build
work=$(mktemp -d)
examples=${EXAMPLES:-bfs sssp bezier spmv mstf mstv sp tree_heights tree_descendants}
jobs=()
for ex in $examples; do
  for v in TC TCF; do
    [ -f "$B/src/${ex}__$v.cu" ] || continue
    sed '/^#pragma unroll 1$/d' "$B/src/${ex}__$v.cu" > "$work/${ex}__${v}_old.cu"
    cp "$B/src/${ex}__$v.cu" "$work/${ex}__${v}_new.cu"
    jobs+=("${ex}__${v}_old" "${ex}__${v}_new")
  done
done
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} sh -c '
  case {} in *TCF*) d="-DDPOPT_THRESHOLD=32 -DDPOPT_COARSEN=1" ;; *) d="" ;; esac
  '"$nvcc"' -O3 -rdc=true -arch=sm_90 -I examples $d -o '"$work"'/{} '"$work"'/{}.cu -lcudadevrt > '"$work"'/{}.log 2>&1 || echo "BUILD FAILED: {}"'
echo "$(date +%T) built"
csv=$out/serial-unroll.csv
echo "example,input,variant,new_ms,old_ms,ratio" > "$csv"
time1() { timeout 120 "$1" $2 --reps 5 2>/dev/null | grep 'impl=cdp ' | grep 'verified=yes' | grep -o 'time_ms=[0-9.]*' | cut -d= -f2; }
sed -n "/<<'INPUTS'/,/^INPUTS\$/p" bench/gpu_check.sh | sed '1d;$d' | sed "s|@DATA@|$PWD/$B/data|g" > "$work/inputs.txt"
for ex in $examples; do
  grep "^$ex|" "$work/inputs.txt" | cut -d'|' -f2 | while IFS= read -r args; do
    for v in TC TCF; do
      [ -x "$work/${ex}__${v}_new" ] && [ -x "$work/${ex}__${v}_old" ] || continue
      n1=$(time1 "$work/${ex}__${v}_new" "$args"); o1=$(time1 "$work/${ex}__${v}_old" "$args")
      n2=$(time1 "$work/${ex}__${v}_new" "$args"); o2=$(time1 "$work/${ex}__${v}_old" "$args")
      line=$(python3 -c "
import sys
a=[float(x) for x in '$n1 $n2'.split()]; b=[float(x) for x in '$o1 $o2'.split()]
if len(a)<2 or len(b)<2: print(',,'); sys.exit()
n=sum(a)/2; o=sum(b)/2; print(f'{n:.4f},{o:.4f},{n/o:.3f}')")
      echo "$ex,${args// /_},$v,$line" | tee -a "$csv"
    done
  done
done
python3 - "$csv" <<'PY'
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["ratio"]]
for v in ("TC", "TCF"):
    rs = [float(r["ratio"]) for r in rows if r["variant"] == v]
    if rs:
        print(f"{v}: geomean new/old {math.exp(sum(map(math.log, rs)) / len(rs)):.3f} over {len(rs)} inputs, min {min(rs):.3f}, max {max(rs):.3f}")
PY
