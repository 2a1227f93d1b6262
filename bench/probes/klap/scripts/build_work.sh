#!/bin/bash
# Build the work copy of a benchmark with a given kernel file (the original kernel.base.cu or a dpopt output).
# usage: build_work.sh BENCH KERNEL_FILE OUT_BINARY [LOG]
#   compiles the benchmark's other TUs once (cached in work/<B>/obj), compiles KERNEL_FILE, links OUT_BINARY.
#   env EXTRA_OBJS / EXTRA_LDFLAGS: added to the link (gpu_run.sh links gpu/gpu_status.o this way).
# exit: 0 linked; 2 another TU failed; 3 the kernel file failed to compile; 4 the link failed
source "$(dirname "${BASH_SOURCE[0]}")/env.sh"
B=$1; K=$(realpath -m "$2"); OUT=$(realpath -m "$3"); LOG=$(realpath -m "${4:-/dev/stderr}")
EXTRA=""; for o in ${EXTRA_OBJS:-}; do EXTRA="$EXTRA $(realpath -m $o)"; done
W=$KLAP/work/$B; INC="-I$W -I$KLAP/_standin"
mkdir -p $W/obj
objs=""
for f in $(other_srcs $B); do
  o=$W/obj/${f%.cu}.o
  if [ ! -f $o ]; then
    (cd $W && $NVCC $NVFLAGS $INC -c $f -o $o.tmp.$$ && mv $o.tmp.$$ $o) > $W/obj/${f%.cu}.log 2>&1 \
      || { echo "other TU $f failed (see $W/obj/${f%.cu}.log)" >> $LOG; exit 2; }
  fi
  objs="$objs $o"
done
ko=${OUT}.kernel.o
(cd "$(dirname "$K")" && $NVCC $NVFLAGS $INC -c "$(basename "$K")" -o $ko) >> $LOG 2>&1 || exit 3
$NVCC $NVFLAGS -o $OUT $ko $objs $EXTRA -lcudadevrt ${EXTRA_LDFLAGS:-} >> $LOG 2>&1 || exit 4
exit 0
