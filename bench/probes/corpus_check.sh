#!/usr/bin/env bash
# GPU check of some corpus programs (tests/corpus) or fixtures (tests/fixtures), one call: each program as
# written and in every variant tests/corpus/expected.txt marks ok, a fixture as gpu_check.sh builds it (its
# pragmas, then with each aggregation added), and T, TC and TCAb (a fixture: its pragmas, and with warp
# aggregation) again with every child serial (-DDPOPT_THRESHOLD above any child's thread count), so that both the launch
# and the serial version run. Outcomes in $OUT/summary.md; each run compared with the original's
# checksum and the program's own CPU reference.
#
#   bash bench/probes/corpus_check.sh prepare PROGRAM...   # here: needs cargo; writes gpu-build/ (only what travels)
#                                                          # PROGRAM: a corpus program's or a fixture's name
#   bash bench/probes/corpus_check.sh run                  # on the GPU (carry gpu-build)
set -euo pipefail
cd "$(dirname "$0")/../.."
case "${1:-}" in
prepare)
  shift
  [ $# -gt 0 ] || { echo "usage: $0 prepare PROGRAM..." >&2; exit 2; }
  bash bench/gpu_check.sh prepare > /dev/null
  b=gpu-build
  : > $b/selected_jobs.txt
  for prog in "$@"; do
    [ -f "tests/corpus/$prog.cu" ] || [ -f "tests/fixtures/$prog.cu" ] ||
      { echo "no tests/corpus/$prog.cu or tests/fixtures/$prog.cu" >&2; exit 2; }
    grep -E "^$prog " $b/jobs.txt >> $b/selected_jobs.txt
    # a fixture's own pragmas (dp) and with warp aggregation (dpA), every child serial
    for v in T TC TCAb dp dpA; do
      [ -f "$b/src/${prog}__$v.cu" ] && echo "$prog $v all-serial ${prog}__$v -DDPOPT_THRESHOLD=16777216" >> $b/selected_jobs.txt
    done
  done
  bash bench/gpu_check.sh keep $b/selected_jobs.txt
  ;;
run)
  JOBS=gpu-build/selected_jobs.txt STATS=0 bash bench/gpu_check.sh run
  ;;
*)
  echo "usage: $0 prepare PROGRAM... | run" >&2
  exit 2
  ;;
esac
