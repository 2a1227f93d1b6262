/* Stand-in for <omp.h> (written for this check): the Mandelbrot programs use only
 * omp_get_wtime(). Used only where the host compiler has no OpenMP. */
#pragma once
#include <time.h>
static inline double omp_get_wtime(void) {
    struct timespec ts; clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}
