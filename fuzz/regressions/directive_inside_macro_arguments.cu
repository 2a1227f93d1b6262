#define FUZZ_DO_PRAGMA_991(x)_Pragma(#x)
FUZZ_DO_PRAGMA_991(()#pragma/**/dp)