#!/usr/bin/env bash
# Install a real nvcc (CUDA 13, compile-only: no GPU needed) from PyPI into
# .venv-nvcc/, with CMake, and print nvcc's path. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=.venv-nvcc
find_nvcc() { ls "$venv"/lib/python3*/site-packages/nvidia/cu13/bin/nvcc 2>/dev/null | head -n1; }
if [ -z "$(find_nvcc)" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check \
    nvidia-cuda-nvcc nvidia-cuda-runtime nvidia-cuda-crt nvidia-cuda-cccl >&2
fi
# CMake (tests/cmake.rs builds examples/cmake with it; cmake/dpopt.cmake).
if [ ! -x "$venv/bin/cmake" ]; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check cmake >&2
fi
nvcc=$(find_nvcc)
[ -x "$nvcc" ] || { echo "nvcc was not installed" >&2; exit 1; }
echo "$nvcc"
