#!/usr/bin/env bash
# How fast `dpopt transform` is, against another build of dpopt (e.g. one of
# an earlier commit: `git worktree add /tmp/base <rev> && cargo build
# --release --manifest-path /tmp/base/Cargo.toml`).
#
#   bash bench/transform_speed.sh BASE_DPOPT [NEW_DPOPT]
#
# Inputs: every example, the BFS example at each aggregation granularity, and
# a generated file of 1,000 annotated sites. Per input it prints the
# instructions each build executes (valgrind's callgrind: deterministic, so
# small differences are real) and the median wall time of 7 runs.
set -euo pipefail
base=${1:?usage: transform_speed.sh BASE_DPOPT [NEW_DPOPT]}
new=${2:-target/release/dpopt}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

inputs=("$root"/examples/*.cu)
for g in warp block "multiblock, 8" grid; do
    f="$work/bfs_${g%%,*}.cu"
    sed "s/#pragma dp threshold(128) coarsen(8)/#pragma dp threshold(128) coarsen(8) consldt($g)/" \
        "$root/examples/bfs.cu" >"$f"
    inputs+=("$f")
done
python3 - "$work/sites1000.cu" <<'EOF'
import sys
parts = ["__global__ void child(int *a, int n) {\n  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) a[i] = i;\n}\n"]
for k in range(1000):
    parts.append(f"__global__ void parent_{k}(int *a, const int *sizes) {{\n  int n = sizes[threadIdx.x + {k}];\n"
                 "#pragma dp threshold(64) coarsen(2)\n  child<<<(n + 31) / 32, 32>>>(a, n);\n}\n")
open(sys.argv[1], "w").write("".join(parts))
EOF
inputs+=("$work/sites1000.cu")

instructions() {
    if command -v valgrind >/dev/null; then
        valgrind --tool=callgrind --callgrind-out-file=/dev/null "$1" transform "$2" -o "$work/out.cu" 2>&1 \
            | awk '/refs:/ { gsub(",", "", $NF); print $NF }'
    else
        echo 0
    fi
}

wall_ms() {
    python3 - "$1" "$2" "$work/out.cu" <<'EOF'
import subprocess, sys, time, statistics
times = []
for _ in range(7):
    t = time.perf_counter()
    subprocess.run([sys.argv[1], "transform", sys.argv[2], "-o", sys.argv[3]], check=True, capture_output=True)
    times.append(time.perf_counter() - t)
print(f"{statistics.median(times) * 1000:.2f}")
EOF
}

printf '%-22s %14s %14s %7s %9s %9s %7s\n' input base_instr new_instr ratio base_ms new_ms ratio
for f in "${inputs[@]}"; do
    bi=$(instructions "$base" "$f")
    ni=$(instructions "$new" "$f")
    bt=$(wall_ms "$base" "$f")
    nt=$(wall_ms "$new" "$f")
    python3 -c "
import sys
n, bi, ni, bt, nt = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
r = f'{ni / bi:.3f}' if bi else '-'
print(f'{n:<22} {bi:>14} {ni:>14} {r:>7} {bt:>9.2f} {nt:>9.2f} {nt / bt:>7.3f}')
" "$(basename "$f")" "$bi" "$ni" "$bt" "$nt"
done
