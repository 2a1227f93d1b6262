#define FUZZ_DP_333 _Pragma("dp")
FUZZ_DP_\
333