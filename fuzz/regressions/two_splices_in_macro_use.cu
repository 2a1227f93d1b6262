#define DP_PRAGMA(x)_Pragma(#x)
DP_PRAG\
\
MA(dp)