#define FUZZ_DO_PRAGMA_445()_Pragma__global__ child(){}__global__ t(){[]FUZZ_DO_PRAGMA_445(
)/**/%:/**/pragma/**/dp coarsen(4)/**/child<<<0,(((((((())))))))>>>();}