#!/bin/bash
# Step 2b: make the buildable work copies /tmp/klap/work/<BENCH> from the verbatim sources plus
#  - lonestargpu/: the union of the LonestarGPU headers the store holds (MST: cutil_subset.h gbar.cuh kernelconfig.h;
#    SP: component.h graph.h; SSSP: common.h list.h; the store deduplicates identical files, so each benchmark's
#    lonestargpu/ directory is assumed to hold all of them) and the stand-ins of /tmp/klap/_standin/lonestargpu
#  - ports listed in /tmp/klap/ports/<BENCH>.sh (source changes needed by CUDA 13 / sm_90; see the README)
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
for B in ${1:-$BENCHES}; do
  W=$KLAP/work/$B; rm -rf $W; mkdir -p $W; cp -r $KLAP/$B/. $W/
  case $B in MST|SP|SSSP)
    mkdir -p $W/lonestargpu
    for S in MST SP SSSP; do cp -n $KLAP/$S/lonestargpu/* $W/lonestargpu/; done
    cp -n $KLAP/_standin/lonestargpu/* $W/lonestargpu/;;
  esac
  mkdir -p $W/outputs $W/inputs
  [ -f $KLAP/ports/$B.sh ] && (cd $W && KLAP=$KLAP bash $KLAP/ports/$B.sh)
done
