#!/bin/bash
# tp2 GPU pack runner: cd gpu-tp2 && OUT=/some/folder bash run.sh
# Builds everything in parallel, runs baselines (twice) and variants, writes $OUT/tp2/results.tsv
# and $OUT/tp2/summary.txt. Whole run bounded by a global deadline (run.py TOTAL_S, default 530 s)
# plus a hard stop here; after a hard stop the results are rebuilt from $OUT/tp2/records.jsonl.
cd "$(dirname "$0")" || exit 1
export OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT/tp2"
rm -f "$OUT/tp2/results.tsv" "$OUT/tp2/summary.txt"
echo "[tp2] pack size: $(du -sh . | cut -f1)"
HARD=${HARD_S:-538}
timeout -k 2 "$HARD" python3 -u run.py 2>&1 | tee "$OUT/tp2/runner.log"
rc=${PIPESTATUS[0]}
if [ ! -s "$OUT/tp2/summary.txt" ]; then
  echo "[tp2] runner stopped (rc=$rc) before writing the summary; finalizing from records.jsonl"
  python3 run.py --finalize
  cat "$OUT/tp2/summary.txt"
fi
exit 0
