// Stand-in for CUDA Samples' helper_cuda.h (not part of the KLAP repository).
#pragma once
#include <cstdio>
#include <cstdlib>
#ifndef EXIT_WAIVED
#define EXIT_WAIVED 2
#endif
