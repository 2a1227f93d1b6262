#!/usr/bin/env bash
# Probe (GPU machine; carry the two directories): A/B of two generations of the same variants, e.g. the code of
# main and of a change, generated here (`bench/gpu_check.sh prepare`, then copy gpu-build/src/EX__V.cu into
# gpu-ab/old and gpu-ab/new; carry gpu-ab and gpu-build, whose data/ the inputs use). Each EX__V.cu present in
# both is built (TCF with $TCF_DEFS, by default threshold 32 without coarsening; the others as generated) and run on the suite's inputs
# of EX: new, old, new, old, --reps 5; the figure is the mean of the two medians. Also Nsight Compute of SSSP's
# floor copy on the road grid for both, when sssp__TCF.cu is there. Writes $OUT/ab.csv
# (example,input,variant,new_ms,old_ms,ratio new/old) and $OUT/ab.txt (summary).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
A=${A:-gpu-ab/old}; B=${B:-gpu-ab/new}
work=$(mktemp -d)
jobs=()
for f in "$B"/*.cu; do
  n=$(basename "$f" .cu)
  [ -f "$A/$n.cu" ] || continue
  cp "$f" "$work/${n}_new.cu"; cp "$A/$n.cu" "$work/${n}_old.cu"
  jobs+=("${n}_new" "${n}_old")
done
printf '%s\n' "${jobs[@]}" | xargs -P "$(nproc)" -I{} sh -c '
  case {} in *__TCF_*) d="'"${TCF_DEFS:--DDPOPT_THRESHOLD=32 -DDPOPT_COARSEN=1}"'" ;; *) d="" ;; esac
  '"$nvcc"' -O3 -rdc=true -arch=sm_90 -I examples $d -o '"$work"'/{} '"$work"'/{}.cu -lcudadevrt > '"$work"'/{}.log 2>&1 || echo "BUILD FAILED: {}"'
echo "$(date +%T) built"
csv=$out/ab.csv
echo "example,input,variant,new_ms,old_ms,ratio" > "$csv"
time1() { timeout 120 "$1" $2 --reps 5 2>/dev/null | grep 'impl=cdp ' | grep 'verified=yes' | grep -o 'time_ms=[0-9.]*' | cut -d= -f2; }
sed -n "/<<'INPUTS'/,/^INPUTS\$/p" bench/gpu_check.sh | sed '1d;$d' | sed "s|@DATA@|$PWD/gpu-build/data|g" > "$work/inputs.txt"
for j in "${jobs[@]}"; do
  case $j in *_new) ;; *) continue ;; esac
  n=${j%_new}; ex=${n%%__*}; v=${n#*__}
  grep "^$ex|" "$work/inputs.txt" | cut -d'|' -f2 | while IFS= read -r args; do
    [ -x "$work/${n}_new" ] && [ -x "$work/${n}_old" ] || continue
    n1=$(time1 "$work/${n}_new" "$args"); o1=$(time1 "$work/${n}_old" "$args")
    n2=$(time1 "$work/${n}_new" "$args"); o2=$(time1 "$work/${n}_old" "$args")
    line=$(python3 -c "
import sys
a=[float(x) for x in '$n1 $n2'.split()]; b=[float(x) for x in '$o1 $o2'.split()]
if len(a)<2 or len(b)<2: print(',,'); sys.exit()
n=sum(a)/2; o=sum(b)/2; print(f'{n:.4f},{o:.4f},{n/o:.3f}')")
    echo "$ex,${args// /_},$v,$line" | tee -a "$csv"
  done
done
{
python3 - "$csv" <<'PY'
import csv, math, sys
rows = [r for r in csv.DictReader(open(sys.argv[1])) if r["ratio"]]
for v in sorted({r["variant"] for r in rows}):
    rs = [float(r["ratio"]) for r in rows if r["variant"] == v]
    print(f"{v}: geomean new/old {math.exp(sum(map(math.log, rs)) / len(rs)):.3f} over {len(rs)} inputs, min {min(rs):.3f}, max {max(rs):.3f}")
print(f"unverified or failed rows: {sum(1 for r in csv.DictReader(open(sys.argv[1])) if not r['ratio'])}")
PY
if [ -x "$work/sssp__TCF_new" ]; then
  for s in new old; do
    "$ncu" --kernel-name-base function --kernel-name "regex:^dpopt_floor_sssp_parent" --launch-skip 200 --launch-count 20 \
      --metrics gpu__time_duration.sum,smsp__inst_executed.sum "$work/sssp__TCF_$s" --road 512 --reps 1 > "$work/ncu-$s.txt" 2>&1
    awk -v s="$s" '/gpu__time_duration.sum|smsp__inst_executed.sum/ { n[$1]++; t[$1] += $NF } END { for (k in n) printf "sssp road TCF copy (%s): %s mean %.2f\n", s, k, t[k] / n[k] }' "$work/ncu-$s.txt"
  done
fi
} | tee "$out/ab.txt"
