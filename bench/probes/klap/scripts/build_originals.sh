#!/bin/bash
# Step 2c: build every benchmark's original (work copy: stand-ins + ports) into build/orig/<B>.orig
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
mkdir -p $KLAP/build/orig
for B in ${1:-$BENCHES}; do
  rm -f $KLAP/build/orig/$B.log
  $KLAP/scripts/build_work.sh $B $KLAP/work/$B/kernel.base.cu $KLAP/build/orig/$B.orig $KLAP/build/orig/$B.log; echo "$B: build_work.sh rc=$?"
  rm -f $KLAP/build/orig/$B.orig.kernel.o
done
