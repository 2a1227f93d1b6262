#!/usr/bin/env bash
# The whole GPU check in one script: generate every variant (here), then on
# the GPU machine build them in parallel, run them, verify each result
# against the CPU reference and the original CDP program, and time them.
#
#   bench/gpu_check.sh prepare        # here: needs cargo; writes gpu-build/
#   bench/gpu_check.sh run [FILTER]   # on the GPU: needs nvcc; reads gpu-build/,
#                                     # writes $OUT (or ./gpu-out) results.csv, summary.md,
#                                     # launches.csv, allocations.csv (alloc(...)), suite.csv
#   FILTER: regex over job lines "example variant config ..."; JOBS=file
#   reads job lines from another file; STATS=0 skips the -DDPOPT_STATS
#   builds and launch counts; INPUTS=regex
#   selects input lines "example|args" (e.g. INPUTS='road|s14').
#
# Variants of each example (every `#pragma dp` line replaced; bezier_alloc
# also those of alloc_variants.txt below):
#   orig  the program as written (plain CDP; nvcc ignores the pragma)
#   CDPff the program as written, its launches in fire-and-forget streams
#         (threshold 1: every child is launched, into DPOPT_DIRECT_STREAM)
#   T     threshold only      (-DDPOPT_THRESHOLD=...)
#   C     coarsening only     (-DDPOPT_COARSEN=...)
#   TC    threshold + coarsen (both macros)
#   D     a bare `#pragma dp`: the default (docs/PRAGMA.md)
#   (configs ending in -unc: built with -DDPOPT_UNCOUNTED_LAUNCHES, what the
#   count of launches against the pending-launch limit costs)
# Each binary also runs the flat (no-CDP) implementation of the example and
# its load-balanced flat version (impl=flat-lb; bench/lb_check.sh checks
# those alone, quickly).
# Examples whose launches are promoted (`#pragma dp promote`, paper 003 Sec.
# III: stream_compaction, partition) run in the paper's Fig. 10 variants
# instead (each also times the flat version):
#   orig  the CDP chain as written (a launch per step, nested)
#   P     promote(basic)              PO   promote(basic) + acquire (overlap)
#   PA    promote(aggregate), pools of 2, 8, 128 blocks (configs g2, g8, g128)
#   PAO   promote(aggregate) + acquire (overlap), the same pools
# on the paper's small, medium and large inputs (2, 25 and 3,073 steps); a
# CDP chain deeper than the device runtime nests reports
# verified=depth-limit (its launches failed with
# cudaErrorLaunchMaxDepthExceeded), expected of orig, P and PO (summary: "expected"),
# an error anywhere else. $OUT/promotion.md: throughput (elements/s) per
# variant and input, the Fig. 10 comparison.
# Fixtures (tests/fixtures) run as written, original and transformed; the
# corpus (tests/corpus) as written and in every variant expected.txt marks ok.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=gpu-build

# variant_source NAME VARIANT: transform $BUILD/tmp.cu (an example with its
# pragmas replaced) into the variant's source; false when dpopt refuses it.
variant_source() {
  if ! "$dpopt" transform "$BUILD/tmp.cu" -o "$BUILD/src/$1__$2.cu" 2> "$BUILD/tmp.err"; then
    echo "example $1: variant $2 refused by dpopt: $(grep -o 'error: .*' "$BUILD/tmp.err" | head -n1)"
    return 1
  fi
}

# variant_jobs NAME VARIANT CONFIGS: a job line per config=defines
# (example variant config source defines).
variant_jobs() {
  local c
  for c in $3; do
    echo "$1 $2 ${c%%=*} $1__$2 ${c#*=}" >> "$BUILD/jobs.txt"
  done
}

prepare() {
  cargo build --release --quiet
  local dpopt=target/release/dpopt
  rm -rf "$BUILD" && mkdir -p "$BUILD/src"
  cp -r examples/common "$BUILD/src/common"  # host code shared by examples ("common/...")
  : > "$BUILD/jobs.txt"
  # Variants of the examples: name|pragma|config=defines ... (defines joined by commas, - for none)
  cat > "$BUILD/variants.txt" <<'VARIANTS'
orig||-=-
CDPff|#pragma dp threshold(1)|ff=-
T|#pragma dp threshold(128)|t32=-DDPOPT_THRESHOLD=32 t128=- t128-unc=-DDPOPT_UNCOUNTED_LAUNCHES t512=-DDPOPT_THRESHOLD=512 t128-null=-DDPOPT_DIRECT_STREAM=0
C|#pragma dp coarsen(8)|c2=-DDPOPT_COARSEN=2 c8=-
TC|#pragma dp threshold(128) coarsen(8)|t128c8=- t128c8-unc=-DDPOPT_UNCOUNTED_LAUNCHES t32c4=-DDPOPT_THRESHOLD=32,-DDPOPT_COARSEN=4 t512c2=-DDPOPT_THRESHOLD=512,-DDPOPT_COARSEN=2 t1024c8=-DDPOPT_THRESHOLD=1024
A|#pragma dp consldt(warp)|warp=- warp-unc=-DDPOPT_UNCOUNTED_LAUNCHES warp-null=-DDPOPT_AGG_STREAM=0
TA|#pragma dp threshold(128) consldt(warp)|t128=- t512=-DDPOPT_THRESHOLD=512
CA|#pragma dp coarsen(8) consldt(warp)|c8=-
TCA|#pragma dp threshold(128) coarsen(8) consldt(warp)|t128c8=- t512c8=-DDPOPT_THRESHOLD=512 t1024c8=-DDPOPT_THRESHOLD=1024
TCAa|#pragma dp threshold(128) coarsen(8) consldt(warp) agg_threshold(4)|t128c8a4=-
Ag|#pragma dp consldt(grid)|grid=- grid-pool64=-DDPOPT_POOL_RECORDS=64
TAg|#pragma dp threshold(128) consldt(grid)|t128=- t512=-DDPOPT_THRESHOLD=512
CAg|#pragma dp coarsen(8) consldt(grid)|c8=-
TCAg|#pragma dp threshold(128) coarsen(8) consldt(grid)|t128c8=- t128c8-unc=-DDPOPT_UNCOUNTED_LAUNCHES t512c8=-DDPOPT_THRESHOLD=512 t128c8-pool64=-DDPOPT_POOL_RECORDS=64
Ab|#pragma dp consldt(block)|block=- block-p7168=-DDPOPT_PARAM_BYTES=7168
TAb|#pragma dp threshold(128) consldt(block)|t128=-
TCAb|#pragma dp threshold(128) coarsen(8) consldt(block)|t128c8=-
Am|#pragma dp consldt(multiblock, 8)|g1=-DDPOPT_GROUP=1 g8=- g64=-DDPOPT_GROUP=64 g8-pool64=-DDPOPT_POOL_RECORDS=64
TAm|#pragma dp threshold(128) consldt(multiblock, 8)|t128g8=-
CAm|#pragma dp coarsen(8) consldt(multiblock, 8)|c8g8=-
TCAm|#pragma dp threshold(128) coarsen(8) consldt(multiblock, 8)|t128c8g8=- t128c8g8-unc=-DDPOPT_UNCOUNTED_LAUNCHES t512c8g8=-DDPOPT_THRESHOLD=512 t128c8g64=-DDPOPT_GROUP=64
TCAmk|#pragma dp threshold(128) coarsen(8) consldt(multiblock, 8) threads(64) blocks(512)|t128c8g8k=-
Ak|#pragma dp consldt(warp) threads(32) blocks(8)|w-t32b8=-
Agk|#pragma dp consldt(grid) threads(128) blocks(1024)|g-t128b1024=-
TCF|#pragma dp threshold(128) coarsen(8) floor|t128c8=- t1c8=-DDPOPT_THRESHOLD=1 t32c8=-DDPOPT_THRESHOLD=32 t512c8=-DDPOPT_THRESHOLD=512 t128c8-grid=-DDPOPT_FLOOR_JOIN=0 t128c8-pdl=-DDPOPT_FLOOR_JOIN=0,-DDPOPT_FLOOR_PDL=1 t128c8-list64=-DDPOPT_FLOOR_RECORDS=64 t1c8-list64=-DDPOPT_THRESHOLD=1,-DDPOPT_FLOOR_RECORDS=64 t128c8-off=-DDPOPT_FLOOR=0
D|#pragma dp|default=-
F|#pragma dp floor|floor=- floor-pdl=-DDPOPT_FLOOR_PDL=1 floor-q16=-DDPOPT_FLOOR_QUEUE_PER_SM=16 floor-q32=-DDPOPT_FLOOR_QUEUE_PER_SM=32 floor-w1=-DDPOPT_FLOOR_QUEUE_THREADS=32 floor-w1024=-DDPOPT_FLOOR_QUEUE_THREADS=1024 floor-duo=-DDPOPT_FLOOR_QUEUE_SOLO=0
VARIANTS
  # Variants of the examples whose parents allocate per thread (alloc(...),
  # docs/PRAGMA.md "Aggregated allocations"): the allocations aggregated per
  # warp (L) or block (Lb) alone and with T+C; aggregated launches with the
  # allocations left per thread (alloc(none)). orig and TC are the per-thread
  # allocation as written; A, Ab, Am, Ag aggregate them by default.
  cat > "$BUILD/alloc_variants.txt" <<'VARIANTS'
L|#pragma dp alloc(warp)|lw=-
Lb|#pragma dp alloc(block)|lb=-
TCL|#pragma dp threshold(128) coarsen(8) alloc(warp)|t128c8=- t32c4=-DDPOPT_THRESHOLD=32,-DDPOPT_COARSEN=4
TCLb|#pragma dp threshold(128) coarsen(8) alloc(block)|t128c8=- t32c4=-DDPOPT_THRESHOLD=32,-DDPOPT_COARSEN=4
TCAn|#pragma dp threshold(128) coarsen(8) consldt(warp) alloc(none)|t128c8=-
TCAbn|#pragma dp threshold(128) coarsen(8) consldt(block) alloc(none)|t128c8=-
VARIANTS
  for ex in examples/*.cu; do
    local name; name=$(basename "$ex" .cu)
    grep -q '^[ \t]*#[ \t]*pragma[ \t]\+dp[ \t]\+promote' "$ex" && continue  # promotion variants below
    local variants=("$BUILD/variants.txt")
    [ "$name" = bezier_alloc ] && variants+=("$BUILD/alloc_variants.txt")
    cat "${variants[@]}" | while IFS='|' read -r v pragma configs; do
      if [ "$v" = orig ]; then
        cp "$ex" "$BUILD/src/${name}__orig.cu"
      else
        # Replace each pragma line (with its continuation lines) by $pragma.
        awk -v p="$pragma" 'skip { skip = /\\[ \t\r]*$/; next }
          /^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; skip = /\\[ \t\r]*$/; next } { print }' \
          "$ex" > "$BUILD/tmp.cu"
        variant_source "$name" "$v" || continue
      fi
      variant_jobs "$name" "$v" "$configs"
    done
    rm -f "$BUILD/tmp.cu" "$BUILD/tmp.err"
  done
  # Promoted examples: the launch's pragma replaced, `#pragma dp acquire`
  # kept (overlap) or blanked. name|promote pragma|overlap|config=defines ...
  cat > "$BUILD/promote_variants.txt" <<'PROMOTE'
orig||yes|-=-
P|#pragma dp promote(basic)|no|ahead2=-
PO|#pragma dp promote(basic)|yes|ahead2=-
PA|#pragma dp promote(aggregate)|no|g2=-DDPOPT_PROMOTE_POOL=2 g8=- g128=-DDPOPT_PROMOTE_POOL=128
PAO|#pragma dp promote(aggregate)|yes|g2=-DDPOPT_PROMOTE_POOL=2 g8=- g128=-DDPOPT_PROMOTE_POOL=128
PROMOTE
  for ex in examples/*.cu; do
    grep -q '^[ \t]*#[ \t]*pragma[ \t]\+dp[ \t]\+promote' "$ex" || continue
    local name; name=$(basename "$ex" .cu)
    while IFS='|' read -r v pragma overlap configs; do
      if [ "$v" = orig ]; then
        cp "$ex" "$BUILD/src/${name}__orig.cu"
      else
        awk -v p="$pragma" -v o="$overlap" '
          /^[ \t]*#[ \t]*pragma[ \t]+dp[ \t]+promote/ { print p; next }
          /^[ \t]*#[ \t]*pragma[ \t]+dp[ \t]+acquire[ \t\r]*$/ && o == "no" { print ""; next }
          { print }' "$ex" > "$BUILD/tmp.cu"
        variant_source "$name" "$v" || continue
      fi
      variant_jobs "$name" "$v" "$configs"
    done < "$BUILD/promote_variants.txt"
    rm -f "$BUILD/tmp.cu" "$BUILD/tmp.err"
  done
  # Headers of the fixtures (header_child.cuh), next to their sources as
  # nvcc looks for them; dpopt finds them with -I tests/fixtures.
  cp tests/fixtures/*.cuh "$BUILD/src/"
  for fx in tests/fixtures/*.cu; do
    local name; name=$(basename "$fx" .cu)
    local jobs_before; jobs_before=$(wc -l < "$BUILD/jobs.txt")
    cp "$fx" "$BUILD/src/${name}__orig.cu"
    "$dpopt" transform "$fx" -I tests/fixtures -o "$BUILD/src/${name}__dp.cu"
    echo "$name orig - ${name}__orig -" >> "$BUILD/jobs.txt"
    echo "$name dp as-annotated ${name}__dp -" >> "$BUILD/jobs.txt"
    # The same with warp aggregation added to every pragma, then each other
    # granularity instead of warp.
    LC_ALL=C awk 'function add() { sub(/[ \t\r]*$/, " consldt(warp)&") }
      cont { if ($0 ~ /\\[ \t\r]*$/) { print; next } add(); print; cont = 0; next }
      /^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { if ($0 ~ /\\[ \t\r]*$/) { cont = 1; print; next } add(); print; next }
      { print }' "$fx" > "$BUILD/tmp.cu"
    if "$dpopt" transform "$BUILD/tmp.cu" -I tests/fixtures -o "$BUILD/src/${name}__dpA.cu" 2>/dev/null; then
      echo "$name dpA as-annotated+warp ${name}__dpA -" >> "$BUILD/jobs.txt"
    else
      echo "fixture $name: warp aggregation refused by dpopt"
    fi
    for g in grid:G block:B multiblock,8:M; do
      sed "s/ consldt(warp)/ consldt(${g%%:*})/" "$BUILD/tmp.cu" > "$BUILD/tmpg.cu"
      if "$dpopt" transform "$BUILD/tmpg.cu" -I tests/fixtures -o "$BUILD/src/${name}__dp${g#*:}.cu" 2>/dev/null; then
        echo "$name dp${g#*:} as-annotated+${g%%[:,]*} ${name}__dp${g#*:} -" >> "$BUILD/jobs.txt"
      else
        echo "fixture $name: ${g%%:*} aggregation refused by dpopt"
      fi
    done
    rm -f "$BUILD/tmpg.cu"
    rm -f "$BUILD/tmp.cu"
    # A fixture that selects code with the preprocessor names its other
    # configuration (`// dpopt-defines: -DX ...`): every job runs in both.
    local defines; defines=$(sed -n 's|^// dpopt-defines: *||p' "$fx" | head -n1 | tr ' ' ',')
    if [ -n "$defines" ]; then
      tail -n +"$((jobs_before + 1))" "$BUILD/jobs.txt" |
        awk -v d="$defines" '{ $3 = $3 "+defines"; $5 = ($5 == "-") ? d : $5 "," d; print }' >> "$BUILD/jobs.txt"
    fi
  done
  # The corpus (tests/corpus): each program as written (orig) and in every
  # variant of tests/corpus/expected.txt (every pragma line replaced, as in
  # tests/common CORPUS_VARIANTS) that it marks `ok`, run and verified as
  # the fixtures are; headers next to the sources. A variant whose outcome
  # differs from expected.txt is reported and left out.
  cp tests/corpus/*.cuh "$BUILD/src/"
  local corpus_before; corpus_before=$(wc -l < "$BUILD/jobs.txt")
  for prog in tests/corpus/*.cu; do
    local name; name=$(basename "$prog" .cu)
    local jobs_before; jobs_before=$(wc -l < "$BUILD/jobs.txt")
    cp "$prog" "$BUILD/src/${name}__orig.cu"
    echo "$name orig - ${name}__orig -" >> "$BUILD/jobs.txt"
    while IFS='|' read -r v pragma; do
      if [ -z "$pragma" ]; then cp "$prog" "$BUILD/tmp.cu"; else
        awk -v p="$pragma" 'skip { skip = /\\[ \t\r]*$/; next }
          /^[ \t]*#[ \t]*pragma[ \t]+dp([ \t]|$)/ { print p; skip = /\\[ \t\r]*$/; next } { print }' \
          "$prog" > "$BUILD/tmp.cu"
      fi
      local expected got=ok
      expected=$(awk -v n="$name" -v v="$v" '$1 == n && $2 == v { print $3 }' tests/corpus/expected.txt)
      "$dpopt" transform "$BUILD/tmp.cu" -I tests/corpus -o "$BUILD/src/${name}__$v.cu" 2>/dev/null || got=refused
      if [ "$expected" = ok ] && [ "$got" = ok ]; then
        echo "$name $v corpus ${name}__$v -" >> "$BUILD/jobs.txt"
      elif [ "$expected" = ok-nvcc-fails ]; then
        rm -f "$BUILD/src/${name}__$v.cu"
        echo "corpus $name $v: left out (nvcc rejects dpopt's output: tests/corpus/PROBLEMS.md)"
      elif [ "$expected" != "$got" ]; then
        rm -f "$BUILD/src/${name}__$v.cu"
        echo "corpus $name $v: dpopt says $got, tests/corpus/expected.txt says ${expected:-nothing}: left out"
      fi
    done <<'CORPUS_VARIANTS'
as-annotated|
T|#pragma dp threshold(128)
C|#pragma dp coarsen(8)
TC|#pragma dp threshold(128) coarsen(8)
Aw|#pragma dp consldt(warp)
Ab|#pragma dp consldt(block)
Am|#pragma dp consldt(multiblock, 8)
Ag|#pragma dp consldt(grid)
TCAw|#pragma dp threshold(128) coarsen(8) consldt(warp)
TCAb|#pragma dp threshold(128) coarsen(8) consldt(block)
TCAm|#pragma dp threshold(128) coarsen(8) consldt(multiblock, 8)
TCAg|#pragma dp threshold(128) coarsen(8) consldt(grid)
CORPUS_VARIANTS
    rm -f "$BUILD/tmp.cu"
    local defines; defines=$(sed -n 's|^// dpopt-defines: *||p' "$prog" | head -n1 | tr ' ' ',')
    if [ -n "$defines" ]; then
      tail -n +"$((jobs_before + 1))" "$BUILD/jobs.txt" |
        awk -v d="$defines" '{ $3 = $3 "+defines"; $5 = ($5 == "-") ? d : $5 "," d; print }' >> "$BUILD/jobs.txt"
    fi
  done
  echo "corpus: $(($(wc -l < "$BUILD/jobs.txt") - corpus_before)) jobs"
  # Pools so small that nearly every launch falls back to a direct launch,
  # while those also overflow the pending-launch limit (the grid case hung
  # while pool-full launches waited for the dispatcher: docs/AGGREGATION.md).
  # Every child of the barrier fixture serial: the serial version split at
  # its barriers runs every launch (docs/PRAGMA.md, "Children with barriers").
  echo "barrier_children dp all-serial barrier_children__dp -DDPOPT_THRESHOLD=1048576" >> "$BUILD/jobs.txt"
  echo "barrier_children dpG all-serial barrier_children__dpG -DDPOPT_THRESHOLD=1048576" >> "$BUILD/jobs.txt"
  # and the callee fixture (callees run in place, a recursion split), and
  # the children whose helpers read positions (their copies taking the
  # positions run in every serial version), and the children whose loops
  # test block votes (folded per block by the serial version).
  echo "barrier_callees dp all-serial barrier_callees__dp -DDPOPT_THRESHOLD=1048576" >> "$BUILD/jobs.txt"
  echo "position_callees dp all-serial position_callees__dp -DDPOPT_THRESHOLD=1048576" >> "$BUILD/jobs.txt"
  echo "block_votes dp all-serial block_votes__dp -DDPOPT_THRESHOLD=1048576" >> "$BUILD/jobs.txt"
  echo "pending_overflow dpG pool1 pending_overflow__dpG -DDPOPT_POOL_RECORDS=1" >> "$BUILD/jobs.txt"
  echo "pending_overflow dpM pool1 pending_overflow__dpM -DDPOPT_POOL_RECORDS=1" >> "$BUILD/jobs.txt"
  # Few parents with large children past the pending-launch limit: the
  # launches that find no room are deferred (as annotated: queued, launched by
  # one thread as room frees up), run serially at once (serial: deferral
  # off), and the same variant with room for every launch (roomy), the cost
  # the fallback is compared with. Many small children deferred too (every
  # child deferred, and a queue of 16 records that fills up).
  echo "overflow_large_children dp serial overflow_large_children__dp -DDPOPT_DEFER_MIN_THREADS=2000000000" >> "$BUILD/jobs.txt"
  echo "overflow_large_children dp roomy overflow_large_children__dp -DROOM_FOR_ALL" >> "$BUILD/jobs.txt"
  echo "overflow_large_children dp stats overflow_large_children__dp -DDPOPT_STATS" >> "$BUILD/jobs.txt"
  echo "overflow_large_children dp serial-stats overflow_large_children__dp -DDPOPT_DEFER_MIN_THREADS=2000000000,-DDPOPT_STATS" >> "$BUILD/jobs.txt"
  echo "pending_overflow dp defer-all pending_overflow__dp -DDPOPT_DEFER_MIN_THREADS=1" >> "$BUILD/jobs.txt"
  echo "pending_overflow dp defer-all-q16 pending_overflow__dp -DDPOPT_DEFER_MIN_THREADS=1,-DDPOPT_DEFER_RECORDS=16" >> "$BUILD/jobs.txt"
  echo "pending_overflow dp defer-all-stats pending_overflow__dp -DDPOPT_DEFER_MIN_THREADS=1,-DDPOPT_STATS" >> "$BUILD/jobs.txt"
  # The same launch coarsened alone (no threshold): its launches that find
  # no room run the child's serial version through its out-of-line call
  # (dpopt_serial_call_child), or are deferred.
  sed 's/^#pragma dp threshold(32)$/#pragma dp coarsen(4)/' tests/fixtures/pending_overflow.cu > "$BUILD/tmp.cu"
  "$dpopt" transform "$BUILD/tmp.cu" -o "$BUILD/src/pending_overflow__dpC.cu"
  rm -f "$BUILD/tmp.cu"
  echo "pending_overflow dpC coarsen-only pending_overflow__dpC -" >> "$BUILD/jobs.txt"
  echo "pending_overflow dpC coarsen-only-stats pending_overflow__dpC -DDPOPT_STATS" >> "$BUILD/jobs.txt"
  echo "pending_overflow dpC coarsen-only-serial pending_overflow__dpC -DDPOPT_DEFER_MIN_THREADS=2000000000" >> "$BUILD/jobs.txt"
  # A program in two files: the parent's host launch is in host.cu, which
  # knows nothing of dpopt (the .extra file names the second source).
  cp tests/multi_tu/host.cu "$BUILD/src/two_files_host.cu"
  for g in orig:- dp:- warp:A block:B multiblock,8:M grid:G; do
    local tag=${g%%:*} add=${g#*:} file
    if [ "$tag" = orig ]; then
      cp tests/multi_tu/kernels.cu "$BUILD/src/two_files__orig.cu"
    else
      if [ "$add" = - ]; then cp tests/multi_tu/kernels.cu "$BUILD/tmp.cu"
      else sed "s/coarsen(2)\$/coarsen(2) consldt(${tag/,/, })/" tests/multi_tu/kernels.cu > "$BUILD/tmp.cu"; fi
      "$dpopt" transform "$BUILD/tmp.cu" -o "$BUILD/src/two_files__${tag//,/}.cu"
    fi
    file=two_files__${tag//,/}
    echo "$BUILD/src/two_files_host.cu" > "$BUILD/src/$file.extra"
    echo "two_files ${tag//,/} ${tag//,/} $file -" >> "$BUILD/jobs.txt"
  done
  # The same with the child in a third file (split_child.cu, compiled as
  # it is): the parent's file is transformed with --child-source.
  cp tests/multi_tu/split_child.cu "$BUILD/src/two_files_split_child.cu"
  for g in orig:- dp:- warp:A block:B multiblock,8:M grid:G; do
    local tag=${g%%:*} add=${g#*:} file
    if [ "$tag" = orig ]; then
      cp tests/multi_tu/split_parent.cu "$BUILD/src/two_files_split__orig.cu"
    else
      if [ "$add" = - ]; then cp tests/multi_tu/split_parent.cu "$BUILD/tmp.cu"
      else sed "s/coarsen(2)\$/coarsen(2) consldt(${tag/,/, })/" tests/multi_tu/split_parent.cu > "$BUILD/tmp.cu"; fi
      "$dpopt" transform "$BUILD/tmp.cu" --child-source tests/multi_tu/split_child.cu \
        -o "$BUILD/src/two_files_split__${tag//,/}.cu"
    fi
    file=two_files_split__${tag//,/}
    printf '%s\n' "$BUILD/src/two_files_host.cu" "$BUILD/src/two_files_split_child.cu" > "$BUILD/src/$file.extra"
    echo "two_files_split ${tag//,/} ${tag//,/} $file -" >> "$BUILD/jobs.txt"
  done
  rm -f "$BUILD/tmp.cu"
  # Inputs per example: name|arguments (one binary run per input).
  cat > "$BUILD/inputs.txt" <<'INPUTS'
bfs|--scale 14 --ef 16
bfs|--scale 16 --ef 8
bfs|--scale 16 --ef 37
bfs|--road 512
bfs|--web 325557
tree_heights|--depth 4 --outdeg 32 --sparsity 1
tree_heights|--depth 3 --outdeg 64 --sparsity 0
bezier|--lines 16384 --max-tess 1024
bezier|--lines 65536 --max-tess 256
bezier|--lines 16384 --max-tess 32
bezier|--lines 65536 --max-tess 2048
bezier_alloc|--lines 16384 --max-tess 1024
bezier_alloc|--lines 65536 --max-tess 256
bezier_alloc|--lines 16384 --max-tess 32
bezier_alloc|--lines 65536 --max-tess 2048
sssp|--scale 14 --ef 16
sssp|--scale 16 --ef 8
sssp|--scale 16 --ef 37
sssp|--road 512
sssp|--web 325557
spmv|--rows 65536 --max-row 4096
spmv|--rows 262144 --max-row 1024
tc|--scale 14 --ef 16
tree_descendants|--depth 4 --outdeg 32 --sparsity 1
sp|--vars 10000 --clauses 210000 --k 5
sp|--cnf @DATA@/random-42000-10000-3.cnf
mstf|--scale 14 --ef 16
mstf|--gr @DATA@/rmat12.sym.gr
mstv|--scale 14 --ef 16
mstv|--gr @DATA@/rmat12.sym.gr
sssp|--gr @DATA@/rmat12.sym.gr
spmv|--mtx @DATA@/bcsstk13.mtx
stream_compaction|--n 16384
stream_compaction|--n 204800
stream_compaction|--n 25174016
partition|--n 16384
partition|--n 204800
partition|--n 25174016
INPUTS
  # Real inputs of the papers (../shared/data), carried with gpu-build/.
  mkdir -p "$BUILD/data"
  for f in rmat12.sym.gr random-42000-10000-3.cnf bcsstk13.mtx; do
    cp "../shared/data/$f" "$BUILD/data/" 2>/dev/null || echo "missing ../shared/data/$f: its inputs will fail"
  done
  echo "prepared $(wc -l < "$BUILD/jobs.txt") jobs in $BUILD/"
}

# Run a binary with a time limit; when it hangs, record what the GPU is doing
# (busy: something spins; idle: nothing can run) before killing it.
run_watched() {
  stdbuf -oL -eL "$@" &
  local pid=$! waited=0 limit=$(( ${RUN_TIMEOUT:-60} * 10 ))
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$waited" -ge "$limit" ]; then
      echo "HANG after ${RUN_TIMEOUT:-60}s: $(nvidia-smi --query-gpu=utilization.gpu,power.draw,clocks.sm --format=csv,noheader)" >&2
      sleep 2
      echo "HANG +2s: $(nvidia-smi --query-gpu=utilization.gpu,power.draw,clocks.sm --format=csv,noheader)" >&2
      kill -9 "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
      return 124
    fi
    sleep 0.1; waited=$((waited + 1))
  done
  wait "$pid"
}

run() {
  local filter=${1:-}
  local out=${OUT:-gpu-out}
  mkdir -p "$out" "$BUILD/bin"
  local nvcc=${NVCC:-nvcc}
  command -v "$nvcc" >/dev/null || nvcc=/usr/local/cuda/bin/nvcc
  local gpu; gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n1 | tr ',' ' ')
  echo "GPU: $gpu; nvcc: $("$nvcc" --version | tail -n1)"
  echo "$(date +%T) building"
  # Build every (source, defines) pair in parallel.
  grep -E "${filter:-.}" "${JOBS:-$BUILD/jobs.txt}" > "$BUILD/selected.txt" || true
  # Each example is also built with -DDPOPT_STATS (suffix __stats) to count
  # launches, unless STATS=0.
  { awk '{print $4, $5, $3}' "$BUILD/selected.txt"
    if [ "${STATS:-1}" != 0 ]; then
      { grep -E "^($(ls examples | sed -n 's/\.cu$//p' | paste -sd'|')) " "$BUILD/selected.txt" || true; } |
        awk '{print $4, $5 ",-DDPOPT_STATS", $3 "__stats"}'
    fi
  } | sort -u | \
    xargs -P "$(nproc)" -n 3 sh -c '
      src=$0; defs=$1; cfg=$2; bin='"$BUILD"'/bin/${src}__${cfg}
      flags=$(echo "$defs" | tr "," " " | sed "s/^- //; s/^-$//")
      extra=$(cat '"$BUILD"'/src/$src.extra 2>/dev/null || true)
      '"$nvcc"' -O3 -rdc=true -arch=sm_90 $flags -o "$bin" '"$BUILD"'/src/$src.cu $extra -lcudadevrt \
        > "$bin.log" 2>&1 || { echo "BUILD FAILED: $src $cfg"; cat "$bin.log"; }'
  echo "$(date +%T) built $(ls "$BUILD"/bin | grep -vc '\.log$') binaries"
  echo "example,input,variant,config,impl,time_ms,verified,checksum,launch_failures,exit,gpu" > "$out/results.csv"
  while read -r example variant config src defs; do
    local bin="$BUILD/bin/${src}__${config}"
    local inputs; inputs=$(grep "^$example|" "$BUILD/inputs.txt" | grep -E -- "${INPUTS:-.}" | cut -d'|' -f2 | sed "s|@DATA@|$PWD/$BUILD/data|g" || true)
    [ -n "$inputs" ] || inputs="-"
    while IFS= read -r args; do
      [ "$args" = "-" ] && args=""
      local log="$out/run.log" rc=0
      if [ -x "$bin" ]; then
        # shellcheck disable=SC2086
        run_watched "$bin" $args > "$BUILD/last.txt" 2>&1 || rc=$?
      else
        echo "missing binary" > "$BUILD/last.txt"; rc=127
      fi
      { echo "### $example $variant $config [$args] exit=$rc"; cat "$BUILD/last.txt"; } >> "$log"
      echo "$(date +%T) $example $variant $config [$args] exit=$rc $(grep -c '^result .*verified=yes' "$BUILD/last.txt" || true) verified"
      if ! grep -q '^result ' "$BUILD/last.txt"; then
        echo "$example,${args// /_},$variant,$config,none,,no,,,$rc,$gpu" >> "$out/results.csv"
      fi
      { grep '^result ' "$BUILD/last.txt" || true; } | while read -r _ rest; do
        declare -A f=()
        for kv in $rest; do f[${kv%%=*}]=${kv#*=}; done
        echo "$example,${f[input]},$variant,$config,${f[impl]},${f[time_ms]},${f[verified]},${f[checksum]},${f[launch_failures]},$rc,$gpu"
      done >> "$out/results.csv"
    done <<< "$inputs"
  done < "$BUILD/selected.txt"
  if [ "${STATS:-1}" != 0 ]; then count_launches "$out"; else
    echo "example,input,variant,config,launch_requests,serialized,direct,aggregated,parents_aggregated,fallbacks,device_launches" > "$out/launches.csv"; fi
  summarize "$out"
  suite_csv "$out"
  promotion_table "$out"
}

# The suite's CSV: one row per (benchmark, input, variant, configuration,
# implementation) with the median kernel time, the device-side launches of
# the cdp implementation (from the -DDPOPT_STATS build), the verdict and the
# GPU's name. `dpopt-report` turns such files into tables and plots.
suite_csv() {
  local out=$1
  awk -F, '
    FNR == 1 { file++; next }
    file == 1 { launches[$1 "," $2 "," $3 "," $4] = $11; next }
    $3 == "orig" && $5 == "cdp" && $7 == "yes" { ref[$1 "," $2] = $8 }
    $3 == "orig" && $5 == "flat" { flat[$1 "," $2] = $8 }
    { rows[++n] = $0 }
    END {
      print "benchmark,input,variant,config,impl,time_ms,device_launches,verified,gpu"
      for (k = 1; k <= n; k++) {
        split(rows[k], c, ",")
        key = c[1] "," c[2]
        if (!(key in ref) && key in flat) ref[key] = flat[key]
        same = ((c[5] == "flat" || c[5] == "flat-lb") && c[1] == "bezier") || (key in ref && c[8] == ref[key])
        ok = (c[7] == "yes" && c[10] == "0" && c[9] == "0" && same) ? "yes" : "no"
        l = (c[5] == "cdp") ? launches[c[1] "," c[2] "," c[3] "," c[4]] : ""
        printf "%s,%s,%s,%s,%s,%s,%s,%s,%s\n", c[1], c[2], c[3], c[4], c[5], c[6], l, ok, c[11]
      }
    }' "$out/launches.csv" "$out/results.csv" > "$out/suite.csv"
  echo "suite CSV: $out/suite.csv ($(($(wc -l < "$out/suite.csv") - 1)) rows)"
}

# Device-side launches of the last run of each example variant: the original
# program's launch statements executed, and what dpopt's code did with them.
count_launches() {
  local out=$1
  echo "example,input,variant,config,launch_requests,serialized,direct,aggregated,parents_aggregated,fallbacks,device_launches" > "$out/launches.csv"
  echo "example,input,variant,config,alloc_requests,shared_allocations,own_allocations" > "$out/allocations.csv"
  while read -r example variant config src defs; do
    local bin="$BUILD/bin/${src}__${config}__stats"
    [ -x "$bin" ] || continue
    local inputs; inputs=$(grep "^$example|" "$BUILD/inputs.txt" | grep -E -- "${INPUTS:-.}" | cut -d'|' -f2 | sed "s|@DATA@|$PWD/$BUILD/data|g" || true)
    while IFS= read -r args; do
      # shellcheck disable=SC2086
      timeout "${RUN_TIMEOUT:-60}" stdbuf -oL "$bin" $args --reps 1 > "$BUILD/stats.txt" 2>&1 || true
      awk -v e="$example" -v i="${args// /_}" -v v="$variant" -v c="$config" '
        /^result / && !named { for (k = 2; k <= NF; k++) if ($k ~ /^input=/) { i = substr($k, 7); named = 1 } }
        /^stats example=/ { split($3, kv, "="); req = kv[2]; s = d = a = p = f = 0; n = 0 }
        /^dpopt_stats / { for (k = 3; k <= NF; k++) { split($k, kv, "="); x[kv[1]] = kv[2] }
                          s += x["serialized"]; d += x["direct"]; a += x["aggregated"]; p += x["parents_aggregated"]; f += x["fallbacks"]; n++ }
        # A promoted chain: its grids (steps or the pool) and its launches made directly.
        /^dpopt_promote / { for (k = 3; k <= NF; k++) { split($k, kv, "="); y[kv[1]] = kv[2] }
                            d += y["grids"] + y["direct"]; f += y["direct"]; n++ }
        END { if (req == "") exit; launches = (n == 0) ? req : d + a
              printf "%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s\n", e, i, v, c, req, s, d, a, p, f, launches }' \
        "$BUILD/stats.txt" >> "$out/launches.csv"
      # Aggregated allocations (alloc(...)): the allocation calls, the shared
      # allocations made and the calls that allocated on their own (of the
      # last implementation run, the cdp one).
      awk -v e="$example" -v i="${args// /_}" -v v="$variant" -v c="$config" '
        /^dpopt_alloc / { for (k = 2; k <= NF; k++) { split($k, kv, "="); x[kv[1]] = kv[2] }; n++ }
        END { if (n) printf "%s,%s,%s,%s,%s,%s,%s\n", e, i, v, c, x["requests"], x["shared_allocations"], x["own_allocations"] }' \
        "$BUILD/stats.txt" >> "$out/allocations.csv"
    done <<< "$inputs"
  done < "$BUILD/selected.txt"
  echo "$(date +%T) counted launches: $(($(wc -l < "$out/launches.csv") - 1)) rows"
}

# Verdict per row: verified by the program itself (CPU reference), exit 0,
# no failed launches, and the same checksum as the original CDP program on
# the same input. Then a table of median kernel times.
summarize() {
  local out=$1
  awk -F, 'NR == 1 { next }
    { key = $1 "," $2; rows[NR] = $0 }
    $3 == "orig" { origran[key] = 1 }
    $3 == "orig" && $5 == "cdp" && $7 == "yes" { ref[key] = $8 }
    # Where the original CDP program cannot run (a chain deeper than CDP
    # nests), the flat version of its binary is the reference.
    $3 == "orig" && $5 == "flat" { flat[key] = $8 }
    END {
      bad = 0; n = 0; expected = 0; unref = 0
      print "| example | input | variant | config | impl | time ms | verified | same result as original | launch failures |"
      print "|---|---|---|---|---|---|---|---|---|"
      for (i = 2; i in rows || i <= NR; i++) {
        if (!(i in rows)) continue
        split(rows[i], c, ",")
        key = c[1] "," c[2]
        if (!(key in ref) && key in flat) ref[key] = flat[key]
        same = ((c[5] == "flat" || c[5] == "flat-lb") && c[1] == "bezier") ? "n/a" : ((key in ref && c[8] == ref[key]) ? "yes" : "NO")
        # A selection (REGEX) without the original of the example: the CPU
        # reference alone decides, and the summary says how many.
        if (!(key in origran)) { same = "no original run"; unref++ }
        # Plain CDP (and basic promotion, a grid per step) cannot nest a chain
        # deeper than the device runtime allows: expected, and said so.
        if (c[7] == "depth-limit" && c[5] == "cdp" && c[3] ~ /^(orig|P|PO)$/) {
          expected++; n++
          printf "| %s | %s | %s | %s | %s | %s | depth-limit (expected) | n/a | %s |\n", c[1], c[2], c[3], c[4], c[5], c[6], c[9]
          continue
        }
        ok = (c[7] == "yes" && c[10] == "0" && c[9] == "0" && same != "NO")
        if (!ok) bad++
        n++
        printf "| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", c[1], c[2], c[3], c[4], c[5], c[6], c[7], same, c[9]
      }
      printf "\n%d runs, %d failed verification, %d expected failures (CDP nesting limit)\n", n, bad, expected
      if (unref) printf "%d runs compared with the CPU only: their original was not in this selection\n", unref
      print (bad == 0 ? "ALL VERIFIED" : "VERIFICATION FAILURES")
    }' "$out/results.csv" > "$out/summary.md"
  cat "$out/summary.md"
}

# The paper 003 Fig. 10 comparison: throughput (elements per second, the
# median run) of each promotion variant and configuration on each input of
# the promoted examples (flat: the best of the flat versions timed beside
# them), from results.csv: "depth-limit" where the chain is deeper than the
# variant can nest, "-" where a run was not verified (summary.md says why).
promotion_table() {
  local out=$1
  awk -F, 'NR == 1 { next }
    $1 != "stream_compaction" && $1 != "partition" { next }
    {
      n = substr($2, 2) + 0  # the input is n<elements>
      col = ($5 == "flat") ? "flat" : $3 " " $4
      key = $1 " | " $2
      if (!(key in seen)) { seen[key] = 1; cases[++nc] = key }
      if (!(col in cols)) { cols[col] = 1; order[++nk] = col }
      v = "-"
      if ($7 == "yes" && $6 + 0 > 0) v = sprintf("%.3e", n / ($6 / 1000))
      else if ($7 == "depth-limit") v = "depth-limit"
      old = ((key, col) in cell) ? cell[key, col] : ""
      if (old == "" || old == "-" || (v + 0 > old + 0 && old != "depth-limit")) cell[key, col] = v
    }
    END {
      print "Throughput (elements/s) of the promoted examples (paper 003 Fig. 10); columns: variant and configuration\n"
      printf "| example | input |"; for (k = 1; k <= nk; k++) printf " %s |", order[k]; print ""
      printf "|---|---|"; for (k = 1; k <= nk; k++) printf "---|"; print ""
      for (i = 1; i <= nc; i++) {
        printf "| %s |", cases[i]
        for (k = 1; k <= nk; k++) printf " %s |", ((cases[i], order[k]) in cell) ? cell[cases[i], order[k]] : ""
        print ""
      }
    }' "$out/results.csv" > "$out/promotion.md"
  echo "promotion throughput (elements/s): $out/promotion.md"
}

# keep JOBS: leave in $BUILD/src only the sources the jobs of file JOBS build
# (a probe's selection travels to the GPU without the rest).
keep() {
  local jobs=$1
  rm -rf "$BUILD/keep" && mkdir -p "$BUILD/keep"
  for src in $(awk '{print $4}' "$jobs" | sort -u); do mv "$BUILD/src/$src.cu" "$BUILD/keep/"; done
  rm -rf "$BUILD/src" && mv "$BUILD/keep" "$BUILD/src"
  wc -l < "$jobs"
}

case ${1:-} in
  prepare) prepare ;;
  keep) keep "$2" ;;
  run) shift; run "${1:-}" ;;
  summarize) summarize "${2:-${OUT:-gpu-out}}" ;;
  suite-csv) suite_csv "${2:-${OUT:-gpu-out}}" ;;
  promotion-table) promotion_table "${2:-${OUT:-gpu-out}}" ;;
  *) echo "usage: $0 prepare | keep JOBS | run [FILTER] | summarize [DIR] | suite-csv [DIR] | promotion-table [DIR]" >&2; exit 2 ;;
esac
