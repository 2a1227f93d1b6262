#!/usr/bin/env bash
# Set up and run dpopt on a shipped example: install nvcc (pip, no GPU
# needed), build dpopt, transform examples/bfs.cu, compile the result for
# sm_90, and run it when a GPU is present.
set -euo pipefail
cd "$(dirname "$0")/.."
nvcc=$(bash scripts/setup-nvcc.sh)
cargo build --release --quiet
mkdir -p target/demo
./target/release/dpopt check examples/bfs.cu
./target/release/dpopt transform examples/bfs.cu -o target/demo/bfs.dp.cu
"$nvcc" -O3 -rdc=true -arch=sm_90 -I examples -o target/demo/bfs target/demo/bfs.dp.cu -lcudadevrt  # -I: examples/common
echo "built target/demo/bfs from target/demo/bfs.dp.cu"
if command -v nvidia-smi >/dev/null && nvidia-smi >/dev/null 2>&1; then
  ./target/demo/bfs
else
  echo "no GPU here: run target/demo/bfs on a machine with an sm_90 GPU (or bench/gpu_check.sh for every variant)"
fi
