#!/bin/bash
# 1) every fetched third-party file through `dpopt transform` without a pragma: byte-identical?
# 2) the baselines (originals, as they build for sm_90) compiled and linked with their drivers.
T=/tmp/thirdparty2; D=/work/main/target/release/dpopt
NVCC=/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
O=$T/work/identity; rm -rf $O; mkdir -p $O
idt() {  # file, extra flags...
  f="$1"; shift; N=$((N+1)); b=${N}_$(basename "$f" | tr ' ' '_')
  $D transform "$f" "$@" -o "$O/$b" --message-format short 2> "$O/$b.stderr"; rc=$?
  if [ $rc != 0 ]; then r="refused: $(grep -o "dpopt::[a-z_]*" "$O/$b.stderr" | head -1)"; elif cmp -s "$f" "$O/$b"; then r=identical; else r=DIFFERENT; fi
  grep -q panicked "$O/$b.stderr" && r="$r PANIC"
  echo -e "$(realpath --relative-to=$T/prog "$f")\t$*\trc=$rc\t$r"
}
{
idt "$T/prog/pcc/chapter03/nestedReduce2.cu" -I $T/compat/common
idt "$T/prog/pcc/chapter03/nestedReduce2.cu" --migrate-sync -I $T/compat/common
idt "$T/prog/sbfs/22_dynamic_parallelism/1_DPBfsFrontier copy.cu" -I $T/compat/sbfs
idt "$T/prog/sbfs/22_dynamic_parallelism/2_DPbfs_threshold.cu" -I $T/compat/sbfs
idt "$T/prog/bsa/src/reorder_gpu.cu" -I $T/prog/bsa/include -I $T/compat/bsa
idt "$T/prog/bsa/include/reorder_gpu.cuh" -I $T/prog/bsa/include -I $T/compat/bsa
idt "$T/prog/bsa/include/definitions.h"
idt "$T/prog/rgbi/kernel.cu" -I $T/prog/rgbi -I $T/compat/rgbi
idt "$T/prog/rgbi/kernel.cu" -I $T/prog/rgbi -I $T/compat/rgbi -D TP2_RGBI_DROP_DEVICE_SYNC
idt "$T/prog/rgbi/kernel.cu" --migrate-sync -I $T/prog/rgbi -I $T/compat/rgbi
idt "$T/prog/rgbi/kernel.cu.orig" -I $T/prog/rgbi -I $T/compat/rgbi
idt "$T/prog/rgbi/python_defines.cuh"
} | tee $T/identity.tsv

# baselines
B=$T/work/base; rm -rf $B; mkdir -p $B; cd $B
NV="$NVCC -rdc=true -arch=sm_90"
$D transform --migrate-sync $T/prog/pcc/chapter03/nestedReduce2.cu -I $T/compat/common -o pcc_ms.cu --message-format short 2>pcc_ms.stderr; echo "pcc migrate-sync rc=$?"
$NV -I $T/compat/common pcc_ms.cu -o pcc -lcudadevrt && echo "pcc (migrated) builds"
$NV -I $T/compat/sbfs "$T/prog/sbfs/22_dynamic_parallelism/1_DPBfsFrontier copy.cu" $T/drivers/sbfs_main.cu -o sbfs1 -lcudadevrt && echo "sbfs1 builds"
$NV -I $T/compat/sbfs $T/prog/sbfs/22_dynamic_parallelism/2_DPbfs_threshold.cu $T/drivers/sbfs_main.cu -o sbfs2 -lcudadevrt && echo "sbfs2 builds"
$NV -I $T/prog/bsa/include -I $T/compat/bsa $T/prog/bsa/src/reorder_gpu.cu $T/drivers/bsa_main.cu -o bsa -lcudadevrt && echo "bsa builds"
$NV -I $T/prog/rgbi -I $T/compat/rgbi -DTP2_RGBI_DROP_DEVICE_SYNC -diag-suppress 174 $T/prog/rgbi/kernel.cu $T/drivers/rgbi_main.cu -o rgbi -lcudadevrt && echo "rgbi builds"
