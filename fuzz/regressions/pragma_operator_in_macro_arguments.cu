#define FUZZ_DO_PRAGMA_689(x)_Pragma(#x)
FUZZ_DO_PRAGMA_689((())_Pragma("dp"))