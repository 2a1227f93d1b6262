// Stand-in for cuda_launch_config.hpp (Thrust/LonestarGPU): maximum_residency only.
#pragma once
#include <cuda_runtime.h>
#include <cstddef>
template <typename KernelFunction>
inline size_t maximum_residency(KernelFunction kernel, size_t CTA_SIZE, size_t dynamic_smem_bytes)
{
    int blocks = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, (int)CTA_SIZE, dynamic_smem_bytes) != cudaSuccess || blocks < 1)
        blocks = 1;
    return (size_t)blocks;
}
