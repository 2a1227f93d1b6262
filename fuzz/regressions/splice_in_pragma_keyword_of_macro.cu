#define FUZZ_DP_754 _Pragm\
a("dp")
FUZZ_DP_754