#define FUZZ_DO_PRAGMA_270(x)_Pragma(#x)
FUZZ_DO_PRAGMA_270(d\
p)