/* Stand-in for cudaCheck.h, which cms-patatrack/test-dynamic-parallelism includes but
 * does not contain (written for this check; the message format follows the repository's
 * README: "bar.cu, line 24: cudaErrorInvalidDeviceFunction: invalid device function"). */
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
inline void cudaCheck_(cudaError_t result, const char *file, int line) {
    if (result != cudaSuccess) {
        std::printf("%s, line %d: %s: %s\n", file, line, cudaGetErrorName(result), cudaGetErrorString(result));
        std::fflush(stdout);
        std::exit(EXIT_FAILURE);
    }
}
#define cudaCheck(ARG) cudaCheck_((ARG), __FILE__, __LINE__)
