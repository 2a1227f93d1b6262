# Common settings (sourced by the other scripts). KLAP is the directory above scripts/.
KLAP=${KLAP:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
if [ -z "${NVCC:-}" ]; then
  if command -v nvcc >/dev/null 2>&1; then NVCC=$(command -v nvcc)
  else NVCC=/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc; fi
fi
DPOPT=${DPOPT:-/work/main/target/release/dpopt}
NVFLAGS="-O3 -rdc=true -arch=sm_90"
BENCHES="BFS BT GC MST QT SP SSSP"
# the other translation units of each benchmark (besides kernel.base.cu), from its Makefile's SRC
other_srcs() { case $1 in BFS) echo main.cu graph.cu;; BT) echo main.cu verify.cu;; GC) echo main.cu graphColoring.cu;; *) echo main.cu;; esac; }
