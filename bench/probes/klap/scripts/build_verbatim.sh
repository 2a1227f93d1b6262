#!/bin/bash
# Step 2a: build each benchmark exactly as stored (kernel.base.cu + the Makefile's SRC), CUDA 13, sm_90.
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
for B in ${1:-$BENCHES}; do
  D=$KLAP/build/verbatim/$B; rm -rf $D; mkdir -p $D; cp -r $KLAP/$B/. $D/; cd $D
  ok=1
  for f in kernel.base.cu $(other_srcs $B); do
    $NVCC $NVFLAGS -I. -c $f -o ${f%.cu}.o > ${f%.cu}.log 2>&1 || { ok=0; echo "$B: $f FAILED"; }
  done
  if [ $ok = 1 ]; then
    $NVCC $NVFLAGS -o $B.orig kernel.base.o $(for f in $(other_srcs $B); do echo ${f%.cu}.o; done) -lcudadevrt > link.log 2>&1 && echo "$B: linked" || echo "$B: link FAILED"
  fi
done
