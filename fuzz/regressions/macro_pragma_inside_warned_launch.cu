#define FUZZ_DP_39 _Pragma("dp")
__global__ child(){(){_Pragma("dp threshold(4)")child<<<>>FUZZ_DP_39,t>>>();}}