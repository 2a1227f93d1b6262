#!/usr/bin/env bash
# Probe (GPU machine; carry gpu-vendor): NVIDIA's CUDA dynamic-parallelism samples (cuda-samples,
# Samples/3_CUDA_Features/cdp*: SimpleQuicksort, Quadtree, AdvancedQuicksort with its BitonicSort, BezierTessellation,
# SimplePrint), fetched by hand into gpu-vendor/<sample>/ (not part of this repository), with stand-ins for their
# helper_cuda.h / helper_string.h in gpu-vendor/common/, and dpopt's transformed variants in gpu-vendor/<sample>/out/
# (a `#pragma dp ...` inserted before a device-side launch, transformed here). Builds the originals and every
# variant (16 at a time), runs each (60 s limit) and compares with the original: the exit status, the sample's own
# validation line, and for SimplePrint the number of blocks that printed. One line per variant:
# `variant SAMPLE NAME rc=N check=SAME|DIFF|BUILD_FAIL detail`.
# `bench/probes/vendor_samples.sh prepare` (here, after `cargo build --release`) writes the variants: the device-side
# launches are the lines below (cuda-samples at 2e41896e for SimpleQuicksort, Quadtree and SimplePrint, 306af8d2 for
# AdvancedQuicksort and BezierTessellation), each alone and, where a file has several, all at once.
set -u
cd "$(dirname "$0")/../../gpu-vendor" || exit 1
if [ "${1:-}" = prepare ]; then
  python3 - <<'PY' || exit 1
import os, subprocess
samples = {
    "cdpSimpleQuicksort": ("cdpSimpleQuicksort.cu", [114, 122]),
    "cdpQuadtree": ("cdpQuadtree.cu", [540]),
    "cdpAdvancedQuicksort": ("cdpAdvancedQuicksort.cu", [257, 272, 282, 299, 313, 320]),
    "cdpBezierTessellation": ("BezierLineCDP.cu", [104]),
    "cdpSimplePrint": ("cdpSimplePrint.cu", [92]),
}
variants = {"T128": "threshold(128)", "C8": "coarsen(8)", "bare": "", "floor": "floor", "T32floor": "threshold(32) floor",
            "Awarp": "consldt(warp)", "Ablock": "consldt(block)", "Amb8": "consldt(multiblock, 8)", "Agrid": "consldt(grid)",
            "CAwarp": "coarsen(8) consldt(warp)", "CAgrid": "coarsen(8) consldt(grid)"}
for g in ("warp", "block", "multiblock, 8", "grid"):
    variants["TCA" + g.split(",")[0]] = "threshold(128) coarsen(8) consldt(%s)" % g
dpopt = os.path.abspath("../target/release/dpopt")
done = refused = 0
for s, (name, lines) in samples.items():
    src = open(os.path.join(s, name)).read().split("\n")
    os.makedirs(os.path.join(s, "out"), exist_ok=True)
    sets = [("L%d" % l, [l]) for l in lines] + ([("ALL", lines)] if len(lines) > 1 else [])
    for site, at in sets:
        for v, clauses in variants.items():
            text = []
            for i, line in enumerate(src, start=1):
                if i in at:
                    text.append((line[: len(line) - len(line.lstrip())] + "#pragma dp " + clauses).rstrip())
                text.append(line)
            tmp = os.path.join(s, "out", "in.cu")
            open(tmp, "w").write("\n".join(text))
            extra = ["--child-source", os.path.join(s, "cdpBitonicSort.cu")] if s == "cdpAdvancedQuicksort" else []
            out = os.path.join(s, "out", "%s_%s_%s.cu" % (name[:-3], site, v))
            r = subprocess.run([dpopt, "transform", "-I", s, *extra, tmp, "-o", out], capture_output=True)
            done, refused = (done + 1, refused) if r.returncode == 0 else (done, refused + 1)
            if r.returncode not in (0, 1):
                print("dpopt failed (%d) on %s" % (r.returncode, out))
            os.remove(tmp)
print("variants: %d transformed, %d refused" % (done, refused))
PY
  exit 0
fi
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
B=$(mktemp -d)
flags=(-O3 -rdc=true -arch=sm_90 -I common)
$nvcc "${flags[@]}" -I cdpAdvancedQuicksort -c cdpAdvancedQuicksort/cdpBitonicSort.cu -o $B/bitonic.o || exit 1
build() {  # sample source binary (run by xargs in a new shell: its settings are its own)
  local s=$1 src=$2 bin=$3 extra=() link=() flags=(-O3 -rdc=true -arch=sm_90 -I common)
  [ "$s" = cdpQuadtree ] && extra=(-include thrust/tuple.h -include thrust/generate.h -include thrust/iterator/zip_iterator.h)
  [ "$s" = cdpAdvancedQuicksort ] && link=($B/bitonic.o)
  $nvcc "${flags[@]}" -I $s "${extra[@]}" -c $src -o $bin.o > $bin.log 2>&1 &&
    $nvcc "${flags[@]}" $bin.o "${link[@]}" -o $bin -lcudadevrt >> $bin.log 2>&1
}
export -f build; export nvcc B
jobs=()
for s in cdpSimpleQuicksort cdpQuadtree cdpAdvancedQuicksort cdpBezierTessellation cdpSimplePrint; do
  main=$(ls $s/*.cu | grep -v BitonicSort | head -n1)
  jobs+=("$s $main $B/${s}__orig")
  for v in $s/out/*.cu; do jobs+=("$s $v $B/${s}__$(basename $v .cu)"); done
done
printf '%s\n' "${jobs[@]}" | xargs -P 16 -L 1 bash -c 'build "$0" "$1" "$2"' 2>/dev/null
summary() {  # sample log: what to compare
  case $1 in
    cdpSimplePrint) echo "blocks=$(grep -c 'BLOCK' $2)";;
    *) grep -iE 'valid|results|ok|fail|pass|error' $2 | grep -v 'GPU device' | tr -d '\r' | tr '\n' ' ';;
  esac
}
for job in "${jobs[@]}"; do
  set -- $job; s=$1; bin=$3; name=$(basename $bin); name=${name#${s}__}
  if [ ! -x $bin ]; then echo "variant $s $name rc=- check=BUILD_FAIL $(head -c 300 $bin.log | tr '\n' ' ')"; continue; fi
  ( cd $s && timeout 60 $bin > $bin.out 2>&1 ); rc=$?
  got="$(summary $s $bin.out)"
  if [ "$name" = orig ]; then eval "ref_$s=\"\$got\""; ref_rc=$rc; eval "refrc_$s=$rc"; echo "original $s rc=$rc $got"; continue; fi
  eval "want=\"\$ref_$s\""; eval "wantrc=\$refrc_$s"
  if [ "$got" = "$want" ] && [ $rc = $wantrc ]; then c=SAME; else c=DIFF; fi
  echo "variant $s $name rc=$rc check=$c $got"
done
