// Stand-in: the benchmarks include <cub/cub/cub.cuh> (an old CUB checkout); forward to the toolkit's CUB.
#pragma once
#include <cub/cub.cuh>
