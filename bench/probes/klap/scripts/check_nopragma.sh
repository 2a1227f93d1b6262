#!/bin/bash
# Step 3 (no pragma): every .cu of every benchmark, without a pragma, must come out of dpopt byte-identical
# (with and without --migrate-sync). Writes build/nopragma.txt.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
out=$KLAP/build/nopragma.txt; : > $out; mkdir -p $KLAP/build
for B in $BENCHES; do for f in $KLAP/work/$B/*.cu; do for m in "" "--migrate-sync"; do
  $DPOPT transform $m -I $KLAP/work/$B -I $KLAP/_standin $f -o $KLAP/build/nopragma.out 2> $KLAP/build/nopragma.err; rc=$?
  cmp -s $f $KLAP/build/nopragma.out && r=identical || r=DIFFERENT
  echo "$B/$(basename $f) [${m:-plain}] rc=$rc $r $(head -c 200 $KLAP/build/nopragma.err)" | tee -a $out
done; done; done
