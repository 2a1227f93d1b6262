#!/usr/bin/env bash
# Probe (GPU machine, after `bench/gpu_check.sh prepare` here; carry gpu-build): per-instruction execution counts
# (Nsight Compute's source page, SASS) of one iteration of SSSP's road grid, for the floor's copy of the parent
# (threshold 128, no coarsening, barriers kept) and for the flat kernel: which instructions the copy executes that
# the flat kernel does not. Writes $OUT/floor-sass.txt (the 45 most executed instructions of each, every instruction executed 200 times or more, and totals).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-gpu-out}; mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -n1)
work=$(mktemp -d)
"$nvcc" -O3 -rdc=true -arch=sm_90 -lineinfo -I examples -DDPOPT_THRESHOLD=128 -DDPOPT_COARSEN=1 \
  -o "$work/tcf" gpu-build/src/sssp__TCF.cu -lcudadevrt > "$work/build.txt" 2>&1 || { cat "$work/build.txt"; exit 1; }
report=$out/floor-sass.txt
: > "$report"
for k in dpopt_floor_sssp_parent sssp_flat; do
  "$ncu" --kernel-name-base function --kernel-name "regex:^$k" --launch-skip 300 --launch-count 1 \
    --section SourceCounters --import-source no -o "$work/$k" "$work/tcf" --road 512 --reps 1 > "$work/$k.log" 2>&1
  "$ncu" -i "$work/$k.ncu-rep" --page source --csv --print-source sass > "$work/$k.csv" 2>"$work/$k.err"
  echo "## $k: $(wc -l < "$work/$k.csv") SASS lines; header: $(head -n1 "$work/$k.csv" | cut -c1-400)" >> "$report"
  python3 - "$work/$k.csv" >> "$report" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
if not rows:
    print("  (empty)"); sys.exit()
# The page starts with the kernel's name; the table's header is the first row naming a Source column.
start = next((i for i, r in enumerate(rows) if any(c.strip() == "Source" for c in r)), 0)
head, rows = rows[start], rows[start:]
def col(*names):
    for n in names:
        for i, h in enumerate(head):
            if h.strip().lower() == n.lower():
                return i
    return None
src = col("Source")
ex = col("Instructions Executed", "Warp Instructions Executed", "inst_executed", "Warp Instructions Executed (Instructions Executed)")
if ex is None:
    ex = next((i for i, h in enumerate(head) if "nstructions Executed" in h), None)
addr = col("Address")
if src is None or ex is None:
    print("  columns:", head[:30]); print(rows[1][:30] if len(rows) > 1 else ""); sys.exit()
data = []
for r in rows[1:]:
    try:
        data.append((float(r[ex].replace(",", "")), r[addr] if addr is not None else "", r[src]))
    except (ValueError, IndexError):
        pass
total = sum(d[0] for d in data)
print(f"  total warp instructions executed: {total:.0f} over {len(data)} SASS instructions")
for n, a, s in sorted(data, key=lambda d: -d[0])[:45]:
    print(f"  {n:9.0f}  {a:>6}  {s}")
print("  -- in address order, executed by at least 200 warps:")
for n, a, s in data:
    if n >= 200:
        print(f"  {n:9.0f}  {a:>6}  {s}")
PY
done
cat "$report"
