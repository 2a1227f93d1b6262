#define DP_PRAGMA(x)_Pragma(#x)
DP_PRAGMA(dp)