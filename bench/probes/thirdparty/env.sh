export NVCC=/work/main/.venv-nvcc/lib/python3.11/site-packages/nvidia/cu13/bin/nvcc
export DPOPT=/work/main/target/release/dpopt
export TP=/tmp/thirdparty
export CUDA_LIB=/tmp/thirdparty/locallib
